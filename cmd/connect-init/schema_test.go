package main

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The tests of this file run the built binary, as a pipeline does, and
// validate every --json document it prints against its JSON Schema in
// docs/schemas, on success, refusal, bad input and bad usage.

const schemaBase = "https://connect-init.dev/schemas/"

var (
	builtOnce sync.Once
	builtPath string
	builtErr  error
)

// builtBinary is connect-init built once for the package's tests.
func builtBinary(t *testing.T) string {
	t.Helper()
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "connect-init-schema-")
		if err != nil {
			builtErr = err
			return
		}
		builtPath = filepath.Join(dir, "connect-init")
		out, err := exec.Command("go", "build", "-o", builtPath, ".").CombinedOutput()
		if err != nil {
			builtErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if builtErr != nil {
		t.Fatalf("build connect-init: %v", builtErr)
	}
	return builtPath
}

// schemaFor compiles docs/schemas/<cmd>.json with the envelope it refers to.
func schemaFor(t *testing.T, cmd string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	files, err := filepath.Glob("../../docs/schemas/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schemas in docs/schemas (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(schemaBase+filepath.Base(f), doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	s, err := c.Compile(schemaBase + cmd + ".json")
	if err != nil {
		t.Fatalf("compile the schema of %s: %v", cmd, err)
	}
	return s
}

// validate checks that stdout is exactly one document valid against s.
func validate(s *jsonschema.Schema, stdout string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(stdout))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// runBinary runs the built binary in a clean environment.
func runBinary(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	cmd.Env, cmd.Dir = append([]string{}, env...), t.TempDir() // never the test's own environment
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// fakeConnectURL answers as a Connect worker with no connector, whose
// validation refuses a config without "topics" when refuse is set.
func fakeConnectURL(t *testing.T, refuse bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Write([]byte(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}`))
		case r.URL.Path == "/health":
			w.Write([]byte(`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`))
		case r.URL.Path == "/connectors" && r.Method == http.MethodGet:
			w.Write([]byte(`{}`))
		case strings.HasSuffix(r.URL.Path, "/config/validate"):
			if refuse {
				w.Write([]byte(`{"name":"C","error_count":1,"groups":[],"configs":[{"definition":{"name":"topics","type":"LIST"},"value":{"name":"topics","value":null,"errors":["Missing required configuration \"topics\""]}}]}`))
				return
			}
			w.Write([]byte(`{"name":"C","error_count":0,"groups":[],"configs":[]}`))
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestApplyJSONValidates: apply --dry-run --json prints one document valid
// against docs/schemas/apply.json whatever happens, and a failed plan
// says nothing was planned.
func TestApplyJSONValidates(t *testing.T) {
	s := schemaFor(t, "apply")
	dirOf := func(files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	good := dirOf(map[string]string{"sink.json": `{"name": "sink", "config": {"connector.class": "C", "topics": "t"}}`})
	typo := dirOf(map[string]string{"t.json": "{\n \"name\": \"x\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"})
	empty := t.TempDir()
	refused := "http://127.0.0.1:1" // nothing listens on port 1
	ok, refusing := fakeConnectURL(t, false), fakeConnectURL(t, true)
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		planned bool
		want    string // in stdout
	}{
		{"changes pending", []string{"--dir", good, "--url", ok, "--detailed-exitcode"}, 3, true, `"changes_pending": true`},
		{"plan shown", []string{"--dir", good, "--url", ok}, 0, true, `"action": "create"`},
		{"nothing to do", []string{"--dir", empty, "--url", ok, "--detailed-exitcode"}, 0, true, `"changes_pending": false`},
		{"validation refused", []string{"--dir", good, "--url", refusing}, 2, true, `"key": "topics",`},
		{"typo in a file", []string{"--dir", typo, "--url", ok}, 2, false, `"line": 3`},
		{"empty prune", []string{"--dir", empty, "--url", ok, "--prune"}, 2, false, `refusing to prune`},
		{"connection refused", []string{"--dir", good, "--url", refused}, 1, false, `connection refused`},
		{"bad flag", []string{"--dir", good, "--bogus"}, 2, false, `"flag": "--bogus"`},
		{"json without dry-run", []string{"--dir", good}, 2, false, `"flag": "--json"`},
	} {
		args := append([]string{"apply", "--json"}, tc.args...)
		if tc.name != "json without dry-run" {
			args = append(args, "--dry-run")
		}
		code, stdout, stderr := runBinary(t, nil, args...)
		if code != tc.code || !strings.Contains(stdout, tc.want) {
			t.Errorf("%s: exit %d, want %d with %s:\n%s\n%s", tc.name, code, tc.code, tc.want, stdout, stderr)
		}
		if err := validate(s, stdout); err != nil {
			t.Errorf("%s: the document does not validate against docs/schemas/apply.json: %v\n%s", tc.name, err, stdout)
		}
		var plan struct {
			Planned bool `json:"planned"`
		}
		env := decodeEnvelope(t, stdout, &plan)
		if env.ExitCode != code || plan.Planned != tc.planned {
			t.Errorf("%s: exit_code %d planned %v, want %d %v", tc.name, env.ExitCode, plan.Planned, code, tc.planned)
		}
		if !tc.planned && strings.Contains(stdout, "changes_pending") {
			t.Errorf("%s: no plan, yet the document has changes_pending:\n%s", tc.name, stdout)
		}
	}
}

// TestConfigAndDoctorJSONValidate: config --json and doctor --json, on
// success or failure, bad settings and bad usage, against their schemas.
func TestConfigAndDoctorJSONValidate(t *testing.T) {
	worker := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1", "CONNECT_INIT_TIMEOUT=2s"}
	badSetting := append(append([]string{}, worker...), "CONNECT_INIT_LOCK_MODE=wrker")
	for _, cmd := range []string{"config", "doctor"} {
		s := schemaFor(t, cmd)
		for _, tc := range []struct {
			name string
			env  []string
			args []string
			code int
		}{
			{"valid settings", worker, nil, map[string]int{"config": 0, "doctor": 1}[cmd]}, // doctor: no broker answers
			{"bad setting", badSetting, nil, 2},
			{"no worker settings", nil, nil, 2},
			{"bad flag", worker, []string{"--bogus"}, 2},
		} {
			code, stdout, stderr := runBinary(t, tc.env, append([]string{cmd, "--json"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("%s %s: exit %d, want %d:\n%s\n%s", cmd, tc.name, code, tc.code, stdout, stderr)
			}
			if err := validate(s, stdout); err != nil {
				t.Errorf("%s %s: the document does not validate against docs/schemas/%s.json: %v\n%s", cmd, tc.name, cmd, err, stdout)
			}
			if env := decodeEnvelope(t, stdout, nil); env.Command != cmd || env.ExitCode != code {
				t.Errorf("%s %s: envelope %+v, exit %d", cmd, tc.name, env, code)
			}
		}
	}
}

// TestSchemasRefuse: the schemas are not vacuous: documents that break
// the contract fail them.
func TestSchemasRefuse(t *testing.T) {
	for _, tc := range []struct{ schema, doc string }{
		{"apply", `{"schema_version":3,"command":"apply","version":"v","exit_code":1,"errors":[{"problem":"p"}],"result":{"planned":false,"target":"u","changes_pending":false}}`},
		{"apply", `{"schema_version":3,"command":"apply","version":"v","exit_code":2,"errors":[],"result":{"planned":false,"target":""}}`},
		{"apply", `{"schema_version":3,"command":"apply","version":"v","exit_code":3,"errors":[],"result":{"planned":false,"target":""}}`},
		{"apply", `{"schema_version":3,"command":"apply","version":"v","exit_code":0,"errors":[],"result":null}`},
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":0,"errors":[]}`},
		{"doctor", `{"schema_version":3,"command":"doctor","version":"v","exit_code":2,"errors":[{"problem":"p"}],"result":{}}`},
		{"doctor", `{"schema_version":3,"command":"config","version":"v","exit_code":0,"errors":[],"result":null}`},
		// One entry shape: always a fix; one of setting, flag, file; a line only with a file.
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":2,"errors":[{"setting":"X","problem":"p"}],"result":null}`},
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":2,"errors":[{"setting":"X","flag":"--x","problem":"p","fix":"f"}],"result":null}`},
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":2,"errors":[{"setting":"X","file":"f","problem":"p","fix":"f"}],"result":null}`},
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":2,"errors":[{"setting":"X","line":3,"problem":"p","fix":"f"}],"result":null}`},
		{"config", `{"schema_version":3,"command":"config","version":"v","exit_code":2,"errors":[{"flag":"timeout","problem":"p","fix":"f"}],"result":null}`},
		{"config", `{"schema_version":2,"command":"config","version":"v","exit_code":2,"errors":[{"setting":"X","problem":"p","fix":"f"}],"result":null}`},
	} {
		if err := validate(schemaFor(t, tc.schema), tc.doc); err == nil {
			t.Errorf("docs/schemas/%s.json accepts %s", tc.schema, tc.doc)
		}
	}
}

// TestDoctorWatchJSONValidates: doctor --watch --json is a stream of
// envelopes, one per line, each valid against docs/schemas/doctor.json;
// SIGTERM ends it with 143.
func TestDoctorWatchJSONValidates(t *testing.T) {
	s := schemaFor(t, "doctor")
	cmd := exec.Command(builtBinary(t), "doctor", "--watch", "--json", "--interval=1s")
	cmd.Env = []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1", "CONNECT_INIT_TIMEOUT=2s"}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Signal(syscall.SIGTERM)
	werr := cmd.Wait()
	if err != nil {
		t.Fatalf("no line: %v\n%s", err, stderr.String())
	}
	if verr := validate(s, line); verr != nil {
		t.Errorf("the stream's line does not validate against docs/schemas/doctor.json: %v\n%s", verr, line)
	}
	if env := decodeEnvelope(t, line, nil); env.ExitCode != 1 || len(env.Errors) == 0 {
		t.Errorf("no broker answers: want exit_code 1 with errors, got %+v", env)
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 143 {
		t.Errorf("SIGTERM: %v, want exit 143\n%s", werr, stderr.String())
	}
	// Bad usage under --watch is one envelope too.
	code, stdout, _ := runBinary(t, cmd.Env, "doctor", "--watch", "--json", "--interval=10ms")
	if err := validate(s, stdout); err != nil || code != 2 {
		t.Errorf("--interval=10ms: exit %d, %v\n%s", code, err, stdout)
	}
}

// TestVersionJSONValidates: version --json is the envelope with the build
// information as its result, on success and on bad usage.
func TestVersionJSONValidates(t *testing.T) {
	s := schemaFor(t, "version")
	for _, tc := range []struct {
		args []string
		code int
	}{{nil, 0}, {[]string{"--bogus"}, 2}} {
		code, stdout, stderr := runBinary(t, nil, append([]string{"version", "--json"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("version --json %v: exit %d, want %d:\n%s\n%s", tc.args, code, tc.code, stdout, stderr)
		}
		if err := validate(s, stdout); err != nil {
			t.Errorf("version --json %v: the document does not validate against docs/schemas/version.json: %v\n%s", tc.args, err, stdout)
		}
		var info struct{ Version string }
		if env := decodeEnvelope(t, stdout, &info); env.Command != "version" || env.ExitCode != code || (code == 0 && info.Version == "") {
			t.Errorf("version --json %v: envelope %+v, result %+v", tc.args, env, info)
		}
	}
}

// TestApplyURLCredentialsNeverPrinted: a password typed into --url is
// refused as bad input, and neither the log nor the JSON document prints
// it (the requests would never have sent it).
func TestApplyURLCredentialsNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runBinary(t, nil, "apply", "--dir", dir, "--dry-run", "--json", "--url", "https://admin:s3cret-pw@connect.example:8083/kafka-connect")
	if code != 2 {
		t.Errorf("exit %d, want 2:\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "s3cret-pw") {
		t.Errorf("the password is printed:\n%s\n%s", stdout, stderr)
	}
	if err := validate(schemaFor(t, "apply"), stdout); err != nil || !strings.Contains(stdout, "CONNECT_INIT_REST_USERNAME") {
		t.Errorf("document: %v\n%s", err, stdout)
	}
}
