package settings

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// The REST client's own TLS material, as PEM files (issue 38): what `apply
// --url` needs from a CI runner that has no worker settings to derive the
// REST client's TLS from (listeners.https.ssl.*), such as the private CA
// of an https URL behind a reverse proxy, or the client certificate a
// listener with ssl.client.auth=required asks for.
const (
	RESTCAFile   = "CONNECT_INIT_REST_CA_FILE"
	RESTCertFile = "CONNECT_INIT_REST_CERT_FILE"
	RESTKeyFile  = "CONNECT_INIT_REST_KEY_FILE"
)

// RESTTLSGiven reports whether any of the REST client's TLS files is set.
func (s Settings) RESTTLSGiven() bool {
	return s.RESTCAFile != "" || s.RESTCertFile != "" || s.RESTKeyFile != ""
}

// RESTTLS is the REST client's TLS configuration from the files given, on
// top of base (the worker settings' REST client TLS; nil: none): the CA
// file replaces the roots, the certificate and key replace the client
// certificate, anything else of base is kept. nil, nil when no file is
// set. The error names the setting as the user gave it, and the fix.
func (s Settings) RESTTLS(base *tls.Config) (*tls.Config, error) {
	if !s.RESTTLSGiven() {
		return base, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		cfg = base.Clone()
	}
	if s.RESTCAFile != "" {
		pem, err := os.ReadFile(s.RESTCAFile)
		if err != nil {
			return nil, s.badSetting(RESTCAFile, fmt.Sprintf("names %s, which cannot be read: %v", s.RESTCAFile, unwrapPath(err)), "point it at a readable PEM file of CA certificates")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, s.badSetting(RESTCAFile, fmt.Sprintf("names %s, which holds no PEM certificate", s.RESTCAFile), "give the CA's certificate in PEM (-----BEGIN CERTIFICATE-----)")
		}
		cfg.RootCAs = pool
	}
	switch {
	case s.RESTCertFile != "" && s.RESTKeyFile == "":
		return nil, s.badSetting(RESTKeyFile, "is not set, but "+s.Name(RESTCertFile)+" is", "give the client certificate's private key too (PEM): apply --key or "+RESTKeyFile)
	case s.RESTKeyFile != "" && s.RESTCertFile == "":
		return nil, s.badSetting(RESTCertFile, "is not set, but "+s.Name(RESTKeyFile)+" is", "give the client certificate too (PEM): apply --cert or "+RESTCertFile)
	case s.RESTCertFile != "":
		pair, err := tls.LoadX509KeyPair(s.RESTCertFile, s.RESTKeyFile)
		if err != nil {
			// The error names files and PEM blocks, never key material.
			return nil, s.badSetting(RESTCertFile, fmt.Sprintf("with %s cannot be used: %v", s.Name(RESTKeyFile), unwrapPath(err)),
				"give a PEM certificate and its unencrypted PEM private key (PKCS#1, PKCS#8 or EC)")
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// checkRESTTLS refuses, before any connection, TLS files that cannot be
// used.
func (s Settings) checkRESTTLS() error {
	_, err := s.RESTTLS(nil)
	return err
}
