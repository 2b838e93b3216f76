package workerconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func providerProps(extra Properties) Properties {
	p := Properties{
		"config.providers":                 "file,env,directory",
		"config.providers.file.class":      FileConfigProviderClass,
		"config.providers.env.class":       EnvVarConfigProviderClass,
		"config.providers.directory.class": DirectoryConfigProviderClass,
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func TestResolveProviders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.properties"), []byte("user=alice\npw = s3cr\\u00e9t\n"), 0o600)
	os.Mkdir(filepath.Join(dir, "secrets"), 0o700)
	os.WriteFile(filepath.Join(dir, "secrets", "db_password"), []byte("hunter2\n"), 0o600)
	os.Symlink(filepath.Join(dir, "secrets", "db_password"), filepath.Join(dir, "secrets", "link"))
	env := []string{"TOKEN=t0k", "TOKEN=t0k2", "EMPTY="}
	p := providerProps(Properties{
		"sasl.jaas.config": `x required username="${file:` + dir + `/s.properties:user}" password="${file:` + dir + `/s.properties:pw}";`,
		"a":                "${env:TOKEN}",
		"b":                "${directory:" + dir + "/secrets:db_password}",
		"c":                "${directory:" + dir + "/secrets:link}",
		"d":                "${env:EMPTY}x",
		"plain":            "no refs ${notref} $ {x:y}",
		"nested":           "${env:NESTED}",
	})
	env = append(env, "NESTED=${env:TOKEN}")
	got, err := ResolveProviders(p, env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"sasl.jaas.config": `x required username="alice" password="s3crét";`,
		"a":                "t0k2", // last occurrence, as Java's System.getenv
		"b":                "hunter2\n",
		"c":                "hunter2\n",
		"d":                "x",
		"plain":            "no refs ${notref} $ {x:y}",
		"nested":           "${env:TOKEN}", // no second pass
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestProviderRefSyntax(t *testing.T) {
	// ConfigTransformer.DEFAULT_PATTERN groups, as Java's regex yields them.
	cases := []struct{ in, provider, path, key string }{
		{"${file:/a/b:c}", "file", "/a/b", "c"},
		{"${env:X}", "env", "", "X"},
		{"${a:b:c:d}", "a", "b", "c:d"},
		{"${:x}", "", "", "x"},
		{"${a:${b:c}", "a", "${b", "c"},
	}
	for _, c := range cases {
		m := providerRef.FindStringSubmatch(c.in)
		if m == nil || m[1] != c.provider || m[3] != c.path || m[4] != c.key {
			t.Errorf("%q: got %q", c.in, m)
		}
	}
	if providerRef.MatchString("${nocolon}") {
		t.Error("${nocolon} must not match")
	}
}

func TestResolveProvidersErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.properties"), []byte("k=v\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.properties"), []byte("k=\xe9\n"), 0o600)
	cases := []struct {
		name  string
		props Properties
		prop  string // property the error must name
		hint  string
	}{
		{"undeclared provider", Properties{"x.password": "${vault:/p:k}"}, "x.password", "does not declare"},
		{"listed with space", Properties{"config.providers": "file, env", "a": "${env:X}"}, "a", `"env"`},
		{"missing key", providerProps(Properties{"a": "${file:" + dir + "/s.properties:nope}"}), "a", `no key "nope"`},
		{"missing file", providerProps(Properties{"a": "${file:" + dir + "/none:k}"}), "a", "cannot read"},
		{"invalid utf8", providerProps(Properties{"a": "${file:" + dir + "/bad.properties:k}"}), "a", "UTF-8"},
		{"file without path", providerProps(Properties{"a": "${file:k}"}), "a", "needs"},
		{"env with path", providerProps(Properties{"a": "${env:/x:HOME}"}), "a", "takes no path"},
		{"env unset", providerProps(Properties{"a": "${env:NOPE}"}), "a", "not set"},
		{"dir missing file", providerProps(Properties{"a": "${directory:" + dir + ":none}"}), "a", "no regular file"},
		{"dir not dir", providerProps(Properties{"a": "${directory:" + dir + "/s.properties:k}"}), "a", "not a directory"},
		{"dir subpath", providerProps(Properties{"a": "${directory:/:" + dir[1:] + "/s.properties}"}), "a", "not a file name"},
		{"unknown class", Properties{"config.providers": "v", "config.providers.v.class": "com.x.Vault", "a": "${v:p:k}"}, "a", "cannot evaluate"},
		{"allowed.paths relative", providerProps(Properties{"config.providers.file.param.allowed.paths": "rel"}), "config.providers.file.param.allowed.paths", "not absolute"},
		{"allowed.paths missing", providerProps(Properties{"config.providers.file.param.allowed.paths": dir + "/none"}), "config.providers.file.param.allowed.paths", "does not exist"},
		{"outside allowed.paths", providerProps(Properties{"config.providers.file.param.allowed.paths": dir + "/sub", "a": "${file:" + dir + "/sub/../s.properties:k}"}), "a", "outside"},
		{"allowlist", providerProps(Properties{"config.providers.env.param.allowlist.pattern": "ALLOWED_.*", "a": "${env:HOME}"}), "a", "allowlist"},
		{"bad allowlist", providerProps(Properties{"config.providers.env.param.allowlist.pattern": "(?<=x)"}), "config.providers.env.param.allowlist.pattern", "regular expression"},
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	for _, c := range cases {
		_, err := ResolveProviders(c.props, []string{"HOME=/root"})
		var we *Error
		if !errors.As(err, &we) {
			t.Errorf("%s: err = %v, want *Error", c.name, err)
			continue
		}
		if we.Property != c.prop || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("%s: err = %v (property %q), want property %q and %q", c.name, err, we.Property, c.prop, c.hint)
		}
	}
}

func TestResolveProvidersAllowed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.properties"), []byte("k=v\n"), 0o600)
	p := providerProps(Properties{
		"config.providers.file.param.allowed.paths":    "/nonexistent-but-unused-is-fatal-anyway," + dir,
		"config.providers.env.param.allowlist.pattern": "OK_.*",
		"a": "${file:" + dir + "/./s.properties:k}",
		"b": "${env:OK_1}",
	})
	if _, err := ResolveProviders(p, []string{"OK_1=1"}); err == nil {
		t.Error("a nonexistent allowed path must fail, as AllowedPaths does")
	}
	p["config.providers.file.param.allowed.paths"] = dir
	got, err := ResolveProviders(p, []string{"OK_1=1"})
	if err != nil || got["a"] != "v" || got["b"] != "1" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestResolveErrorsHideSecrets(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.properties"), []byte("pw=TOPSECRET\n"), 0o600)
	p := providerProps(Properties{
		"ssl.key.password": "SECRETPREFIX${file:" + dir + "/s.properties:pw}${file:" + dir + "/s.properties:missing}",
		"sasl.jaas.config": "literal p${ss:w}rd",
	})
	_, err := ResolveProviders(p, nil)
	if err == nil {
		t.Fatal("want error")
	}
	for _, s := range []string{"TOPSECRET", "SECRETPREFIX", "ss", "p${"} {
		if strings.Contains(err.Error(), s) && s != "ss" || (s == "ss" && strings.Contains(err.Error(), `"ss"`)) {
			t.Errorf("error %q leaks %q", err, s)
		}
	}
	delete(p, "ssl.key.password")
	_, err = ResolveProviders(p, nil)
	if err == nil || strings.Contains(err.Error(), `"ss"`) || strings.Contains(err.Error(), "literal") {
		t.Errorf("sensitive undeclared reference leaked: %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "worker.properties")
	os.WriteFile(file, []byte("group.id=from-file\nbootstrap.servers=b:9092\nsasl.jaas.config=${env:JAAS}\n"), 0o600)
	env := []string{
		"CONNECT_GROUP_ID=from-env",
		"CONNECT_CONFIG_PROVIDERS=env",
		"CONNECT_CONFIG_PROVIDERS_ENV_CLASS=" + EnvVarConfigProviderClass,
		"JAAS=j",
		"CONNECT_INIT_SECRET=x",
		"CONNECT_X=${env:CONNECT_INIT_SECRET}",
		"HOST=mesos-host", "PORT0=31000",
	}
	_, err := Load(env, file)
	if err == nil || !strings.Contains(err.Error(), "CONNECT_X (worker property x)") {
		t.Errorf("CONNECT_INIT_* must be invisible to ${env:}: err = %v", err)
	}
	env = env[:len(env)-3]
	env = append(env, "HOST=mesos-host", "PORT0=31000")
	p, err := Load(env, file)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"group.id":                  "from-env",
		"bootstrap.servers":         "b:9092",
		"sasl.jaas.config":          "j",
		"rest.advertised.host.name": "mesos-host",
		"rest.advertised.port":      "31000",
		"rest.port":                 "8083",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	// An explicit advertised host name is kept.
	p, _ = Load(append(env, "CONNECT_REST_ADVERTISED_HOST_NAME=w1"), "")
	if p["rest.advertised.host.name"] != "w1" {
		t.Errorf("rest.advertised.host.name = %q", p["rest.advertised.host.name"])
	}
	if _, err := Load(nil, filepath.Join(dir, "missing")); err == nil {
		t.Error("missing worker file accepted")
	}
	var we *Error
	if _, err := Load([]string{`CONNECT_X=\u12`}, ""); !errors.As(err, &we) || we.Property != "x" || !strings.Contains(err.Error(), "CONNECT_X") {
		t.Errorf("malformed escape in env: %v", err)
	}
}

// TestResolveProvidersRedactsSecrets: every way a reference can fail
// names, for a sensitive property, no part of the value (a password may
// only look like a reference: its "path" and "key" are then the
// password), yet still says what kind of failure it is; for any other
// property the error names the path and key in full.
func TestResolveProvidersRedactsSecrets(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.properties"), []byte("k=v\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "bad.properties"), []byte("k=\xe9\n"), 0o600)
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	const m = "S3CRET"
	cases := []struct {
		name, ref, kind string
		extra           Properties
	}{
		{"undeclared", "${" + m + ":/" + m + ":" + m + "}", "does not declare", nil},
		{"missing file", "${file:" + dir + "/" + m + ":" + m + "}", "cannot be read", nil},
		{"missing key", "${file:" + dir + "/s.properties:" + m + "}", "no such key", nil},
		{"invalid utf8", "${file:" + dir + "/bad.properties:" + m + "}", "UTF-8", nil},
		{"file without path", "${file:" + m + "}", "needs a reference of the form", nil},
		{"nul in path", "${file:/" + m + "\x00:" + m + "}", "NUL", nil},
		{"outside allowed.paths", "${file:" + dir + "/" + m + ":" + m + "}", "outside", Properties{"config.providers.file.param.allowed.paths": dir + "/sub"}},
		{"dir missing file", "${directory:" + dir + ":" + m + "}", "no such regular file", nil},
		{"dir not dir", "${directory:" + dir + "/" + m + ":k}", "not a directory", nil},
		{"dir subpath", "${directory:" + dir + ":" + m + "/x}", "not a file name", nil},
		{"env with path", "${env:/" + m + ":" + m + "}", "takes no path", nil},
		{"env unset", "${env:" + m + "}", "not set", nil},
		{"allowlist", "${env:" + m + "}", "allowlist", Properties{"config.providers.env.param.allowlist.pattern": "OK_.*"}},
		{"unknown class", "${v:" + m + ":" + m + "}", "cannot evaluate", Properties{"config.providers": "v", "config.providers.v.class": "com.x.Vault"}},
	}
	for _, c := range cases {
		for _, key := range []string{"ssl.key.password", "producer.sasl.jaas.config", "client.id"} {
			p := providerProps(c.extra)
			p[key] = "x" + c.ref + "y"
			_, err := ResolveProviders(p, nil)
			var we *Error
			if !errors.As(err, &we) || we.Property != key {
				t.Errorf("%s, %s: want an *Error about %s, got %v", c.name, key, key, err)
				continue
			}
			msg := err.Error()
			if !IsSensitive(key) {
				if !strings.Contains(msg, `provider "`) {
					t.Errorf("%s, %s: the full error should name the provider:\n%v", c.name, key, msg)
				}
				continue
			}
			if strings.Contains(msg, m) || strings.Contains(msg, dir) || !strings.Contains(msg, c.kind) || !strings.Contains(msg, "not shown") {
				t.Errorf("%s, %s: want %q, \"not shown\" and no part of the value:\n%v", c.name, key, c.kind, msg)
			}
		}
	}
}
