package settings

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/workerconfig"
)

func TestLoadSettingsDefaultsAndEmptyIsUnset(t *testing.T) {
	s, err := LoadSettings([]string{"CONNECT_INIT_LOCK_TOPIC=", "CONNECT_INIT_LOCK_PERMITS=  ", "TIMEOUT=1s", "LOCK=false"})
	if err != nil {
		t.Fatal(err)
	}
	if s.LockTopic != "_connect-init-lock" || s.LockPermits != 1 || !s.Lock || s.Timeout != 5*time.Minute || s.LockLease != 3*time.Minute {
		t.Fatalf("defaults not applied (empty must count as unset, unprefixed names must be ignored): %+v", s)
	}
}

func TestLoadSettingsValues(t *testing.T) {
	s, err := LoadSettings([]string{"CONNECT_INIT_TIMEOUT=90s", "CONNECT_INIT_EXPECTED_BROKERS=3", "CONNECT_INIT_LOCK=false",
		"CONNECT_INIT_PEERS=a:8083,tasks.connect", "CONNECT_INIT_LOG_FORMAT=json", "CONNECT_INIT_PEER_CHECK=warn"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeout != 90*time.Second || s.ExpectedBrokers != 3 || s.Lock || len(s.Peers) != 2 || s.LogFormat != "json" || s.PeerCheck != "warn" {
		t.Fatalf("unexpected settings %+v", s)
	}
}

func TestLoadSettingsCubTimeout(t *testing.T) {
	s, err := LoadSettings([]string{"CONNECT_CUB_KAFKA_TIMEOUT=40"})
	if err != nil || s.Timeout != 40*time.Second {
		t.Fatalf("CONNECT_CUB_KAFKA_TIMEOUT not honoured: %v %v", s.Timeout, err)
	}
	s, err = LoadSettings([]string{"CONNECT_CUB_KAFKA_TIMEOUT=40", "CONNECT_INIT_TIMEOUT=2m"})
	if err != nil || s.Timeout != 2*time.Minute {
		t.Fatalf("CONNECT_INIT_TIMEOUT must win: %v %v", s.Timeout, err)
	}
}

func TestLoadSettingsErrorsNameTheVariable(t *testing.T) {
	cases := map[string]string{
		"CONNECT_INIT_TIMEOUT=soon":         "CONNECT_INIT_TIMEOUT",
		"CONNECT_INIT_LOCK_PERMITS=0":       "CONNECT_INIT_LOCK_PERMITS",
		"CONNECT_INIT_LOCK=maybe":           "CONNECT_INIT_LOCK",
		"CONNECT_INIT_PEER_CHECK=sometimes": "CONNECT_INIT_PEER_CHECK",
		"CONNECT_INIT_LOG_FORMAT=xml":       "CONNECT_INIT_LOG_FORMAT",
		"CONNECT_CUB_KAFKA_TIMEOUT=forty":   "CONNECT_CUB_KAFKA_TIMEOUT",
		"CONNECT_INIT_EXPECTED_BROKERS=-1":  "CONNECT_INIT_EXPECTED_BROKERS",
	}
	for kv, name := range cases {
		_, err := LoadSettings([]string{kv})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want a ConfigError naming %s, got %v", kv, name, err)
		}
	}
}

// connect-init's prefix (EnvPrefix) and the one the worker settings skip are one name.
func TestEnvPrefixIsOwnPrefix(t *testing.T) {
	if EnvPrefix+"_" != workerconfig.OwnEnvPrefix {
		t.Fatalf("EnvPrefix %q and workerconfig.OwnEnvPrefix %q disagree", EnvPrefix, workerconfig.OwnEnvPrefix)
	}
}

// CONNECT_INIT_LOCK_JOINS: first by default (unset or empty), each on
// request, anything else refused naming the variable and both values.
func TestLockJoins(t *testing.T) {
	for env, want := range map[string]string{"": LockJoinsFirst, "CONNECT_INIT_LOCK_JOINS=": LockJoinsFirst,
		"CONNECT_INIT_LOCK_JOINS=first": LockJoinsFirst, "CONNECT_INIT_LOCK_JOINS= Each ": LockJoinsEach} {
		s, err := LoadSettings([]string{env})
		if err != nil || s.LockJoinsPolicy() != want {
			t.Errorf("%q: policy %q, err %v; want %q", env, s.LockJoinsPolicy(), err, want)
		}
	}
	_, err := LoadSettings([]string{"CONNECT_INIT_LOCK_JOINS=all"})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "CONNECT_INIT_LOCK_JOINS") || !strings.Contains(err.Error(), "first or each") {
		t.Fatalf("CONNECT_INIT_LOCK_JOINS=all: want a ConfigError naming the variable and first or each, got %v", err)
	}
}
