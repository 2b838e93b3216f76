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

// explain is the one list of connection failures connect-init knows: the
// first of connectCases that matches err gives the line; an error no case
// knows is shown as it is, and waiting may cure it.
func explain(err error, cfg *sarama.Config) explanation {
	if err == nil {
		return explanation{}
	}
	f := &failure{err: err, msg: err.Error(), cfg: cfg}
	if cfg != nil {
		f.tlsOn, f.saslOn = cfg.Net.TLS.Enable, cfg.Net.SASL.Enable
		f.mech = string(cfg.Net.SASL.Mechanism)
	}
	for _, c := range connectCases {
		if c.match(f) {
			return explanation{text: c.text(f), permanent: c.permanent}
		}
	}
	return explanation{text: f.msg}
}

// failure is an error being explained, with the client settings that
// tell what it likely means (a closed connection means different things
// with and without TLS and SASL).
type failure struct {
	err           error
	msg           string
	cfg           *sarama.Config
	tlsOn, saslOn bool
	mech          string
}

// connectCase is one known connection failure: how to recognise it, the
// line that names its cause and fix, and whether it is permanent.
type connectCase struct {
	permanent bool
	match     func(*failure) bool
	text      func(*failure) string
}

// Whether waiting can cure a case: passing ones (no broker yet, a name
// that does not resolve yet) may go away; final ones are the broker, the
// KDC or the token endpoint refusing our settings.
const (
	passing = false
	final   = true
)

// connectCases are the failures in the order they are tried: typed
// errors before the texts that could also match them, and the generic
// "tls: " last but one.
var connectCases = []connectCase{
	{final, errAs[*TokenError], func(f *failure) string {
		e, _ := typed[*TokenError](f.err)
		return "OAUTHBEARER login failed before reaching the broker: " + e.Error() +
			"; check sasl.oauthbearer.token.endpoint.url and the client id/secret"
	}},
	{final, errAs[x509.HostnameError], func(f *failure) string {
		e, _ := typed[x509.HostnameError](f.err)
		return "TLS: the broker's certificate does not match the host name we connected to (" + e.Error() +
			"); fix the certificate's subject alternative names or the broker's advertised.listeners, or set ssl.endpoint.identification.algorithm= (empty) to turn host name verification off as Java allows"
	}},
	{final, errAs[x509.UnknownAuthorityError], func(f *failure) string {
		e, _ := typed[x509.UnknownAuthorityError](f.err)
		issuer := ""
		if e.Cert != nil {
			issuer = " (issued by " + e.Cert.Issuer.String() + ")"
		}
		return "TLS: the broker's certificate" + issuer + " is not signed by a CA in the truststore; add that CA to ssl.truststore.location / ssl.truststore.certificates, or point them at the right truststore"
	}},
	{final, errAs[x509.CertificateInvalidError], func(f *failure) string {
		e, _ := typed[x509.CertificateInvalidError](f.err)
		switch e.Reason {
		case x509.Expired:
			return "TLS: the broker's certificate (or a CA in its chain) is expired or not yet valid: " + e.Error() + "; renew it or check the clocks"
		case x509.IncompatibleUsage:
			return "TLS: the broker's certificate is not valid for TLS server authentication (extended key usage): " + e.Error()
		}
		return "TLS: the broker's certificate is not valid: " + e.Error()
	}},
	{final, errAs[tls.RecordHeaderError], func(*failure) string {
		return "TLS: the broker answered in plaintext, so this listener does not use TLS; set security.protocol to PLAINTEXT or SASL_PLAINTEXT, or use the broker's TLS listener port"
	}},
	{final, msgHas(tlsAlertPrefix), func(f *failure) string {
		return tlsAlert(f.msg[strings.Index(f.msg, tlsAlertPrefix)+len(tlsAlertPrefix):])
	}},
	{final, errIs(sarama.ErrSASLAuthenticationFailed), func(f *failure) string {
		return "SASL authentication failed (" + f.msg + "): the user name or password in sasl.jaas.config is wrong, or the user has no credentials for sasl.mechanism=" + f.mech +
			" (SCRAM credentials exist per mechanism: kafka-configs.sh --alter --add-config 'SCRAM-SHA-512=[password=...]')"
	}},
	{final, errIs(sarama.ErrUnsupportedSASLMechanism), func(f *failure) string {
		return "the broker's listener does not enable sasl.mechanism=" + f.mech + "; set sasl.mechanism to one of the broker's sasl.enabled.mechanisms"
	}},
	{final, errIs(sarama.ErrIllegalSASLState), func(*failure) string {
		return "the broker did not expect SASL on this listener; it is probably a PLAINTEXT or SSL listener: set security.protocol accordingly or use the SASL listener's port"
	}},
	{final, msgHas("SCRAM: server error", "SCRAM: server validation failed"), func(f *failure) string {
		return "SCRAM exchange failed (" + f.msg + "): check the user name and password in sasl.jaas.config and that the user has " + f.mech + " credentials"
	}},
	{final, msgHas("KDC_ERR_C_PRINCIPAL_UNKNOWN"), func(f *failure) string {
		return "Kerberos login failed: the KDC does not know the principal " + krbPrincipal(f.cfg) + " (" + f.msg + "); check principal in sasl.jaas.config and the realm in krb5.conf"
	}},
	{final, msgHas("Decrypting_Error", "KDC_ERR_PREAUTH_FAILED"), func(f *failure) string {
		return "Kerberos login failed: the key in keyTab " + krbKeytab(f.cfg) + " does not match the KDC's key for " + krbPrincipal(f.cfg) +
			" (a stale keytab, or one for another principal) (" + f.msg + "); export a fresh keytab for the principal"
	}},
	{passing, msgHas("KDC_ERR", "KRB Error", "kerberos", "KRBMessage"), func(f *failure) string {
		return "Kerberos login as " + krbPrincipal(f.cfg) + " failed (" + f.msg + "): check the principal and keyTab in sasl.jaas.config, the realm and KDC in krb5.conf, and sasl.kerberos.service.name"
	}},
	{final, errAs[sarama.ConfigurationError], func(f *failure) string { return "the client configuration is invalid: " + f.msg }},
	{passing, errIs(sarama.ErrOutOfBrokers), func(*failure) string {
		return "none of the brokers could be reached (sarama keeps no per-broker cause): check bootstrap.servers and security.protocol; connect-init explains the cause when it contacts a broker directly"
	}},
	{passing, errAs[*net.DNSError], func(f *failure) string {
		e, _ := typed[*net.DNSError](f.err)
		return "the broker host name " + e.Name + " does not resolve from this container; check bootstrap.servers or the broker's advertised.listeners"
	}},
	{passing, errIs(syscall.ECONNREFUSED), func(*failure) string {
		return "connection refused: nothing listens on that address; check bootstrap.servers (host and port) and the broker's listeners"
	}},
	{passing, errIs(syscall.EHOSTUNREACH, syscall.ENETUNREACH), func(f *failure) string {
		return "the broker's network is unreachable from this container: " + f.msg
	}},
	{passing, func(f *failure) bool {
		return errIs(io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE)(f) || strings.HasSuffix(f.msg, "EOF")
	}, func(f *failure) string {
		return "the broker closed the connection: " + closedHint(f.tlsOn, f.saslOn, f.cfg)
	}},
	{passing, func(f *failure) bool { return errors.Is(f.err, os.ErrDeadlineExceeded) || isTimeout(f.err) }, func(f *failure) string {
		hint := "no answer in time: a firewall, a wrong address or port"
		if !f.tlsOn {
			hint += ", or a TLS listener waiting for a TLS handshake (security.protocol SSL or SASL_SSL)"
		}
		return hint + " (" + f.msg + ")"
	}},
	{final, msgHas("tls: "), func(f *failure) string { return "TLS handshake failed: " + f.msg + "; check the ssl.* settings" }},
}

