package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
	"github.com/connect-init/connect-init/workerconfig"
)

// configDoc is `connect-init config --json`: what the settings gate read,
// and from where. Its shape is part of the external contract.
type configDoc struct {
	// Flavour is the image flavour the worker settings were read with.
	Flavour struct {
		Name     string `json:"name"`
		Detected bool   `json:"detected"`
		Evidence string `json:"evidence"`
	} `json:"flavour"`
	// BaseFile is the properties file the worker settings start from.
	BaseFile string `json:"base_file,omitempty"`
	// Worker is every worker property as the worker will see it, sorted by
	// key, sensitive values replaced by [hidden].
	Worker []configEntry `json:"worker"`
	// Settings are connect-init's own settings.
	Settings []configEntry `json:"settings"`
	// Derived is what the gates will use.
	Derived *derivedDoc `json:"derived,omitempty"`
	Notes   []string    `json:"notes,omitempty"`
	// Error is the settings gate's verdict ("" when every check passed),
	// every problem on one line.
	Error string `json:"error,omitempty"`
	// Errors are the same problems, one entry each.
	Errors []errorEntry `json:"errors,omitempty"`
}

// errorEntries lists err's problems as entries (entryOf).
func errorEntries(err error) []errorEntry {
	var out []errorEntry
	for _, p := range settings.Each(err) {
		out = append(out, entryOf(p))
	}
	return out
}

// problemSetting is the setting a problem names ("" if none).
func problemSetting(err error) string {
	var ce *settings.ConfigError
	var we *workerconfig.Error
	switch {
	case errors.As(err, &ce):
		return ce.Setting
	case errors.As(err, &we):
		return we.Setting
	}
	return ""
}

// withWorkerProblems adds to bad own settings the worker settings'
// problem, when there is one about another setting: every bad setting in
// one run. (With good own settings the settings step reads the worker's
// itself.) It opens no connection.
func (c *cli) withWorkerProblems(s settings.Settings, problems error) error {
	if problems == nil {
		return nil
	}
	_, err := c.options.Inspect(c.env, s)
	return mergeProblems(problems, err)
}

// mergeProblems is problems followed by extra's, leaving out those about a
// setting problems already names (they follow from it).
func mergeProblems(problems, extra error) error {
	if extra == nil {
		return problems
	}
	named := map[string]bool{}
	out := settings.Problems(settings.Each(problems))
	for _, p := range out {
		named[problemSetting(p)] = true
	}
	for _, p := range settings.Each(extra) {
		if n := problemSetting(p); n == "" || !named[n] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// configCommand is `connect-init config [--json]`: it prints what it could
// read even when settings are bad (with --json, one document with an
// errors list), then exits 2.
func (c *cli) configCommand(args []string) int {
	var asJSON bool
	spec := command{name: settings.ShowConfig, usage: "config [--json] [flags]", flags: func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print one JSON document")
	}}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return code
	}
	if fs.NArg() > 0 {
		problems = mergeProblems(problems, &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("config takes no arguments (got %q)", fs.Args()), Fix: "see connect-init config -h"})
	}
	problems = c.withConnectorsDir(s, problems)
	log := c.earlyLogger(s, args)
	if problems == nil {
		log = c.logger(s)
	}
	return c.showConfig(s, log, asJSON, problems)
}

type configEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

type derivedDoc struct {
	GroupID          string   `json:"group_id"`
	BootstrapServers []string `json:"bootstrap_servers"`
	ExpectedBrokers  int      `json:"expected_brokers"`
	AdvertisedURL    string   `json:"advertised_url"`
	Topics           []struct {
		Role              string `json:"role"`
		Name              string `json:"name"`
		Partitions        int32  `json:"partitions"`
		ReplicationFactor int16  `json:"replication_factor"`
	} `json:"topics"`
	LockTopic string `json:"lock_topic"`
	RESTTLS   bool   `json:"rest_https_server"`
}

// showConfig is `connect-init config [--json]`: the effective worker
// configuration with each value's source, the image flavour, connect-init's
// own settings and what the gates derive from them. It connects to nothing.
// Exit 0 when the settings gate passes, 2 (after printing what it could
// read, and the error) when it does not.
func (c *cli) showConfig(s settings.Settings, log *slog.Logger, asJSON bool, problems error) int {
	stdout := c.stdout
	cfg, werr := c.options.Inspect(c.env, s)
	startup.LogFlavour(log, cfg)
	err := werr
	if problems != nil {
		err = mergeProblems(problems, werr)
	}
	doc := buildConfigDoc(c.env, s, cfg, err)
	if c.envelope != nil {
		// The envelope names the problems (from the log's events).
		doc.Error, doc.Errors = "", nil
		c.setResult(doc)
	} else if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(doc); werr != nil {
			log.Error("write the configuration", "error", werr.Error())
			return exitcode.Failed
		}
	} else {
		writeConfigText(stdout, doc)
	}
	if err != nil {
		reportProblems(log, err)
		return exitcode.Config
	}
	return exitcode.OK
}

