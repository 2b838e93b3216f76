package examples

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/settings"
	"go.yaml.in/yaml/v3"
)

// binDir holds the connect-init binary built for the tests.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connect-init-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	subcommandsOnce sync.Once
	subcommandsSet  map[string]bool
	subcommandsErr  error
)

// subcommands builds connect-init from ../cmd/connect-init and returns the
// commands listed by `connect-init help`.
func subcommands(t *testing.T) map[string]bool {
	t.Helper()
	subcommandsOnce.Do(func() {
		bin := filepath.Join(binDir, "connect-init")
		build := exec.Command("go", "build", "-o", bin, "../cmd/connect-init")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			subcommandsErr = fmt.Errorf("go build ../cmd/connect-init: %v\n%s", err, out)
			return
		}
		out, err := exec.Command(bin, "help").CombinedOutput()
		if err != nil {
			subcommandsErr = fmt.Errorf("connect-init help: %v\n%s", err, out)
			return
		}
		subcommandsSet, subcommandsErr = parseHelp(out)
	})
	if subcommandsErr != nil {
		t.Fatal(subcommandsErr)
	}
	return subcommandsSet
}

// parseHelp reads the "commands:" block of `connect-init help`: indented
// lines "  <name>   <summary>" up to the first line that is not indented.
func parseHelp(out []byte) (map[string]bool, error) {
	cmds := map[string]bool{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "commands:":
			in = true
		case in && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			if f := strings.Fields(line); len(f) > 0 {
				cmds[f[0]] = true
			}
		case in:
			in = false
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("no commands found in `connect-init help` output:\n%s", out)
	}
	return cmds, nil
}

func TestParseHelp(t *testing.T) {
	got, err := parseHelp([]byte("usage: x\ncommands:\n  run    the default\n  doctor  explain\nsettings come from ...\n  notacommand\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"run": true, "doctor": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("parseHelp = %v, want %v", got, want)
	}
	if _, err := parseHelp([]byte("usage: x\n")); err == nil {
		t.Error("parseHelp without a commands block: no error")
	}
}

// validSettings is the set of CONNECT_INIT_* names connect-init reads:
// the settings table's (settings.Read refuses every other name).
func validSettings(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, r := range settings.Table() {
		names[r.Env] = true
	}
	if len(names) == 0 {
		t.Fatal("the settings table is empty")
	}
	return names
}

// TestValidSettingsAreRead: every name validSettings accepts is one
// connect-init reads, and a name it refuses is refused by connect-init too,
// so that the example checks cannot accept a name connect-init does not
// read.
func TestValidSettingsAreRead(t *testing.T) {
	for name := range validSettings(t) {
		// Set but empty counts as unset: only an unknown name is an error.
		if _, err := settings.LoadSettings([]string{name + "="}); err != nil {
			t.Errorf("%s: connect-init refuses it: %v", name, err)
		}
	}
	if _, err := settings.LoadSettings([]string{"CONNECT_INIT_TIMEOUTS=1m"}); err == nil {
		t.Error("connect-init reads CONNECT_INIT_TIMEOUTS, which validSettings refuses")
	}
}

// defaultTimeout is connect-init's budget for the steps before the lock when
// CONNECT_INIT_TIMEOUT is not set.
func defaultTimeout(t *testing.T) time.Duration {
	t.Helper()
	s, err := settings.LoadSettings(nil)
	if err != nil {
		t.Fatalf("default settings: %v", err)
	}
	return s.Timeout
}

// gateTimeout is the gate budget a service's environment gives connect-init.
func gateTimeout(t *testing.T, env map[string]string) time.Duration {
	t.Helper()
	if v := env["CONNECT_INIT_TIMEOUT"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CONNECT_INIT_TIMEOUT=%q: %v", v, err)
		}
		return d
	}
	return defaultTimeout(t)
}

var settingRef = regexp.MustCompile(`\bCONNECT_INIT_[A-Z0-9_]*[A-Z0-9]\b`)

// TestSettingNames checks that every CONNECT_INIT_* name anywhere in the
// examples (values, comments, README) and in the Dockerfile is a setting
// connect-init reads.
func TestSettingNames(t *testing.T) {
	valid := validSettings(t)
	files := []string{"../Dockerfile"}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, name := range settingRef.FindAllString(line, -1) {
				seen++
				if !valid[name] {
					t.Errorf("%s:%d: %s is not a connect-init setting (have %s)", f, i+1, name, strings.Join(sortedKeys(valid), ", "))
				}
			}
		}
	}
	if seen == 0 {
		t.Error("no CONNECT_INIT_* names found: the walk found no examples")
	}
}

