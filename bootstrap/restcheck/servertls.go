package restcheck

import (
	"crypto/tls"
	"strings"

	"github.com/connect-init/connect-init/bootstrap/security"
	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// ServerTLSConfig returns the TLS configuration Connect's REST server uses
// for an https listener (SSLUtils.createServerSideSslContextFactory): the
// listeners.https.ssl.* settings if any listeners.https.* setting exists,
// else the top-level ssl.* ones, as TLSConfig chooses them. The key store
// gives the server certificate; ssl.client.auth=required or requested asks
// peers for a certificate verified against the trust store. The self-probe
// serves its token with it, so that a peer verifying the worker's
// certificate sees the one the worker will present. Errors are
// *workerconfig.Error (exit 2).
func ServerTLSConfig(props workerconfig.Properties) (*tls.Config, error) {
	prefix, sub := "", props
	for k := range props {
		if strings.HasPrefix(k, httpsPrefix) {
			prefix, sub = httpsPrefix, props.WithPrefix(httpsPrefix)
			break
		}
	}
	c, err := security.TLSConfig(sub)
	if err != nil {
		return nil, err
	}
	if len(c.Certificates) == 0 {
		return nil, &workerconfig.Error{Property: prefix + "ssl.keystore.location", Problem: "is not set, but the advertised listener is https and Connect's REST server needs a key store",
			Fix: "set " + prefix + "ssl.keystore.location (CONNECT_" + envName(prefix) + "SSL_KEYSTORE_LOCATION) and its passwords, or use an http listener"}
	}
	s := &tls.Config{Certificates: c.Certificates, MinVersion: c.MinVersion, MaxVersion: c.MaxVersion, CipherSuites: c.CipherSuites}
	switch strings.ToLower(strings.TrimSpace(sub.Get("ssl.client.auth", "none"))) {
	case "required":
		s.ClientAuth, s.ClientCAs = tls.RequireAndVerifyClientCert, c.RootCAs
	case "requested":
		s.ClientAuth, s.ClientCAs = tls.VerifyClientCertIfGiven, c.RootCAs
	case "none", "":
	default:
		return nil, &workerconfig.Error{Property: prefix + "ssl.client.auth", Problem: "must be required, requested or none", Value: sub.Get("ssl.client.auth", "")}
	}
	return s, nil
}

// envName is the CONNECT_ spelling of a property prefix, for fixes.
func envName(prefix string) string {
	return strings.ToUpper(strings.ReplaceAll(prefix, ".", "_"))
}