func buildConfigDoc(env []string, s settings.Settings, cfg *settings.Config, err error) configDoc {
	var doc configDoc
	doc.Flavour.Name = string(cfg.Flavour)
	// A flavour set by hand (CONNECT_INIT_IMAGE, --image) is not one
	// detected from the image's files.
	doc.Flavour.Detected = cfg.Detection.Found && !s.Given("CONNECT_INIT_IMAGE")
	doc.Flavour.Evidence = cfg.Detection.Evidence
	doc.BaseFile = cfg.BaseFile
	doc.Notes = cfg.Notes
	doc.Worker = []configEntry{}
	red := cfg.Worker.Redacted()
	for _, k := range cfg.Worker.Keys() {
		doc.Worker = append(doc.Worker, configEntry{Key: k, Value: red[k], Source: cfg.Sources[k].String()})
	}
	doc.Settings = ownSettings(env, s, err)
	if !s.Given("CONNECT_INIT_EXPECTED_BROKERS") && cfg.ExpectedBrokers > 0 {
		// Unset means derived: show the number the brokers step waits for.
		for i := range doc.Settings {
			if doc.Settings[i].Key == "CONNECT_INIT_EXPECTED_BROKERS" {
				doc.Settings[i].Value, doc.Settings[i].Source = fmt.Sprint(cfg.ExpectedBrokers), "derived"
			}
		}
	}
	if err != nil {
		doc.Errors = errorEntries(err)
		var texts []string
		for _, en := range doc.Errors {
			texts = append(texts, en.text())
		}
		doc.Error = strings.Join(texts, "; ")
		return doc
	}
	d := &derivedDoc{GroupID: cfg.GroupID, BootstrapServers: cfg.BootstrapServers, ExpectedBrokers: cfg.ExpectedBrokers,
		AdvertisedURL: cfg.AdvertisedURL, LockTopic: cfg.LockTopic, RESTTLS: cfg.RESTServerTLS != nil}
	for _, t := range cfg.Topics {
		d.Topics = append(d.Topics, struct {
			Role              string `json:"role"`
			Name              string `json:"name"`
			Partitions        int32  `json:"partitions"`
			ReplicationFactor int16  `json:"replication_factor"`
		}{t.Role, t.Name, t.Partitions, t.ReplicationFactor})
	}
	doc.Derived = d
	return doc
}

// ownSettings lists connect-init's settings, in the table's order, with
// their effective values and where each came from: a flag, its variable,
// or the default. A setting with a problem shows the value the user set.
func ownSettings(env []string, s settings.Settings, problems error) []configEntry {
	bad := map[string]bool{}
	for _, p := range settings.Each(problems) {
		bad[problemSetting(p)] = true
	}
	out := make([]configEntry, 0, len(settings.Table()))
	for _, r := range settings.Table() {
		e := configEntry{Key: r.Env, Value: r.Value(&s), Source: "default"}
		switch {
		case s.Flags[r.Env] != "":
			e.Source = s.Flags[r.Env]
		case settings.Lookup(env, r.Env) != "":
			e.Source = r.Env
			if bad[r.Env] && !r.Secret {
				e.Value = settings.Lookup(env, r.Env)
			}
		case r.Env == "CONNECT_INIT_TIMEOUT" && settings.Lookup(env, "CONNECT_CUB_KAFKA_TIMEOUT") != "":
			e.Source = "CONNECT_CUB_KAFKA_TIMEOUT"
		}
		out = append(out, e)
	}
	return out
}

func writeConfigText(w io.Writer, doc configDoc) {
	how := "detected"
	switch {
	case strings.HasPrefix(doc.Flavour.Evidence, "CONNECT_INIT_IMAGE=") || strings.HasPrefix(doc.Flavour.Evidence, "--image="):
		how = "set"
	case !doc.Flavour.Detected:
		how = "not detected"
	}
	fmt.Fprintf(w, "image flavour: %s (%s: %s)\n", doc.Flavour.Name, how, doc.Flavour.Evidence)
	if doc.BaseFile != "" {
		fmt.Fprintf(w, "base file: %s\n", doc.BaseFile)
	}
	fmt.Fprintln(w, "\nworker configuration, as the worker will see it:")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range doc.Worker {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Key, tableValue(e.Value), e.Source)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nconnect-init settings:")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range doc.Settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Key, tableValue(e.Value), e.Source)
	}
	tw.Flush()
	if d := doc.Derived; d != nil {
		fmt.Fprintln(w, "\nderived:")
		fmt.Fprintf(w, "  group.id %s, bootstrap %s, expected brokers %d\n", d.GroupID, strings.Join(d.BootstrapServers, ","), d.ExpectedBrokers)
		fmt.Fprintf(w, "  advertised URL %s\n", d.AdvertisedURL)
		for _, t := range d.Topics {
			fmt.Fprintf(w, "  %s topic %s: %d partitions, replication factor %d\n", t.Role, t.Name, t.Partitions, t.ReplicationFactor)
		}
		fmt.Fprintf(w, "  lock topic %s\n", d.LockTopic)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	switch {
	case len(doc.Errors) > 1:
		fmt.Fprintf(w, "\nsettings gate: FAILED: %d problems:\n", len(doc.Errors))
		for _, e := range doc.Errors {
			line := "  " + strings.TrimSpace(e.Setting+" "+e.Problem)
			if e.Fix != "" {
				line += ": " + e.Fix
			}
			fmt.Fprintln(w, line)
		}
	case doc.Error != "":
		fmt.Fprintf(w, "\nsettings gate: FAILED: %s\n", doc.Error)
	default:
		fmt.Fprintln(w, "\nsettings gate: ok")
	}
}

// tableValue keeps a value with line breaks on one table row.
func tableValue(v string) string {
	if v == "" {
		return `""`
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(v)
}
