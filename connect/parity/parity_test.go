package parity

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/workerconfig"
)

func base() workerconfig.Properties {
	return workerconfig.Properties{
		"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}
}

// Connect's defaults apply where a setting is unset: an explicit default
// and an unset one agree (effective values are compared).
func TestFingerprintComparesEffectiveValues(t *testing.T) {
	explicit := base()
	explicit["header.converter"] = " org.apache.kafka.connect.storage.SimpleHeaderConverter "
	explicit["connect.protocol"] = "SESSIONED"
	explicit["topic.creation.enable"] = "TRUE"
	explicit["inter.worker.verification.algorithms"] = " HmacSHA256 "
	explicit["config.providers"] = "file, env"
	base2 := base()
	base2["config.providers"] = "env,file"
	a, b := Of(base2, "4.1"), Of(explicit, "4.1")
	for _, k := range a.Keys() {
		if a[k] != b[k] {
			t.Errorf("%s: unset %q, explicit default %q", k, a[k], b[k])
		}
	}
	if ds := Judge(Subject{Settings: a, Peers: []Peer{{URL: "p", Settings: b}}}); len(ds) != 0 {
		t.Errorf("differences between unset and explicit defaults: %+v", ds)
	}
}

// No secret value, nor a digest of one, appears in a fingerprint: the
// providers' parameters are never published, and a setting the redaction
// list marks secret is published only as set.
func TestFingerprintHoldsNoSecret(t *testing.T) {
	p := base()
	p["config.providers"] = "vault,file"
	p["config.providers.vault.class"] = "com.example.VaultConfigProvider"
	p["config.providers.vault.param.token"] = "s3cr3t-token"
	p["config.providers.vault.param.address"] = "https://user:hunter2@vault:8200"
	p["config.providers.file.class"] = "org.apache.kafka.common.config.provider.FileConfigProvider"
	p["sasl.jaas.config"] = "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"pw-secret\";"
	f := Of(p, "4.1")
	b, _ := json.Marshal(f)
	for _, secret := range []string{"s3cr3t", "hunter2", "pw-secret", "param"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("fingerprint holds %q: %s", secret, b)
		}
	}
	if f["config.providers.vault.class"] != "com.example.VaultConfigProvider" || f["config.providers"] != "file,vault" {
		t.Errorf("provider names and classes are published in clear: %s", b)
	}
	for _, r := range Table() {
		if workerconfig.IsSensitive(r.Key) {
			t.Errorf("row %s is a secret setting: the table compares no secret", r.Key)
		}
	}
	// The belt and braces: a sensitive key, should one reach a
	// fingerprint, is published as set only.
	if got := redactSecrets(Fingerprint{"x.password": "pw-secret"}); got["x.password"] != Secret {
		t.Errorf("a sensitive key: %q", got["x.password"])
	}
}

func peer(url string, change func(workerconfig.Properties)) Peer {
	p := base()
	if change != nil {
		change(p)
	}
	return Peer{URL: url, Settings: Of(p, "4.1")}
}

func ids(rs []checks.Result) map[string]checks.Severity {
	out := map[string]checks.Severity{}
	for _, r := range rs {
		out[r.ID] = r.Severity
	}
	return out
}

