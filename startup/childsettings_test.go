package startup

import (
	"maps"
	"testing"

	"github.com/connect-init/connect-init/settings"
)

// The in-worker lock's child gets, from the settings table, every setting
// of lock acquire that is set or has a default, by the provider's
// parameter names; never a secret, and not the image flavour.
func TestChildSettingsFromTheTable(t *testing.T) {
	defaults := map[string]string{
		"timeout": "5m0s", "lock.topic": "_connect-init-lock", "lock.lease": "3m0s", "lock.permits": "1",
		"lock.unavailable.after": "2m0s", "strict": "false", "log.format": "text", "log.level": "info",
	}
	all := maps.Clone(defaults)
	maps.Copy(all, map[string]string{
		"timeout": "1m30s", "expected.brokers": "3", "worker.config": "/etc/w.properties", "peers": "a:8083,b",
		"peer.check": "warn", "lock.unavailable.after": "0s", "strict": "true",
		"rest.username": "u", "rest.username.file": "/run/secrets/u", "rest.password.file": "/run/secrets/p", "rest.token.file": "/run/secrets/t",
	})
	cases := []struct {
		name string
		env  []string
		want map[string]string
	}{
		{"defaults", nil, defaults},
		{"everything set", []string{"CONNECT_INIT_TIMEOUT=90s", "CONNECT_INIT_EXPECTED_BROKERS=3", "CONNECT_INIT_WORKER_CONFIG=/etc/w.properties",
			"CONNECT_INIT_PEERS=a:8083, b", "CONNECT_INIT_PEER_CHECK=warn", "CONNECT_INIT_LOCK_UNAVAILABLE_AFTER=0", "CONNECT_INIT_STRICT=true",
			"CONNECT_INIT_IMAGE=apache", "CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=secret-pw", "CONNECT_INIT_REST_TOKEN=secret-tok",
			"CONNECT_INIT_REST_USERNAME_FILE=/run/secrets/u", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/p", "CONNECT_INIT_REST_TOKEN_FILE=/run/secrets/t",
			"CONNECT_INIT_LOCK=false", "CONNECT_INIT_PLUGIN_CHECK=warn"}, all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := settings.Read(c.env)
			got := map[string]string{}
			for _, kv := range childSettings(s) {
				if _, dup := got[kv[0]]; dup {
					t.Errorf("%s passed twice", kv[0])
				}
				got[kv[0]] = kv[1]
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("childSettings =\n%v\nwant\n%v", got, c.want)
			}
		})
	}
}
