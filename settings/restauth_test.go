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
			if s.RESTAuth() != tc.want {
				t.Errorf("got %+v, want %+v", s.RESTAuth(), tc.want)
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
		"missing file":     {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/nope"}, []string{"CONNECT_INIT_REST_PASSWORD_FILE names /run/secrets/nope, which cannot be read", "/run/secrets/"}},
		"empty file":       {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD_FILE=" + empty}, []string{"CONNECT_INIT_REST_PASSWORD_FILE names " + empty + ", which is empty"}},
		"directory":        {[]string{"CONNECT_INIT_REST_TOKEN_FILE=" + dir}, []string{"CONNECT_INIT_REST_TOKEN_FILE names " + dir + ", which is a directory"}},
		"both forms":       {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=hunter2", "CONNECT_INIT_REST_PASSWORD_FILE=" + empty}, []string{"CONNECT_INIT_REST_PASSWORD_FILE is set together with CONNECT_INIT_REST_PASSWORD"}},
		"user only":        {[]string{"CONNECT_INIT_REST_USERNAME=u"}, []string{"CONNECT_INIT_REST_PASSWORD is not set, but CONNECT_INIT_REST_USERNAME is"}},
		"password only":    {[]string{"CONNECT_INIT_REST_PASSWORD=hunter2"}, []string{"CONNECT_INIT_REST_USERNAME is not set"}},
		"token and basic":  {[]string{"CONNECT_INIT_REST_USERNAME=u", "CONNECT_INIT_REST_PASSWORD=hunter2", "CONNECT_INIT_REST_TOKEN=hunter3"}, []string{"CONNECT_INIT_REST_TOKEN is set together with"}},
		"two at once":      {[]string{"CONNECT_INIT_REST_USERNAME_FILE=/nope1", "CONNECT_INIT_REST_PASSWORD_FILE=/nope2"}, []string{"CONNECT_INIT_REST_USERNAME_FILE names /nope1", "CONNECT_INIT_REST_PASSWORD_FILE names /nope2"}},
		"with a bad other": {[]string{"CONNECT_INIT_REST_TOKEN_FILE=/nope", "CONNECT_INIT_LOCK_PERMITS=0"}, []string{"CONNECT_INIT_REST_TOKEN_FILE names /nope", "CONNECT_INIT_LOCK_PERMITS"}},
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
