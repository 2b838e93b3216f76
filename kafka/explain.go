package kafka

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/security"
)

// ExplainConnError turns a connection error into words that name the cause
// and the setting to look at, instead of "EOF" or "run out of available
// brokers". Refused connections and unresolvable names stay short: they are
// the common case in progress lines while a cluster starts.
func ExplainConnError(err error) string { return ExplainWith(err, nil) }

// explainWith is ExplainConnError knowing the client's configuration, so
// that a closed connection can be blamed on the right security setting.
func ExplainWith(err error, cfg *sarama.Config) string {
	if err == nil {
		return ""
	}
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "host name " + dnsErr.Name + " does not resolve from here"
	}
	return security.ExplainConnectError(err, cfg)
}

// IsPermanentConnError reports whether err will not go away by waiting
// (security.IsPermanentConnectError: the same cases that explain it).
func IsPermanentConnError(err error) bool { return security.IsPermanentConnectError(err) }

// describeConfig returns the named configs of one resource as a map.
func DescribeConfig(admin sarama.ClusterAdmin, res sarama.ConfigResource) (map[string]string, error) {
	out, err := DescribeConfigs(admin, []*sarama.ConfigResource{&res})
	if err != nil {
		return nil, err
	}
	return out[res.Name], nil
}

// describeConfigs describes several resources in one request and returns
// their configs by resource name; a per-resource error fails the call.
func DescribeConfigs(admin sarama.ClusterAdmin, resources []*sarama.ConfigResource) (map[string]map[string]string, error) {
	results, err := admin.DescribeConfigs(resources, sarama.DescribeConfigsOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, r := range results {
		if r.ErrorCode != sarama.ErrNoError {
			return nil, fmt.Errorf("describe configs of %s: %w (%s)", r.Name, r.ErrorCode, r.ErrorMsg)
		}
		out[r.Name] = ConfigValues(r.Configs)
	}
	return out, nil
}

// ConfigValues are a DescribeConfigs answer's entries of one resource as
// name to value: the one reading of an answer's entries (the topics gate,
// the brokers step's side read and the describes here).
func ConfigValues(entries []sarama.ConfigEntry) map[string]string {
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		m[e.Name] = e.Value
	}
	return m
}
