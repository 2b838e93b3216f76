package settings

import (
	"strings"
	"testing"
)

// TestNumbersOutOfRange: a number or duration beyond what its setting
// holds is refused, naming the variable actually set, as "too large, at
// most N" rather than "not a whole number", and never wraps around into
// another value (issue 48: CONNECT_CUB_KAFKA_TIMEOUT=18446744074 became
// 290 ms, =9223372037 blamed CONNECT_INIT_TIMEOUT; issue 52:
// CONNECT_INIT_EXPECTED_BROKERS=9223372036854775807 was accepted).
func TestNumbersOutOfRange(t *testing.T) {
	cases := []struct{ env, named, want string }{
		{"CONNECT_CUB_KAFKA_TIMEOUT=18446744074", "CONNECT_CUB_KAFKA_TIMEOUT", "at most 9223372036 seconds"},
		{"CONNECT_CUB_KAFKA_TIMEOUT=9223372037", "CONNECT_CUB_KAFKA_TIMEOUT", "at most 9223372036 seconds"},
		{"CONNECT_CUB_KAFKA_TIMEOUT=99999999999999999999", "CONNECT_CUB_KAFKA_TIMEOUT", "too large"},
		{"CONNECT_CUB_KAFKA_TIMEOUT=-5", "CONNECT_CUB_KAFKA_TIMEOUT", "not a positive whole number of seconds"},
		{"CONNECT_INIT_EXPECTED_BROKERS=9223372036854775807", "CONNECT_INIT_EXPECTED_BROKERS", "too large (got \"9223372036854775807\"): at most 10000"},
		{"CONNECT_INIT_EXPECTED_BROKERS=10001", "CONNECT_INIT_EXPECTED_BROKERS", "at most 10000"},
		{"CONNECT_INIT_TIMEOUT=9999999999h", "CONNECT_INIT_TIMEOUT", "too large (got \"9999999999h\"): at most 2562047h47m16.854775807s"},
	}
	// Every int and duration setting of the table, past its type's range.
	for _, r := range Table() {
		switch r.Type() {
		case "int":
			cases = append(cases, struct{ env, named, want string }{r.Env + "=99999999999999999999", r.Env, "too large"})
		case "duration":
			cases = append(cases, struct{ env, named, want string }{r.Env + "=99999999999h", r.Env, "too large"})
		}
	}
	for _, c := range cases {
		_, err := LoadSettings([]string{c.env})
		if err == nil {
			t.Errorf("%s: accepted", c.env)
			continue
		}
		if !strings.Contains(err.Error(), c.named+" ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "whole number (got") {
			t.Errorf("%s: %v; want it to name %s and say %q", c.env, err, c.named, c.want)
		}
		if c.named != "CONNECT_INIT_TIMEOUT" && strings.Contains(err.Error(), "CONNECT_INIT_TIMEOUT ") {
			t.Errorf("%s: blames CONNECT_INIT_TIMEOUT, which is not set: %v", c.env, err)
		}
	}
	// The largest allowed values are accepted.
	for _, env := range []string{"CONNECT_CUB_KAFKA_TIMEOUT=9223372036", "CONNECT_INIT_EXPECTED_BROKERS=10000", "CONNECT_INIT_TIMEOUT=2562047h"} {
		if _, err := LoadSettings([]string{env}); err != nil {
			t.Errorf("%s: %v", env, err)
		}
	}
	// A flag says the same.
	for _, r := range Table() {
		if r.Env == "CONNECT_INIT_EXPECTED_BROKERS" {
			var s Settings
			if err := s.SetFlag(r, "9223372036854775807"); err == nil || !strings.Contains(err.Error(), "at most 10000") {
				t.Errorf("--%s=9223372036854775807: %v", r.Flag, err)
			}
		}
	}
	// A worker's replication factor and Confluent's minimum brokers.
	for _, c := range []struct{ env, named, want string }{
		{"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=99999999999", "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR", "too large: at most 32767"},
		{"CONNECT_CUB_KAFKA_MIN_BROKERS=9223372036854775807", "CONNECT_CUB_KAFKA_MIN_BROKERS", "at most 10000"},
		{"CONNECT_CUB_KAFKA_MIN_BROKERS=99999999999999999999", "CONNECT_CUB_KAFKA_MIN_BROKERS", "at most 10000"},
	} {
		_, err := loadConfig(t, append(baseWorkerEnv(), c.env))
		if err == nil || !strings.Contains(err.Error(), c.named) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to name %s and say %q", c.env, err, c.named, c.want)
		}
	}
}

// TestPeerCredentialsNeverShown: a CONNECT_INIT_PEERS entry with a
// password is refused, quoting the entry without it (issue 48's redaction,
// for the peers as for --url).
func TestPeerCredentialsNeverShown(t *testing.T) {
	for _, v := range []string{"http://admin:S3cr/etPw@connect-1:8083", "admin:S3cr#etPw@connect-1:8083", "connect-2,//u:S3cr?etPw@h"} {
		_, err := LoadSettings([]string{"CONNECT_INIT_PEERS=" + v})
		if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_PEERS") || !strings.Contains(err.Error(), "carries credentials") || strings.Contains(err.Error(), "S3cr") {
			t.Errorf("CONNECT_INIT_PEERS=%s: %v", v, err)
		}
	}
}