func TestJudge(t *testing.T) {
	me := base()
	me["value.converter"] = "io.confluent.connect.avro.AvroConverter"
	rs := Results(Subject{GroupID: "g", URL: "http://w3:8083/", Settings: Of(me, "4.1"),
		Peers: []Peer{peer("http://w1:8083/", nil), peer("http://w2:8083/", nil), {URL: "http://old:8083/"}}})
	if len(rs) != 1 || rs[0].ID != IDSettingDiffers || rs[0].Severity != checks.Error {
		t.Fatalf("another value.converter: %+v", rs)
	}
	for _, want := range []string{"value.converter=io.confluent.connect.avro.AvroConverter", "org.apache.kafka.connect.json.JsonConverter on http://w1:8083/, http://w2:8083/", "1 live worker(s) publish no settings"} {
		if !strings.Contains(rs[0].String(), want) {
			t.Errorf("message lacks %q: %s", want, rs[0])
		}
	}

	for _, tc := range []struct {
		name      string
		mine, grp map[string]string
		want      map[string]checks.Severity
	}{
		{"eos one step", map[string]string{KeyExactlyOnce: "preparing"}, map[string]string{KeyExactlyOnce: "enabled"}, map[string]checks.Severity{IDStagedTransition: checks.Warning}},
		{"eos two steps", nil, map[string]string{KeyExactlyOnce: "enabled"}, map[string]checks.Severity{IDStagedTransition: checks.Error}},
		{"protocol two steps", map[string]string{KeyProtocol: "eager"}, nil, map[string]checks.Severity{IDStagedTransition: checks.Error}},
		{"protocol one step", map[string]string{KeyProtocol: "compatible"}, nil, map[string]checks.Severity{IDStagedTransition: checks.Warning}},
		{"offsets topic", map[string]string{"offset.storage.topic": "o2"}, nil, map[string]checks.Severity{IDSettingDiffers: checks.Error}},
		{"leader wins", map[string]string{"scheduled.rebalance.max.delay.ms": "0"}, nil, map[string]checks.Severity{IDLeaderSettingDiffers: checks.Warning}},
		{"signature not verified", map[string]string{KeySignature: "HmacSHA512", KeyVerification: "HmacSHA512,HmacSHA256"}, nil,
			map[string]checks.Severity{IDSignatureNotVerified: checks.Error}},
		{"rotation staged right", map[string]string{KeySignature: "HmacSHA256", KeyVerification: "HmacSHA512,HmacSHA256"},
			map[string]string{KeySignature: "HmacSHA256", KeyVerification: "HmacSHA256,HmacSHA512"}, map[string]checks.Severity{}},
		{"provider class", map[string]string{"config.providers": "file", "config.providers.file.class": "A"},
			map[string]string{"config.providers": "file", "config.providers.file.class": "B"}, map[string]checks.Severity{IDSettingDiffers: checks.Error}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mine := base()
			for k, v := range tc.mine {
				mine[k] = v
			}
			rs := Results(Subject{GroupID: "g", URL: "http://w3:8083/", Settings: Of(mine, "4.1"),
				Peers: []Peer{peer("http://w1:8083/", func(p workerconfig.Properties) {
					for k, v := range tc.grp {
						p[k] = v
					}
				})}})
			got := ids(rs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v: %s", got, tc.want, checks.Join(rs))
			}
			for id, sev := range tc.want {
				if got[id] != sev {
					t.Errorf("%s: %s, want %s (%s)", id, got[id], sev, checks.Join(rs))
				}
			}
		})
	}
}

// Workers that predate the fingerprint are unknown, not drift; the
// protocol in use (DescribeGroups) needs no fingerprint.
func TestJudgeWithoutFingerprints(t *testing.T) {
	me := base()
	me[KeyProtocol] = "eager"
	s := Subject{GroupID: "g", URL: "http://w3:8083/", Settings: Of(me, "4.1"), Peers: []Peer{{URL: "http://w1:8083/"}}}
	if rs := Results(s); len(rs) != 0 {
		t.Fatalf("unknown peers read as drift: %s", checks.Join(rs))
	}
	s.GroupProtocol = "sessioned"
	rs := Results(s)
	if len(rs) != 1 || rs[0].ID != IDStagedTransition || rs[0].Severity != checks.Error || !strings.Contains(rs[0].Summary, "sessioned on the group's members") {
		t.Fatalf("eager joining a sessioned group: %s", checks.Join(rs))
	}
	s.GroupProtocol = "compatible"
	if rs := Results(s); len(rs) != 1 || rs[0].Severity != checks.Warning {
		t.Fatalf("eager joining a compatible group: %s", checks.Join(rs))
	}
	s.GroupProtocol, s.SharedURL = "default", []string{"client host /10.0.0.7"}
	if rs := Results(s); len(rs) != 1 || rs[0].ID != IDAdvertisedURLShared || rs[0].Severity != checks.Error {
		t.Fatalf("a shared URL: %s", checks.Join(rs))
	}
}
