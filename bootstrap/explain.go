package bootstrap

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/IBM/sarama"
)

// ExplainConnError turns a connection error into words that name the cause
// and the setting to look at, instead of "EOF" or "run out of available
// brokers".
func ExplainConnError(err error) string {
	if err == nil {
		return ""
	}
	var dnsErr *net.DNSError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var certErr x509.CertificateInvalidError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "host name " + dnsErr.Name + " does not resolve from here"
	case errors.As(err, &hostErr):
		return "TLS: the broker's certificate does not match the host name (" + hostErr.Error() + "); fix the certificate's subject alternative names, or set CONNECT_SSL_ENDPOINT_IDENTIFICATION_ALGORITHM= (empty) to turn host name verification off"
	case errors.As(err, &authErr):
		return "TLS: the broker's certificate is not signed by a CA in the truststore (" + authErr.Error() + "); check CONNECT_SSL_TRUSTSTORE_LOCATION"
	case errors.As(err, &certErr):
		return "TLS: the broker's certificate is not valid: " + certErr.Error()
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return "SASL authentication failed: wrong user name or password in CONNECT_SASL_JAAS_CONFIG, or the user does not exist for this mechanism (" + sarama.ErrSASLAuthenticationFailed.Error() + ")"
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism):
		return "the broker's listener does not enable this SASL mechanism; check CONNECT_SASL_MECHANISM against the broker's sasl.enabled.mechanisms"
	case errors.Is(err, sarama.ErrIllegalSASLState):
		return "the broker did not expect a SASL handshake here; does this listener use SASL? check CONNECT_SECURITY_PROTOCOL"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return "the broker closed the connection right away: the listener probably expects a different security protocol (TLS or SASL) than CONNECT_SECURITY_PROTOCOL says, or rejected the client certificate"
	case errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return "no answer in time (wrong address, a firewall, or a TLS listener spoken to in plaintext)"
	}
	msg := err.Error()
	if strings.Contains(msg, "tls: ") {
		return "TLS handshake failed: " + msg
	}
	return msg
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// describeConfig returns the named configs of one resource as a map.
func describeConfig(admin sarama.ClusterAdmin, res sarama.ConfigResource) (map[string]string, error) {
	results, err := admin.DescribeConfigs([]*sarama.ConfigResource{&res}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, r := range results {
		if r.Name != res.Name {
			continue
		}
		if r.ErrorCode != sarama.ErrNoError {
			return nil, fmt.Errorf("describe configs of %s: %w (%s)", res.Name, r.ErrorCode, r.ErrorMsg)
		}
		for _, e := range r.Configs {
			out[e.Name] = e.Value
		}
	}
	return out, nil
}
