package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/IBM/sarama"
)

// ExplainConnectError turns an error from connecting to one broker (dial,
// TLS handshake, SASL) into one line that names the cause and the setting
// most likely to fix it, so users never see a bare "EOF" or "run out of
// available brokers". cfg is the client configuration used (nil is
// allowed): a closed connection means different things with and without
// TLS and SASL. The text never contains credentials.
//
// sarama.ErrOutOfBrokers carries no cause; callers should open one broker
// (sarama.NewBroker(addr).Open(cfg) then Connected()) and explain that error.
func ExplainConnectError(err error, cfg *sarama.Config) string { return explain(err, cfg).text }

// IsPermanentConnectError reports whether err will not go away by waiting:
// the broker (or the KDC, or the token endpoint) answered and refused us
// for our settings: credentials, certificates, mechanism, security
// protocol. The broker gate fails fast on these instead of waiting out its
// timeout. It is decided by the same cases that explain the error.
func IsPermanentConnectError(err error) bool {
	if err == nil {
		return false
	}
	e := explain(err, nil)
	return e.permanent || strings.Contains(err.Error(), "tls: ") || IsKerberosRefusal(err)
}

// explanation is one case of explain: the line for the user, and whether
// waiting could cure it.
type explanation struct {
	text      string
	permanent bool
}

// explain is the one list of connection failures connect-init knows.
func explain(err error, cfg *sarama.Config) explanation {
	if err == nil {
		return explanation{}
	}
	final := func(text string) explanation { return explanation{text: text, permanent: true} }
	passing := func(text string) explanation { return explanation{text: text} }
	tlsOn, saslOn, mech := false, false, ""
	if cfg != nil {
		tlsOn, saslOn = cfg.Net.TLS.Enable, cfg.Net.SASL.Enable
		mech = string(cfg.Net.SASL.Mechanism)
	}
	var (
		tokErr   *TokenError
		hostErr  x509.HostnameError
		authErr  x509.UnknownAuthorityError
		certErr  x509.CertificateInvalidError
		recErr   tls.RecordHeaderError
		dnsErr   *net.DNSError
		cfgError sarama.ConfigurationError
	)
	msg := err.Error()
	switch {
	case errors.As(err, &tokErr):
		return final("OAUTHBEARER login failed before reaching the broker: " + tokErr.Error() +
			"; check sasl.oauthbearer.token.endpoint.url and the client id/secret")
	case errors.As(err, &hostErr):
		return final("TLS: the broker's certificate does not match the host name we connected to (" + hostErr.Error() +
			"); fix the certificate's subject alternative names or the broker's advertised.listeners, or set ssl.endpoint.identification.algorithm= (empty) to turn host name verification off as Java allows")
	case errors.As(err, &authErr):
		issuer := ""
		if authErr.Cert != nil {
			issuer = " (issued by " + authErr.Cert.Issuer.String() + ")"
		}
		return final("TLS: the broker's certificate" + issuer + " is not signed by a CA in the truststore; add that CA to ssl.truststore.location / ssl.truststore.certificates, or point them at the right truststore")
	case errors.As(err, &certErr):
		switch certErr.Reason {
		case x509.Expired:
			return final("TLS: the broker's certificate (or a CA in its chain) is expired or not yet valid: " + certErr.Error() + "; renew it or check the clocks")
		case x509.IncompatibleUsage:
			return final("TLS: the broker's certificate is not valid for TLS server authentication (extended key usage): " + certErr.Error())
		}
		return final("TLS: the broker's certificate is not valid: " + certErr.Error())
	case errors.As(err, &recErr):
		return final("TLS: the broker answered in plaintext, so this listener does not use TLS; set security.protocol to PLAINTEXT or SASL_PLAINTEXT, or use the broker's TLS listener port")
	case strings.Contains(msg, "remote error: tls: "):
		alert := msg[strings.Index(msg, "remote error: tls: ")+len("remote error: tls: "):]
		switch {
		case strings.HasPrefix(alert, "certificate required"), strings.HasPrefix(alert, "bad certificate"),
			strings.HasPrefix(alert, "unknown certificate authority"), strings.HasPrefix(alert, "certificate unknown"),
			strings.HasPrefix(alert, "expired certificate"), strings.HasPrefix(alert, "unsupported certificate"):
			return final("TLS: the broker rejected our client certificate or requires one (" + alert +
				"); the listener demands mutual TLS (ssl.client.auth=required): set ssl.keystore.location/ssl.keystore.password (or ssl.keystore.key and ssl.keystore.certificate.chain) to a certificate the broker's truststore trusts")
		case strings.HasPrefix(alert, "protocol version not supported"), strings.HasPrefix(alert, "handshake failure"),
			strings.HasPrefix(alert, "insufficient security level"):
			return final("TLS: the broker and connect-init share no TLS version or cipher suite (" + alert + "); check ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites against the broker's")
		}
		return final("TLS: the broker aborted the handshake (" + alert + ")")
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return final("SASL authentication failed (" + msg + "): the user name or password in sasl.jaas.config is wrong, or the user has no credentials for sasl.mechanism=" + mech +
			" (SCRAM credentials exist per mechanism: kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[password=...]')")
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism):
		return final("the broker's listener does not enable sasl.mechanism=" + mech + "; set sasl.mechanism to one of the broker's sasl.enabled.mechanisms")
	case errors.Is(err, sarama.ErrIllegalSASLState):
		return final("the broker did not expect SASL on this listener; it is probably a PLAINTEXT or SSL listener: set security.protocol accordingly or use the SASL listener's port")
	case strings.Contains(msg, "SCRAM: server error"), strings.Contains(msg, "SCRAM: server validation failed"):
		return final("SCRAM exchange failed (" + msg + "): check the user name and password in sasl.jaas.config and that the user has " + mech + " credentials")
	case strings.Contains(msg, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		return final("Kerberos login failed: the KDC does not know the principal " + krbPrincipal(cfg) + " (" + msg + "); check principal in sasl.jaas.config and the realm in krb5.conf")
	case strings.Contains(msg, "Decrypting_Error") || strings.Contains(msg, "KDC_ERR_PREAUTH_FAILED"):
		return final("Kerberos login failed: the key in keyTab " + krbKeytab(cfg) + " does not match the KDC's key for " + krbPrincipal(cfg) +
			" (a stale keytab, or one for another principal) (" + msg + "); export a fresh keytab for the principal")
	case strings.Contains(msg, "KDC_ERR") || strings.Contains(msg, "KRB Error") || strings.Contains(msg, "kerberos") || strings.Contains(msg, "KRBMessage"):
		return passing("Kerberos login as " + krbPrincipal(cfg) + " failed (" + msg + "): check the principal and keyTab in sasl.jaas.config, the realm and KDC in krb5.conf, and sasl.kerberos.service.name")
	case errors.As(err, &cfgError):
		return final("the client configuration is invalid: " + msg)
	case errors.Is(err, sarama.ErrOutOfBrokers):
		return passing("none of the brokers could be reached (sarama keeps no per-broker cause): check bootstrap.servers and security.protocol; connect-init explains the cause when it contacts a broker directly")
	case errors.As(err, &dnsErr):
		return passing("the broker host name " + dnsErr.Name + " does not resolve from this container; check bootstrap.servers or the broker's advertised.listeners")
	case errors.Is(err, syscall.ECONNREFUSED):
		return passing("connection refused: nothing listens on that address; check bootstrap.servers (host and port) and the broker's listeners")
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return passing("the broker's network is unreachable from this container: " + msg)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || strings.HasSuffix(msg, "EOF"):
		return passing("the broker closed the connection: " + closedHint(tlsOn, saslOn, cfg))
	case errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		hint := "no answer in time: a firewall, a wrong address or port"
		if !tlsOn {
			hint += ", or a TLS listener waiting for a TLS handshake (security.protocol SSL or SASL_SSL)"
		}
		return passing(hint + " (" + msg + ")")
	}
	if strings.Contains(msg, "tls: ") {
		return final("TLS handshake failed: " + msg + "; check the ssl.* settings")
	}
	return passing(msg)
}

