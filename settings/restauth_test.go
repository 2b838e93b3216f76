package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/restclient"
)

func TestRESTAuthFromVariablesAndFiles(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "password")
	if err := os.WriteFile(secret, []byte("from-file-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("tok\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env  []string
		want restclient.Auth
	}{
		"none":           {nil, restclient.Auth{}},
		"basic":          {[]string{"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD=pw"}, restclient.Auth{Username: "admin", Password: "pw"}},
		"password file":  {[]string{"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE=" + secret}, restclient.Auth{Username: "admin", Password: "from-file-pw"}},
		"token file":     {[]string{"CONNECT_INIT_REST_TOKEN_FILE=" + token}, restclient.Auth{Token: "tok"}},
		"empty is unset": {[]string{"CONNECT_INIT_REST_USERNAME=", "CONNECT_INIT_REST_TOKEN=t"}, restclient.Auth{Token: "t"}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := LoadSettings(tc.env)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.RESTAuth().Current()
			if err != nil || got.Username != tc.want.Username || got.Password != tc.want.Password || got.Token != tc.want.Token {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestRESTAuthRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env  []string
		want []string
	}{
		"missing file":           {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/nope"}, []string{"CONNECT_INIT_REST_PASSWORD_FILE names /run/secrets/nope, which cannot be read", "/run/secrets/"}},
		"empty file":             {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=" + empty}, []string{"CONNECT_INIT_REST_PASSWORD_FILE names " + empty + ", which is empty"}},
		"directory":              {[]string{"CONNECT_INIT_REST_TOKEN_FILE=" + dir}, []string{"CONNECT_INIT_REST_TOKEN_FILE names " + dir + ", which is a directory"}},
		"both forms":             {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=hunter2", "CONNECT_INIT_REST_PASSWORD_FILE=" + empty}, []string{"CONNECT_INIT_REST_PASSWORD_FILE is set together with CONNECT_INIT_REST_PASSWORD"}},
		"user only":              {[]string{"CONNECT_INIT_REST_USERNAME=u"}, []string{"CONNECT_INIT_REST_PASSWORD is not set, but CONNECT_INIT_REST_USERNAME is"}},
		"password only":          {[]string{"CONNECT_INIT_REST_PASSWORD=hunter2"}, []string{"CONNECT_INIT_REST_USERNAME is not set"}},
		"token and basic":        {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=hunter2", "CONNECT_INIT_REST_TOKEN=hunter3"}, []string{"CONNECT_INIT_REST_TOKEN is set together with"}},
		"two at once":            {[]string{"CONNECT_INIT_REST_USERNAME_FILE=/nope1", "CONNECT_INIT_REST_PASSWORD_FILE=/nope2"}, []string{"CONNECT_INIT_REST_USERNAME_FILE names /nope1", "CONNECT_INIT_REST_PASSWORD_FILE names /nope2"}},
		"token and a blank line": {[]string{"CONNECT_INIT_REST_TOKEN_FILE=" + write(t, dir, "tok-blank", "hunter-tok\n\n")}, []string{"CONNECT_INIT_REST_TOKEN_FILE names " + dir + "/tok-blank, which begins or ends with white space"}},
		"two lines":              {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=" + write(t, dir, "pw-2", "hunter2\nhunter3\n")}, []string{"CONNECT_INIT_REST_PASSWORD_FILE names " + dir + "/pw-2, which holds more than one line"}},
		"leading space":          {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=" + write(t, dir, "pw-sp", " hunter2\n")}, []string{"which begins or ends with white space"}},
		"a control byte":         {[]string{"CONNECT_INIT_REST_TOKEN_FILE=" + write(t, dir, "tok-ctl", "hunter\x01tok")}, []string{"which holds a control character (byte 7)"}},
		"a tab in a variable":    {[]string{"CONNECT_INIT_REST_TOKEN=hunter\ttok"}, []string{"CONNECT_INIT_REST_TOKEN value holds a control character"}},
		// Issue 48: a plain variable with white space around it was trimmed
		// silently, where docs/security.md (and the _FILE forms) refuse it.
		"space around a password": {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD= hunter2 "}, []string{"CONNECT_INIT_REST_PASSWORD value begins or ends with white space"}},
		"newline after a token":   {[]string{"CONNECT_INIT_REST_TOKEN=hunter-tok\n"}, []string{"CONNECT_INIT_REST_TOKEN value begins or ends with white space"}},
		"space after a user":      {[]string{"CONNECT_INIT_REST_USERNAME=admin ", "CONNECT_INIT_REST_PASSWORD=hunter2"}, []string{"CONNECT_INIT_REST_USERNAME value begins or ends with white space"}},
		"a colon in the user":     {[]string{"CONNECT_INIT_REST_USERNAME=a:b", "CONNECT_INIT_REST_PASSWORD=hunter2"}, []string{"CONNECT_INIT_REST_USERNAME value holds ':'"}},
		"with a bad other":        {[]string{"CONNECT_INIT_REST_TOKEN_FILE=/nope", "CONNECT_INIT_LOCK_PERMITS=0"}, []string{"CONNECT_INIT_REST_TOKEN_FILE names /nope", "CONNECT_INIT_LOCK_PERMITS"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadSettings(tc.env)
			if err == nil || !AsConfigError(err) {
				t.Fatalf("want a config error (exit 2), got %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter") {
				t.Errorf("error shows a secret: %q", err)
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A _FILE secret is read again for each request: a rotated one is sent
// from the next request on, and one that can no longer be read is an
// error naming the variable, never a request without credentials.
func TestRESTAuthFileReadAgain(t *testing.T) {
	dir := t.TempDir()
	pw := write(t, dir, "pw", "first-pw\n")
	s, err := LoadSettings([]string{"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE=" + pw})
	if err != nil {
		t.Fatal(err)
	}
	a := s.RESTAuth() // as a long-lived client keeps it
	if got, err := a.Current(); err != nil || got.Password != "first-pw" {
		t.Fatalf("first read: %v, %v", got.Password != "", err)
	}
	write(t, dir, "pw", "rotated-pw\n")
	if got, err := a.Current(); err != nil || got.Password != "rotated-pw" {
		t.Fatalf("after the rotation: password rotated %v, %v", got.Password == "rotated-pw", err)
	}
	if err := os.Remove(pw); err != nil {
		t.Fatal(err)
	}
	got, err := a.Current()
	if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_REST_PASSWORD_FILE") || got.Given() {
		t.Fatalf("file gone: %+v, %v; want an error naming CONNECT_INIT_REST_PASSWORD_FILE and no credentials", got, err)
	}
	if strings.Contains(err.Error(), "pw\n") || strings.Contains(err.Error(), "rotated-pw") {
		t.Errorf("error shows a secret: %v", err)
	}
}
