package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
)

func TestExplainConnectError(t *testing.T) {
	plain := sarama.NewConfig()
	tlsCfg := sarama.NewConfig()
	tlsCfg.Net.TLS.Enable = true
	sasl := sarama.NewConfig()
	sasl.Net.SASL.Enable = true
	sasl.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
	old := sarama.NewConfig()
	old.Version = sarama.V1_0_0_0

	tests := []struct {
		err  error
		cfg  *sarama.Config
		want []string
	}{
		{io.EOF, plain, []string{"closed", "SSL", "SASL_PLAINTEXT"}},
		{fmt.Errorf("read: %w", io.EOF), tlsCfg, []string{"ssl.keystore", "SASL_SSL"}},
		{io.ErrUnexpectedEOF, sasl, []string{"SASL_SSL"}},
		{io.EOF, old, []string{"sarama.MaxVersion"}},
		{sarama.ErrSASLAuthenticationFailed, sasl, []string{"sasl.jaas.config", "SCRAM-SHA-512"}},
		{fmt.Errorf("auth: %w", sarama.ErrUnsupportedSASLMechanism), sasl, []string{"sasl.enabled.mechanisms", "SCRAM-SHA-512"}},
		{sarama.ErrIllegalSASLState, sasl, []string{"security.protocol"}},
		{sarama.ErrOutOfBrokers, nil, []string{"bootstrap.servers"}},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Name: "kafka-9", Err: "no such host"}}, plain, []string{"kafka-9", "resolve"}},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, plain, []string{"refused", "bootstrap.servers"}},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, tlsCfg, []string{"ssl.keystore", "mutual TLS"}},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")}, tlsCfg, []string{"ssl.enabled.protocols"}},
		{&TokenError{Endpoint: "https://idp/token", cause: "HTTP 401"}, sasl, []string{"https://idp/token", "401"}},
		{errors.New("SCRAM: server error: other-error"), sasl, []string{"SCRAM", "sasl.jaas.config"}},
		{errors.New("[Root cause: KDC_Error] KDC_ERR_PREAUTH_FAILED"), sasl, []string{"Kerberos", "keyTab"}},
	}
	for _, tc := range tests {
		got := ExplainConnectError(tc.err, tc.cfg)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q does not mention %q", tc.err, got, w)
			}
		}
	}
	if ExplainConnectError(nil, nil) != "" {
		t.Error("nil error should explain to nothing")
	}
}

func TestIsKerberosRefusal(t *testing.T) {
	for msg, want := range map[string]bool{
		"[Root cause: KDC_Error] KDC_Error: AS Exchange Error: kerberos error response from KDC: KRB Error: (6) KDC_ERR_C_PRINCIPAL_UNKNOWN Client not found": true,
		"[Root cause: Decrypting_Error] KRBMessage_Handling_Error: AS Exchange Error: AS_REP is not valid or client password/keytab incorrect":                true,
		"[Root cause: Networking_Error] AS Exchange Error: failed sending AS_REQ to KDC: dial tcp 127.0.0.1:88: connect: connection refused":                  false,
		"dial tcp 127.0.0.1:9092: connect: connection refused": false,
	} {
		if got := IsKerberosRefusal(errors.New(msg)); got != want {
			t.Errorf("%q: %v, want %v", msg, got, want)
		}
	}
	if IsKerberosRefusal(nil) {
		t.Error("nil is no refusal")
	}
}

// TestPermanentConnectErrors: the broker gate fails fast exactly on the
// refusals that no wait cures, decided by the cases that explain them.
func TestPermanentConnectErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		permanent bool
	}{
		{"host name mismatch", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "b1"}, true},
		{"unknown CA", x509.UnknownAuthorityError{}, true},
		{"expired certificate", x509.CertificateInvalidError{Cert: &x509.Certificate{}, Reason: x509.Expired}, true},
		{"plaintext answer to TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"client certificate rejected", errors.New("remote error: tls: bad certificate"), true},
		{"local TLS alert", tls.AlertError(42), true},
		{"SASL authentication failed", fmt.Errorf("open: %w", sarama.ErrSASLAuthenticationFailed), true},
		{"SASL mechanism not enabled", sarama.ErrUnsupportedSASLMechanism, true},
		{"SASL on a plain listener", sarama.ErrIllegalSASLState, true},
		{"SCRAM refused", errors.New("SCRAM: server error: invalid-proof"), true},
		{"Kerberos principal unknown", errors.New("KRB Error: (6) KDC_ERR_C_PRINCIPAL_UNKNOWN"), true},
		{"Kerberos stale keytab", errors.New("KRBMessage: Decrypting_Error"), true},
		{"invalid client configuration", sarama.ConfigurationError("Net.SASL.User must not be empty"), true},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false},
		{"closed connection", io.EOF, false},
		{"timeout", os.ErrDeadlineExceeded, false},
		{"name does not resolve", &net.DNSError{Name: "kafka-1", Err: "no such host"}, false},
		{"no broker reachable", sarama.ErrOutOfBrokers, false},
		{"KDC unreachable", errors.New("KRB Error: cannot reach any KDC in realm EXAMPLE.COM"), false},
		{"OAUTHBEARER token endpoint refused", &TokenError{Endpoint: "https://idp/token", cause: "401"}, true},
		{"nil", nil, false},
	} {
		if got := IsPermanentConnectError(tc.err); got != tc.permanent {
			t.Errorf("%s (%v): permanent=%v, want %v", tc.name, tc.err, got, tc.permanent)
		}
	}
}
