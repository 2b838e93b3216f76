package startup

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// The in-worker lock's child gets, from the settings table, every setting
// of lock acquire that is set or has a default, by the provider's
// parameter names; never a secret, and not the image flavour.
func TestChildSettingsFromTheTable(t *testing.T) {
	defaults := map[string]string{
		"timeout": "5m0s", "lock.topic": "_connect-init-lock", "lock.lease": "3m0s", "lock.permits": "1",
		"lock.unavailable.after": "2m0s", "lock.joins": "first", "strict": "false", "log.format": "text", "log.level": "info",
	}
	all := maps.Clone(defaults)
	maps.Copy(all, map[string]string{
		"timeout": "1m30s", "expected.brokers": "3", "worker.config": "/etc/w.properties", "peers": "a:8083,b",
		"peer.check": "warn", "lock.unavailable.after": "0s", "strict": "true",
		"lock.topic": "t", "lock.joins": "each", "lock.lease": "1m0s", "lock.permits": "2", "log.format": "json", "log.level": "debug",
		"rest.username": "u", "rest.username.file": "/run/secrets/u", "rest.password.file": "/run/secrets/p", "rest.token.file": "/run/secrets/t",
	})
	cases := []struct {
		name        string
		env         []string
		want        map[string]string
		wantSecrets map[string]string
	}{
		{"defaults", nil, defaults, map[string]string{}},
		{"everything set", everythingSet, all, map[string]string{"CONNECT_INIT_REST_PASSWORD": "secret-pw", "CONNECT_INIT_REST_TOKEN": "secret-tok"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := settings.Read(c.env)
			params, secrets := childSettings(s)
			got, gotSecrets := asMap(t, params), asMap(t, secrets)
			if !maps.Equal(got, c.want) {
				t.Errorf("childSettings params =\n%v\nwant\n%v", got, c.want)
			}
			if !maps.Equal(gotSecrets, c.wantSecrets) {
				t.Errorf("childSettings secrets: got %d (%v), want %v", len(gotSecrets), slices.Sorted(maps.Keys(gotSecrets)), slices.Sorted(maps.Keys(c.wantSecrets)))
			}
		})
	}
}

// everythingSet sets every setting of the table that lock acquire reads.
var everythingSet = []string{"CONNECT_INIT_TIMEOUT=90s", "CONNECT_INIT_EXPECTED_BROKERS=3", "CONNECT_INIT_WORKER_CONFIG=/etc/w.properties",
	"CONNECT_INIT_PEERS=a:8083, b", "CONNECT_INIT_PEER_CHECK=warn", "CONNECT_INIT_LOCK_UNAVAILABLE_AFTER=0", "CONNECT_INIT_STRICT=true",
	"CONNECT_INIT_IMAGE=apache", "CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=secret-pw", "CONNECT_INIT_REST_TOKEN=secret-tok",
	"CONNECT_INIT_REST_USERNAME_FILE=/run/secrets/u", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/p", "CONNECT_INIT_REST_TOKEN_FILE=/run/secrets/t",
	"CONNECT_INIT_LOCK=false", "CONNECT_INIT_PLUGIN_CHECK=warn",
	"CONNECT_INIT_LOCK_TOPIC=t", "CONNECT_INIT_LOCK_JOINS=each", "CONNECT_INIT_LOCK_LEASE=1m", "CONNECT_INIT_LOCK_PERMITS=2", "CONNECT_INIT_LOG_FORMAT=json", "CONNECT_INIT_LOG_LEVEL=debug"}

func asMap(t *testing.T, kvs [][2]string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, kv := range kvs {
		if _, dup := m[kv[0]]; dup {
			t.Errorf("%s passed twice", kv[0])
		}
		m[kv[0]] = kv[1]
	}
	return m
}

// Every setting of the table that lock acquire reads reaches the in-worker
// lock's child, secrets included (by the hand-over file), unless its row
// says why not: a new row for lock acquire fails here until it is passed
// or given a reason (and until everythingSet sets it).
func TestEverySettingOfLockAcquireReachesTheChild(t *testing.T) {
	set := map[string]bool{}
	for _, kv := range everythingSet {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	params, secrets := childSettings(settings.Read(everythingSet))
	got := map[string]bool{}
	for _, kv := range params {
		got[workerconfig.OwnEnvPrefix+strings.ToUpper(strings.ReplaceAll(kv[0], ".", "_"))] = true
	}
	for _, kv := range secrets {
		got[kv[0]] = true
	}
	for _, r := range settings.Table() {
		if !r.AppliesTo(settings.LockAcquire) {
			continue
		}
		if !set[r.Env] {
			t.Errorf("%s is read by lock acquire, but everythingSet does not set it: add it", r.Env)
		}
		switch {
		case r.NotPassed() != "" && got[r.Env]:
			t.Errorf("%s is passed to the child, though its row says why not (%s)", r.Env, r.NotPassed())
		case r.NotPassed() == "" && !got[r.Env]:
			t.Errorf("%s is read by lock acquire, but neither passed to the in-worker lock's child nor given a reason (Setting.notPassed)", r.Env)
		}
	}
}
