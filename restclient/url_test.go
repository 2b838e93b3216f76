package restclient

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// urlForms are the ways a user puts credentials in a URL: with a scheme,
// without one, scheme-relative, with a path, a query and a fragment.
var urlForms = []string{
	"http://%s:%s@%s:8083/",
	"https://%s:%s@%s",
	"%s:%s@%s:8083",
	"//%s:%s@%s",
	"http://%s:%s@%s:8083/kafka-connect?x=1#f",
	"HTTP://%s:%s@%s:99999",
}

// parseOutput is everything Parse lets out for raw: the error's text in
// every form a caller prints it, the unwrapped chain's, the target.
func parseOutput(raw string) string {
	t, err := Parse(raw)
	out := []string{fmt.Sprintf("%+v %#v", t, t), RedactUserinfo(raw)}
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%+v %v", e, e))
		var ue *URLError
		if errors.As(e, &ue) {
			out = append(out, ue.Refusal(), ue.Fix, ue.URL)
		}
	}
	return strings.Join(out, "\n")
}

// leaks reports whether out holds pw in any printed form (as is, quoted,
// escaped), where the same output for the URL without a password does not
// hold it already (a password such as "http" is in every output).
func leaks(out, without, pw string) (string, bool) {
	forms := []string{pw, strings.Trim(strconv.Quote(pw), `"`), url.PathEscape(pw), url.QueryEscape(pw)}
	for _, f := range forms {
		if len(f) >= 3 && strings.Contains(out, f) && !strings.Contains(without, f) {
			return f, true
		}
	}
	return "", false
}

// FuzzParseNeverPrintsPassword: whatever the user, password and host, and
// whichever form the URL takes, no output of Parse holds the password
// (issue 48: "/", "#", "?", '"', "\" or a tab in a password, or no scheme,
// printed it), and a URL with credentials is never accepted.
func FuzzParseNeverPrintsPassword(f *testing.F) {
	for _, pw := range []string{"S3cr/etPw", "S3cr#etPw", "S3cr?etPw", `S3"cretPw`, `S3\cretPw`, "S3\tcretPw", "p@ss@word", "a:b://c", "%41dminPw"} {
		for i := range urlForms {
			f.Add("admin", pw, "connect-1", uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, user, pw, host string, form uint8) {
		tmpl := urlForms[int(form)%len(urlForms)]
		raw := fmt.Sprintf(tmpl, user, pw, host)
		if _, err := Parse(raw); err == nil {
			t.Fatalf("Parse(%q) accepted a URL with credentials", raw)
		}
		out := parseOutput(raw)
		without := parseOutput(fmt.Sprintf(tmpl, user, "", host))
		if f, ok := leaks(out, without, pw); ok {
			t.Fatalf("the password %q shows (as %q) in the output for %q:\n%s", pw, f, raw, out)
		}
	})
}

// FuzzRedactUserinfo: the redacted form of any text keeps nothing before
// its last "@" but the scheme.
func FuzzRedactUserinfo(f *testing.F) {
	f.Add("http://admin:S3cr/etPw@host:8083/")
	f.Add("u:pw@h:8083")
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactUserinfo(raw)
		if !strings.Contains(raw, "@") {
			if got != raw {
				t.Fatalf("RedactUserinfo(%q) = %q, changed a URL without user information", raw, got)
			}
			return
		}
		if strings.Count(got, "@") != 1 || !strings.HasSuffix(got, raw[strings.LastIndex(raw, "@"):]) {
			t.Fatalf("RedactUserinfo(%q) = %q", raw, got)
		}
	})
}

// TestParseRefusals: each refusal names the URL (redacted), what is wrong
// and the fix; the parser's error stays in the chain.
func TestParseRefusals(t *testing.T) {
	for _, c := range []struct{ raw, problem, fix string }{
		{"http://admin:S3cr/etPw@host:8083/", `"http://***@host:8083/" carries credentials`, "CONNECT_INIT_REST_USERNAME"},
		{"u:pw@h:8083", `"***@h:8083" carries credentials`, "CONNECT_INIT_REST_PASSWORD"},
		{"//u:pw@h", `"//***@h" carries credentials`, "CONNECT_INIT_REST_PASSWORD"},
		{"127.0.0.1:8083", "has no scheme", "add http://"},
		{"localhost:8083", "has no scheme", "e.g. http://localhost:8083"},
		{"http://h:99999/", "has port 99999, not one from 1 to 65535", "REST port"},
		{"http://h:0/", "has port 0", "REST port"},
		{"ftp://h/", `has scheme "ftp", not http or https`, "scheme://host:port"},
		{"http://h:8083/?x", "query or fragment", "path prefix"},
		{"http://h:8x/", "cannot be parsed: invalid port", "scheme://host:port"},
	} {
		_, err := Parse(c.raw)
		var ue *URLError
		if !errors.As(err, &ue) {
			t.Errorf("Parse(%q) = %v, not a *URLError", c.raw, err)
			continue
		}
		if !strings.Contains(ue.Refusal(), c.problem) || !strings.Contains(ue.Fix, c.fix) {
			t.Errorf("Parse(%q): %q / fix %q; want %q / %q", c.raw, ue.Refusal(), ue.Fix, c.problem, c.fix)
		}
	}
	_, err := Parse("http://h:8x/")
	var pe *url.Error
	if !errors.As(err, &pe) {
		t.Errorf("the parser's error is not kept in the chain: %#v", err)
	}
}