// tlsAlertPrefix starts the text of a TLS alert the broker sent us.
const tlsAlertPrefix = "remote error: tls: "

// tlsAlert explains the broker's TLS alert, whose name says which side
// of the handshake it refused: our certificate, or the versions and
// cipher suites.
func tlsAlert(alert string) string {
	switch {
	case strings.HasPrefix(alert, "certificate required"), strings.HasPrefix(alert, "bad certificate"),
		strings.HasPrefix(alert, "unknown certificate authority"), strings.HasPrefix(alert, "certificate unknown"),
		strings.HasPrefix(alert, "expired certificate"), strings.HasPrefix(alert, "unsupported certificate"):
		return "TLS: the broker rejected our client certificate or requires one (" + alert +
			"); the listener demands mutual TLS (ssl.client.auth=required): set ssl.keystore.location/ssl.keystore.password (or ssl.keystore.key and ssl.keystore.certificate.chain) to a certificate the broker's truststore trusts"
	case strings.HasPrefix(alert, "protocol version not supported"), strings.HasPrefix(alert, "handshake failure"),
		strings.HasPrefix(alert, "insufficient security level"):
		return "TLS: the broker and connect-init share no TLS version or cipher suite (" + alert + "); check ssl.enabled.protocols, ssl.protocol and ssl.cipher.suites against the broker's"
	}
	return "TLS: the broker aborted the handshake (" + alert + ")"
}

// typed is errors.As returning the match, so a case's text can use the
// typed error its match found.
func typed[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}

// errAs matches a failure with an error of type T in its chain.
func errAs[T error](f *failure) bool { _, ok := typed[T](f.err); return ok }

// errIs matches a failure whose chain holds one of targets.
func errIs(targets ...error) func(*failure) bool {
	return func(f *failure) bool {
		for _, t := range targets {
			if errors.Is(f.err, t) {
				return true
			}
		}
		return false
	}
}

// msgHas matches a failure whose text contains one of subs: the errors of
// the TLS alerts, SCRAM and gokrb5 have no type to match on.
func msgHas(subs ...string) func(*failure) bool {
	return func(f *failure) bool {
		for _, s := range subs {
			if strings.Contains(f.msg, s) {
				return true
			}
		}
		return false
	}
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