// Worker settings every connect-init service needs, and those Confluent's
// image additionally requires (its configure script runs `ensure` on them).
var (
	requiredWorker    = []string{"CONNECT_BOOTSTRAP_SERVERS", "CONNECT_GROUP_ID", "CONNECT_CONFIG_STORAGE_TOPIC", "CONNECT_OFFSET_STORAGE_TOPIC", "CONNECT_STATUS_STORAGE_TOPIC"}
	requiredConfluent = []string{"CONNECT_KEY_CONVERTER", "CONNECT_VALUE_CONVERTER", "CONNECT_REST_ADVERTISED_HOST_NAME"}
)

// service is one container definition from an example, reduced to what the
// checks need.
type service struct {
	file, name string
	argv       []string          // effective command line (entrypoint + command)
	env        map[string]string // environment, plus names exported by an entrypoint script
	health     []string          // healthcheck / probe command
	role       string            // connect-init subcommand it runs, "" if none
}

func (s service) String() string { return s.file + ": " + s.name }

// invocations finds every `connect-init <args...>` in a command line,
// including inside `sh -c` scripts, and returns the arguments that follow.
func invocations(argv []string) [][]string {
	var toks []string
	for _, a := range argv {
		for _, f := range strings.Fields(a) {
			toks = append(toks, strings.Trim(f, `"';`))
		}
	}
	var out [][]string
	for i, tok := range toks {
		if path.Base(tok) == "connect-init" {
			out = append(out, toks[i+1:])
		}
	}
	return out
}

// checkSubcommands requires each connect-init invocation in argv to name an
// existing subcommand explicitly, and returns the first one.
func checkSubcommands(t *testing.T, where string, argv []string) string {
	t.Helper()
	cmds := subcommands(t)
	first := ""
	for _, rest := range invocations(argv) {
		if len(rest) == 0 || !cmds[rest[0]] {
			t.Errorf("%s: %q runs connect-init without a known subcommand (have %s)", where, argv, strings.Join(sortedKeys(cmds), ", "))
			continue
		}
		if first == "" {
			first = rest[0]
		}
	}
	return first
}

var exportRe = regexp.MustCompile(`\bexport\s+([A-Z_][A-Z0-9_]*)=`)

// scriptExports lists the variables a `sh -c` entrypoint exports.
func scriptExports(argv []string) []string {
	var names []string
	for _, a := range argv {
		for _, m := range exportRe.FindAllStringSubmatch(a, -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// checkWorkerSettings checks required worker settings, that all
// connect-init services of one deployment describe the same Connect
// cluster, and the lessons of incident 000 about its identity.
func checkWorkerSettings(t *testing.T, svcs []service) {
	t.Helper()
	var ref *service
	for i, s := range svcs {
		if s.role == "" {
			continue
		}
		// Every connect-init command on the Confluent image checks what the
		// image's configure script requires, not only run: connect-init
		// detects the image by its files, whatever the command.
		req := append(append([]string{}, requiredWorker...), requiredConfluent...)
		for _, k := range req {
			if _, ok := s.env[k]; !ok {
				t.Errorf("%s (connect-init %s): %s is not set", s, s.role, k)
			}
		}
		if g := s.env["CONNECT_GROUP_ID"]; g == "connect-cluster" {
			t.Errorf("%s: group.id %q is Connect's default, the group of incident 000: give each Connect cluster its own", s, g)
		}
		if ref == nil {
			ref = &svcs[i]
			continue
		}
		for _, k := range requiredWorker {
			if s.env[k] != ref.env[k] {
				t.Errorf("%s: %s=%q but %s has %q: one Connect cluster, one value", s, k, s.env[k], ref, ref.env[k])
			}
		}
	}
	if ref == nil {
		t.Error("no connect-init service found")
	}
}

var hostRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// checkHostName rejects advertised names Connect cannot forward to: Java's
// URI parser finds no host in a name with "_" (KAFKA-10231).
func checkHostName(t *testing.T, where, host string) {
	t.Helper()
	if !hostRe.MatchString(host) {
		t.Errorf("%s: advertised host %q is not a valid DNS name or IP (Connect cannot forward requests to a host with \"_\" or unexpanded references)", where, host)
	}
}

// loadYAML decodes every document of a YAML file.
func loadYAML(t *testing.T, file string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", file, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML documents", file)
	}
	return docs
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func asInt(v any) (int, bool) {
	i, ok := v.(int)
	return i, ok
}

// dig follows a path of map keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		v = asMap(v)[k]
	}
	return v
}

// stringList reads a command given as a YAML list or a string.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = asString(e)
		}
		return out
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// walkStrings calls fn for every string scalar in a decoded YAML value.
func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case map[string]any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	}
}
