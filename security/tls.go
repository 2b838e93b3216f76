package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/connect-init/connect-init/workerconfig"
)

// Kafka client defaults (clients/.../config/SslConfigs.java, 3.x and 4.x).
const (
	defaultSSLProtocol         = "TLSv1.3"
	defaultSSLEnabledProtocols = "TLSv1.2,TLSv1.3"
	defaultEndpointAlgorithm   = "https"
)

func cfgErr(prop, problem, value, fix string) *workerconfig.Error {
	return &workerconfig.Error{Property: prop, Problem: problem, Value: value, Fix: fix}
}

// TLSConfig builds the tls.Config a Java Kafka client would use for the
// ssl.* settings in props (resolved for one client role). It is exported
// for callers that talk TLS to Kafka-adjacent services with the worker's
// settings and for tests; Configure uses it for SSL and SASL_SSL.
func TLSConfig(props workerconfig.Properties) (*tls.Config, error) {
	if f := propString(props, "ssl.engine.factory.class"); f != "" {
		return nil, cfgErr("ssl.engine.factory.class", "is a custom SSL engine factory, which connect-init cannot run", f,
			"remove it for connect-init's checks, or disable connect-init's broker checks")
	}
	roots, err := loadTrust(props)
	if err != nil {
		return nil, err
	}
	certs, err := loadKeyPairs(props)
	if err != nil {
		return nil, err
	}
	minV, maxV, err := tlsVersions(props)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(props)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{
		RootCAs:      roots,
		Certificates: certs,
		MinVersion:   minV,
		MaxVersion:   maxV,
		CipherSuites: suites,
	}
	alg, present := props["ssl.endpoint.identification.algorithm"]
	if !present {
		alg = defaultEndpointAlgorithm
	}
	switch strings.ToLower(strings.TrimSpace(alg)) {
	case "https":
	case "":
		// Java turns off only the host name check; the chain is still
		// verified against the truststore. crypto/tls can only skip both,
		// so verify the chain ourselves.
		cfg.InsecureSkipVerify = true
		cfg.VerifyPeerCertificate = verifyChainOnly(roots)
	default:
		return nil, cfgErr("ssl.endpoint.identification.algorithm", "is not supported", alg,
			"use https (verify the broker host name) or an empty value (do not)")
	}
	return cfg, nil
}

// verifyChainOnly checks the server's chain against roots (system roots when
// nil) for server authentication, without checking the host name.
func verifyChainOnly(roots *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("tls: the broker sent no certificate")
		}
		certs := make([]*x509.Certificate, 0, len(raw))
		for _, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("tls: cannot parse the broker certificate: %w", err)
			}
			certs = append(certs, c)
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{
			Roots:         roots,
			Intermediates: inter,
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		return err
	}
}

var tlsVersionNames = map[string]uint16{
	"TLSV1.2": tls.VersionTLS12,
	"TLSV1.3": tls.VersionTLS13,
}

// tlsVersions maps ssl.enabled.protocols and ssl.protocol to a version
// range. Kafka enables the listed protocols on the SSLEngine of an
// SSLContext made for ssl.protocol; a TLSv1.2 context never negotiates
// TLSv1.3 even if it is enabled (SslConfigs' documentation), so
// ssl.protocol caps the maximum. TLSv1 and TLSv1.1 are disabled in the
// JDKs Connect runs on, so they are dropped, and are an error when nothing
// else is left.
func tlsVersions(props workerconfig.Properties) (uint16, uint16, error) {
	enabled := props.Get("ssl.enabled.protocols", defaultSSLEnabledProtocols)
	var minV, maxV uint16
	var legacy bool
	for _, p := range strings.Split(enabled, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, ok := tlsVersionNames[strings.ToUpper(p)]
		if !ok {
			switch strings.ToUpper(p) {
			case "TLSV1", "TLSV1.1", "SSLV3", "SSLV2HELLO":
				legacy = true
				continue
			}
			return 0, 0, cfgErr("ssl.enabled.protocols", "lists an unknown protocol "+p, enabled, "use TLSv1.2 and/or TLSv1.3")
		}
		if minV == 0 || v < minV {
			minV = v
		}
		if v > maxV {
			maxV = v
		}
	}
	if maxV == 0 {
		problem := "enables no protocol"
		if legacy {
			problem = "enables only protocols that current JDKs disable"
		}
		return 0, 0, cfgErr("ssl.enabled.protocols", problem, enabled, "use TLSv1.2 and/or TLSv1.3")
	}
	proto := props.Get("ssl.protocol", defaultSSLProtocol)
	switch strings.ToUpper(proto) {
	case "TLSV1.3", "TLS": // "TLS" contexts support every enabled version
	case "TLSV1.2":
		if minV > tls.VersionTLS12 {
			return 0, 0, cfgErr("ssl.protocol", "is TLSv1.2 but ssl.enabled.protocols enables only TLSv1.3", proto,
				"set ssl.protocol=TLSv1.3 or enable TLSv1.2")
		}
		maxV = tls.VersionTLS12
	default:
		return 0, 0, cfgErr("ssl.protocol", "is not supported", proto, "use TLSv1.3 (the default) or TLSv1.2")
	}
	return minV, maxV, nil
}

// cipherSuites maps ssl.cipher.suites (IANA/JSSE names, which Go shares)
// to crypto/tls IDs. TLS 1.3 suites are accepted but Go does not make them
// configurable. An unknown name is an error, as the JVM rejects it too.
func cipherSuites(props workerconfig.Properties) ([]uint16, error) {
	v := props.Get("ssl.cipher.suites", "")
	if v == "" {
		return nil, nil
	}
	known := map[string]*tls.CipherSuite{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = s
	}
	var out []uint16
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		s, ok := known[name]
		if !ok {
			return nil, cfgErr("ssl.cipher.suites", "lists "+name+", which Go's TLS does not implement", v,
				"remove it or use suites such as TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")
		}
		tls12 := false
		for _, ver := range s.SupportedVersions {
			if ver <= tls.VersionTLS12 {
				tls12 = true
			}
		}
		if tls12 {
			out = append(out, s.ID)
		}
	}
	return out, nil
}
