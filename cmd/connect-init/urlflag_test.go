package main

import (
	"strings"
	"testing"
)

// TestURLFlagRefusals: a bad --url of apply and offsets is bad input
// (exit 2, nothing reached), its message names --url, the URL without any
// password, what is wrong and the fix; a password never shows, neither
// in the log nor in the JSON document's target (issue 48, issue 52).
func TestURLFlagRefusals(t *testing.T) {
	env, conns := interfaceEnv(t)
	dir := t.TempDir()
	for _, c := range []struct{ url, want, secret string }{
		{"http://admin:S3cr/etPw@host:8083/", "carries credentials", "S3cr/etPw"},
		{"http://admin:S3cr#etPw@host:8083/", "carries credentials", "S3cr#etPw"},
		{"http://admin:S3cr?etPw@host:8083/", "carries credentials", "S3cr?etPw"},
		{`http://admin:S3"cr\etPw@host:8083/`, "carries credentials", `cr\etPw`},
		{"http://admin:S3cr\tetPw@host:8083/", "carries credentials", "etPw"},
		{"u:S3cretPw@h:8083", "carries credentials", "S3cretPw"},
		{"//u:S3cretPw@h", "carries credentials", "S3cretPw"},
		{"http://127.0.0.1:99999/", "has port 99999, not one from 1 to 65535", ""},
		{"127.0.0.1:8083", "add http://", ""},
	} {
		for _, args := range [][]string{
			{"apply", "--dir", dir, "--dry-run", "--json", "--url", c.url},
			{"offsets", "export", "--connector", "c", "--url", c.url},
		} {
			code, stdout, stderr := runIn(t, env, args...)
			if code != 2 {
				t.Errorf("%q: exit %d, want 2\n%s%s", args, code, stdout, stderr)
			}
			if !strings.Contains(stderr, "--url") || !strings.Contains(stderr, c.want) {
				t.Errorf("%q: the message does not name --url and say %q:\n%s", args, c.want, stderr)
			}
			if c.secret != "" && (strings.Contains(stdout+stderr, c.secret) || strings.Contains(stdout+stderr, strings.ReplaceAll(c.secret, `\`, `\\`))) {
				t.Errorf("%q: the password is printed:\n%s%s", args, stdout, stderr)
			}
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections to the brokers", n)
	}
}
