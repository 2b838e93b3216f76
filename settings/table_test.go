package settings

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the settings table of docs/settings.md from Table")

// TestDocsTable: the table of docs/settings.md is Table's, row for row,
// and the README's short one is its Common rows.
func TestDocsTable(t *testing.T) {
	checkGenerated(t, "../docs/settings.md", MarkdownTable())
	checkGenerated(t, "../README.md", CommonTable())
}

// checkGenerated compares the part of path between the table markers with
// table (with -update: rewrites it).
func checkGenerated(t *testing.T, path, table string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, DocsTableBegin), strings.Index(doc, DocsTableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q markers", path, DocsTableBegin, DocsTableEnd)
	}
	want := DocsTableBegin + "\n\n" + table + "\n"
	if got := doc[i:j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the settings table of %s differs from settings.Table (go test ./settings -run TestDocsTable -update rewrites it):\n--- docs\n%s\n--- table\n%s", path, got, want)
	}
}

// TestEveryFieldHasARow: each field of Settings (but Flags) is read by
// exactly one row of Table, so a field added without its row (variable,
// flag, default, help) fails here rather than being silently never read.
func TestEveryFieldHasARow(t *testing.T) {
	var s Settings
	v := reflect.ValueOf(&s).Elem()
	rows := map[uintptr][]string{}
	for _, r := range table {
		p := reflect.ValueOf(r.field(&s)).Pointer()
		rows[p] = append(rows[p], r.Env)
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !f.IsExported() || f.Name == "Flags" {
			continue
		}
		if got := rows[v.Field(i).Addr().Pointer()]; len(got) != 1 {
			t.Errorf("Settings.%s is read by %d rows of settings.Table (%v), want 1: add its row", f.Name, len(got), got)
		}
	}
	seen := map[string]bool{}
	for _, r := range table {
		if seen[r.Env] || seen["--"+r.Flag] {
			t.Errorf("%s (--%s): a variable or flag is in the table twice", r.Env, r.Flag)
		}
		seen[r.Env] = true
		if r.Flag != "" {
			seen["--"+r.Flag] = true
		}
		if !strings.HasPrefix(r.Env, EnvPrefix+"_") || r.Help == "" || len(r.Commands) == 0 || strings.Contains(r.Help, "\n") {
			t.Errorf("%s: a row needs the prefix, one line of help and its commands", r.Env)
		}
	}
}

// TestUnknownNamesAreRefused: a misspelt CONNECT_INIT_* name is refused,
// naming the nearest setting; an unrelated one gets no guess.
func TestUnknownNamesAreRefused(t *testing.T) {
	for kv, want := range map[string]string{
		"CONNECT_INIT_TIMEOUTS=10s":       "CONNECT_INIT_TIMEOUTS is not a connect-init setting: did you mean CONNECT_INIT_TIMEOUT?",
		"CONNECT_INIT_EXPECTED_BROKER=3":  "CONNECT_INIT_EXPECTED_BROKER is not a connect-init setting: did you mean CONNECT_INIT_EXPECTED_BROKERS?",
		"CONNECT_INIT_LOCKTOPIC=x":        "did you mean CONNECT_INIT_LOCK_TOPIC?",
		"CONNECT_INIT_SOMETHING_ELSE=abc": "CONNECT_INIT_SOMETHING_ELSE is not a connect-init setting: remove it",
		"CONNECT_INIT_timeout=10s":        "CONNECT_INIT_timeout is not a connect-init setting: did you mean CONNECT_INIT_TIMEOUT?",
		"CONNECT_INIT_Lock_Topic=x":       "did you mean CONNECT_INIT_LOCK_TOPIC?",
	} {
		_, err := LoadSettings([]string{kv})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", kv, want, err)
		}
	}
	// Set but empty counts as unset, as the docs say, for a name that is
	// no setting too (an empty variable a template left behind).
	for _, kv := range []string{"CONNECT_INIT_TIMEOUTS=", "CONNECT_INIT_SOMETHING_ELSE=  "} {
		if _, err := LoadSettings([]string{kv}); err != nil {
			t.Errorf("%s: empty counts as unset, got %v", kv, err)
		}
	}
}

