package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestBadInputEntriesHaveOneShape feeds every refusal of the bad-input
// table (badInputs) through the JSON schema: config --json and doctor
// --json print one document valid against docs/schemas (whose error
// entry allows one of setting, flag, file+line, and requires a problem
// and a fix), every entry has a fix, and the entry names what the row
// says the error must name, in its own field (issue 52).
func TestBadInputEntriesHaveOneShape(t *testing.T) {
	bootstrap, conns := countingListener(t)
	schemas := map[string]*jsonschema.Schema{"config": schemaFor(t, "config"), "doctor": schemaFor(t, "doctor")}
	entries := 0
	for _, row := range badInputs() {
		image := settings.Options{Root: imageRoot(t, row.image), HostAddress: func() (string, error) { return "192.0.2.10", nil },
			LocalHostAddress: func() (string, error) { return "192.0.2.10", nil }}
		for _, cmd := range []string{"config", "doctor"} {
			if row.cmds != nil && !slices.Contains(row.cmds, cmd) {
				continue
			}
			args := append([]string{cmd, "--json"}, row.args...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var stdout, stderr bytes.Buffer
			c := newCLI(rowEnv(t, row, bootstrap), &stdout, &stderr)
			c.options = image
			code := c.run(ctx, args)
			cancel()
			where := row.name + " / " + strings.Join(args, " ")
			if code != exitcode.Config {
				t.Errorf("%s: exit %d, want 2", where, code)
				continue
			}
			if err := validate(schemas[cmd], stdout.String()); err != nil {
				t.Errorf("%s: the document does not validate: %v\n%s", where, err, stdout.String())
			}
			var doc struct{ Errors []errorEntry }
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Errors) == 0 {
				t.Errorf("%s: no errors (%v):\n%s", where, err, stdout.String())
				continue
			}
			named := false
			for _, en := range doc.Errors {
				entries++
				if en.Fix == "" || en.Problem == "" {
					t.Errorf("%s: entry without a problem or a fix: %+v", where, en)
				}
				if strings.Contains(en.Problem, "(worker property -)") || strings.Contains(en.Setting, ":") || strings.Contains(en.Setting, " (") {
					t.Errorf("%s: the entry mixes its parts: %+v", where, en)
				}
				named = named || strings.Contains(en.subject()+" "+en.Problem+" "+en.Fix, strings.TrimPrefix(row.named, "--"))
			}
			if !named {
				t.Errorf("%s: no entry names %q: %+v", where, row.named, doc.Errors)
			}
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections", n)
	}
	t.Logf("%d entries validated", entries)
}

// TestEntryOfNamesItsParts: what the settings and the worker
// configuration name, taken apart into the entry's fields.
func TestEntryOfNamesItsParts(t *testing.T) {
	for in, want := range map[string]errorEntry{
		"CONNECT_INIT_TIMEOUT": {Setting: "CONNECT_INIT_TIMEOUT"},
		"--timeout":            {Flag: "--timeout"},
		"command line":         {Flag: "command line"},
		"/etc/w.properties:3 (config.storage.topic)":        {File: "/etc/w.properties", Line: 3, Key: "config.storage.topic"},
		"/etc/w.properties:3":                               {File: "/etc/w.properties", Line: 3},
		"CONNECT_INIT_WORKER_CONFIG (config.storage.topic)": {Setting: "CONNECT_INIT_WORKER_CONFIG", Key: "config.storage.topic"},
		"--worker-config (listeners)":                       {Flag: "--worker-config", Key: "listeners"},
		"config.storage.topic (the image's default)":        {Key: "config.storage.topic"},
	} {
		if got := named(in); got != want {
			t.Errorf("named(%q) = %+v, want %+v", in, got, want)
		}
	}
}