func closedHint(tlsOn, saslOn bool, cfg *sarama.Config) string {
	var h string
	switch {
	case !tlsOn && !saslOn:
		h = "the listener probably expects TLS (security.protocol=SSL or SASL_SSL) or SASL (SASL_PLAINTEXT)"
	case !tlsOn && saslOn:
		h = "the listener probably expects TLS (security.protocol=SASL_SSL), or is not a SASL listener"
	case tlsOn && !saslOn:
		h = "the listener probably expects SASL (security.protocol=SASL_SSL), rejected our client certificate (mutual TLS: set ssl.keystore.*), or is not a TLS listener"
	default:
		h = "the listener probably rejected our client certificate (mutual TLS: set ssl.keystore.*), is not a SASL_SSL listener, or closed the connection after a failed authentication"
	}
	if cfg != nil && !cfg.Version.IsAtLeast(sarama.V2_1_0_0) {
		h += "; also, sarama Config.Version " + cfg.Version.String() + " is older than Kafka 4.x brokers accept (use sarama.MaxVersion)"
	}
	return h
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// krbPermanent are the KDC answers that waiting will not change: an
// unknown client or service principal, a wrong or stale key, a revoked or
// expired principal, no common encryption type.
var krbPermanent = []string{
	"KDC_ERR_C_PRINCIPAL_UNKNOWN", "KDC_ERR_S_PRINCIPAL_UNKNOWN", "KDC_ERR_PREAUTH_FAILED", "KDC_ERR_CLIENT_REVOKED",
	"KDC_ERR_KEY_EXPIRED", "KDC_ERR_ETYPE_NOSUPP", "Decrypting_Error",
}

// IsKerberosRefusal reports whether err is the KDC refusing our principal
// or key, which no retry cures (a KDC that cannot be reached is not one).
func IsKerberosRefusal(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range krbPermanent {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func krbPrincipal(cfg *sarama.Config) string {
	if cfg == nil || cfg.Net.SASL.GSSAPI.Username == "" {
		return "(unknown principal)"
	}
	return cfg.Net.SASL.GSSAPI.Username + "@" + cfg.Net.SASL.GSSAPI.Realm
}

func krbKeytab(cfg *sarama.Config) string {
	if cfg == nil || cfg.Net.SASL.GSSAPI.KeyTabPath == "" {
		return "(unknown)"
	}
	return cfg.Net.SASL.GSSAPI.KeyTabPath
}