// TestIntegersAreDecimal: integers are read in decimal only (they were
// read in Go's base 0, so 010 was 8 and 0x3 was 3).
func TestIntegersAreDecimal(t *testing.T) {
	for v, want := range map[string]int{"3": 3, "010": 10, " 7 ": 7} {
		s, err := LoadSettings([]string{"CONNECT_INIT_EXPECTED_BROKERS=" + v})
		if err != nil || s.ExpectedBrokers != want {
			t.Errorf("CONNECT_INIT_EXPECTED_BROKERS=%q: %d, %v; want %d", v, s.ExpectedBrokers, err, want)
		}
	}
	for _, v := range []string{"0x3", "0o7", "0b11", "1_000", "3.0"} {
		if _, err := LoadSettings([]string{"CONNECT_INIT_EXPECTED_BROKERS=" + v}); err == nil || !strings.Contains(err.Error(), "decimal") {
			t.Errorf("CONNECT_INIT_EXPECTED_BROKERS=%q: want refused as no decimal number, got %v", v, err)
		}
	}
}

// TestHarnessVariablesAreNotSettings: the reserved prefix is the table's
// alone. No Go file reads a CONNECT_INIT_* variable that is no setting
// (the test harness's own are CITEST_*): exporting one would make every
// command exit 2.
func TestHarnessVariablesAreNotSettings(t *testing.T) {
	read := regexp.MustCompile(`(?:Getenv|LookupEnv|Lookup\([^,]+,)\s*\(?"(CONNECT_INIT_[A-Z0-9_]+)"`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".cache" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range read.FindAllStringSubmatch(string(b), -1) {
			if _, ok := Find(m[1]); !ok {
				t.Errorf("%s reads %s, which is no setting of the table: name a harness variable CITEST_*", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEveryProblemAtOnce: three bad values and a misspelt name are four
// problems in one error, each naming its setting; a flag that replaces a
// bad variable's value takes its problem away.
func TestEveryProblemAtOnce(t *testing.T) {
	env := []string{"CONNECT_INIT_TIMEOUT=30", "CONNECT_INIT_LOCK_PERMITS=0", "CONNECT_INIT_LOG_FORMAT=xml", "CONNECT_INIT_EXPECTED_BROKER=3"}
	s := Read(env)
	err := s.Validate()
	got := Each(err)
	var names []string
	for _, p := range got {
		var ce *ConfigError
		if !errors.As(p, &ce) {
			t.Fatalf("problem %v is not a ConfigError", p)
		}
		names = append(names, ce.Setting)
	}
	want := []string{"CONNECT_INIT_EXPECTED_BROKER", "CONNECT_INIT_TIMEOUT", "CONNECT_INIT_LOCK_PERMITS", "CONNECT_INIT_LOG_FORMAT"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("problems %v, want %v:\n%v", names, want, err)
	}
	r, _ := Find("CONNECT_INIT_TIMEOUT")
	if err := s.SetFlag(r, "1m"); err != nil {
		t.Fatal(err)
	}
	if n := len(Each(s.Validate())); n != 3 {
		t.Errorf("--timeout=1m replaces the bad variable: want 3 problems, got %d", n)
	}
}

// TestMissingWorkerVariableNamesTheTypo: CONNECT_BOOTSTRAP_SERVER (one
// edit away, not itself a required variable) is named in the fix of the
// missing CONNECT_BOOTSTRAP_SERVERS; a variable two edits away is not.
func TestMissingWorkerVariableNamesTheTypo(t *testing.T) {
	var env []string
	for _, kv := range baseWorkerEnv() {
		if !strings.HasPrefix(kv, "CONNECT_BOOTSTRAP_SERVERS=") {
			env = append(env, kv)
		}
	}
	_, err := LoadConfig(append(env, "CONNECT_BOOTSTRAP_SERVER=kafka:9092"), Settings{})
	if err == nil || !strings.Contains(err.Error(), "CONNECT_BOOTSTRAP_SERVERS") || !strings.Contains(err.Error(), "CONNECT_BOOTSTRAP_SERVER is set: did you mean CONNECT_BOOTSTRAP_SERVERS?") {
		t.Errorf("want the typo named, got %v", err)
	}
	_, err = LoadConfig(append(env, "CONNECT_BOOTSTRAP_SERVE=kafka:9092"), Settings{})
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("two edits away: want no guess, got %v", err)
	}
}

// TestLastValueCounts: a name given twice takes its last non-empty value
// (as envconfig did): a bad first value is no problem then, and an empty
// last one leaves the value before it.
func TestLastValueCounts(t *testing.T) {
	s, err := LoadSettings([]string{"CONNECT_INIT_LOCK_PERMITS=none", "CONNECT_INIT_LOCK_PERMITS=3", "CONNECT_INIT_LOCK_LEASE=5m", "CONNECT_INIT_LOCK_LEASE="})
	if err != nil || s.LockPermits != 3 || s.LockLease.String() != "5m0s" {
		t.Errorf("permits %d lease %s err %v; want 3, 5m0s, no error", s.LockPermits, s.LockLease, err)
	}
}
