package workerconfig

import (
	"strings"
	"testing"
)

func TestIsSensitive(t *testing.T) {
	yes := []string{
		"ssl.key.password", "ssl.keystore.password", "producer.ssl.truststore.password",
		"ssl.keystore.key", "admin.ssl.keystore.certificate.chain", "ssl.truststore.certificates",
		"sasl.jaas.config", "consumer.sasl.jaas.config", "listeners.https.ssl.key.password",
		"sasl.oauthbearer.client.credentials.client.secret", "key.converter.basic.auth.user.info",
		"value.converter.bearer.auth.token", "some.api.key", "my.secret.thing", "x.token",
		"SSL.KEY.PASSWORD", "connection.key", "key", "aws.secret.access.key",
	}
	no := []string{
		"bootstrap.servers", "group.id", "ssl.keystore.location", "ssl.keystore.type",
		"sasl.mechanism", "sasl.oauthbearer.token.endpoint.url", "rest.advertised.host.name",
		"ssl.key.store", "config.providers.file.class",
	}
	for _, k := range yes {
		if !IsSensitive(k) {
			t.Errorf("IsSensitive(%q) = false", k)
		}
	}
	for _, k := range no {
		if IsSensitive(k) {
			t.Errorf("IsSensitive(%q) = true", k)
		}
	}
}

func TestRedactedAndError(t *testing.T) {
	p := Properties{"ssl.key.password": "S3CRET", "group.id": "g"}
	r := p.Redacted()
	if r["ssl.key.password"] != Hidden || r["group.id"] != "g" || p["ssl.key.password"] != "S3CRET" {
		t.Errorf("Redacted = %q (original %q)", r, p)
	}
	e := &Error{Property: "sasl.jaas.config", Problem: "is bad", Value: "S3CRET", Fix: "fix it"}
	if strings.Contains(e.Error(), "S3CRET") {
		t.Errorf("Error leaks: %s", e)
	}
	e = &Error{Property: "group.id", Problem: "is bad", Value: "g1"}
	if !strings.Contains(e.Error(), `"g1"`) {
		t.Errorf("Error hides a harmless value: %s", e)
	}
}

func TestAccessors(t *testing.T) {
	p := Properties{"a": " 12 ", "b": "x", "c": "\t", "admin.x": "1", "admin.": "2"}
	if n, err := p.Int("a", 0); err != nil || n != 12 {
		t.Errorf("Int(a) = %d, %v", n, err)
	}
	if _, err := p.Int("b", 0); err == nil {
		t.Error("Int(b) accepted x")
	}
	if n, _ := p.Int("c", 7); n != 7 {
		t.Errorf("Int(c) = %d, want default", n)
	}
	if _, err := (Properties{"x": "3000000000"}).Int("x", 0); err == nil {
		t.Error("Int accepted a value beyond 32 bits")
	}
	if got := p.WithPrefix("admin."); len(got) != 1 || got["x"] != "1" {
		t.Errorf("WithPrefix = %q", got)
	}
	if got := p.Get("c", "d"); got != "d" {
		t.Errorf("Get(blank) = %q", got)
	}
}
