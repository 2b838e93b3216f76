package apply

import "testing"

func TestRedactor(t *testing.T) {
	r := NewRedactor()
	for key, secret := range map[string]bool{
		"connection.password": true, "password": true, "aws.secret.access.key": true, "client_secret": true,
		"api.token": true, "ssl.key": true, "sasl.jaas.config": true, "topic": false, "file": false,
		"connection.url": false, "key.converter": false,
	} {
		if got := r.Secret(key); got != secret {
			t.Errorf("Secret(%q) = %v, want %v", key, got, secret)
		}
	}
	if r.Secret("db.pass") {
		t.Fatal("db.pass is not secret by name")
	}
	r.MarkPassword("db.pass")
	if !r.Secret("db.pass") {
		t.Error("a PASSWORD-typed key is secret")
	}
	if got := r.Value("connection.password", "${file:/s:pw}"); got != "${file:/s:pw}" {
		t.Errorf("a reference is shown: %q", got)
	}
	if got := r.Value("connection.password", "prefix-${file:/s:pw}"); got != Hidden {
		t.Errorf("a partly literal secret is hidden: %q", got)
	}
	r.Learn(map[string]string{"connection.password": "hunter2", "db.pass": "pa$$", "topic": "hunter"})
	if got := r.Scrub("login failed for hunter2 with pa$$ on topic hunter"); got != "login failed for [hidden] with [hidden] on topic hunter" {
		t.Errorf("Scrub = %q", got)
	}
}
