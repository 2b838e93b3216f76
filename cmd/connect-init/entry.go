package main

import (
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
	"github.com/connect-init/connect-init/workerconfig"
)

// errorEntry is one problem, in the one shape every --json document and
// every bad-input event shares (docs/json.md, docs/schemas/envelope.json):
// what the user gave — a setting (a variable), a flag, or a file and
// line, with the worker property (key) when there is one — the problem,
// and always the fix. A finding about the cluster (doctor) names no input:
// only problem and fix.
type errorEntry struct {
	// Setting is a variable as the user set it (CONNECT_INIT_TIMEOUT).
	Setting string `json:"setting,omitempty"`
	// Flag is a flag as typed (--timeout), or "command line" for an
	// argument that is no flag.
	Flag string `json:"flag,omitempty"`
	// File and Line name a file's problem (Line 0: the whole file).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Key is the worker property or the connector config key the problem
	// is about, beside the setting or file that set it.
	Key     string `json:"key,omitempty"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
}

// commandLine is the Flag of a problem with an argument that is no flag.
const commandLine = "command line"

// fallbackFix is the fix of an event that names none (an error of a
// package that only says what happened): every entry has a fix.
const fallbackFix = "see the log on stderr for what led to it, correct that and run the command again"

// fileProblem is a bad file of a directory a setting names (the
// connectors directory): its entry is the file and line, with the fix.
type fileProblem struct {
	*apply.FileError
	fix string
}

func (f *fileProblem) Error() string { return f.FileError.Error() + ": " + f.fix }

func (f *fileProblem) Unwrap() error { return f.FileError }

var (
	// "worker.properties:3 (config.storage.topic)", "worker.properties:3"
	fileLineKey = regexp.MustCompile(`^(.+):(\d+)(?: \((.+)\))?$`)
	// "CONNECT_INIT_WORKER_CONFIG (config.storage.topic)", "--worker-config (x)"
	nameKey = regexp.MustCompile(`^(CONNECT_[A-Za-z0-9_]+|--[a-z0-9-]+) \((.+)\)$`)
	// "/etc/kafka/worker.properties (group.id)": a property a file lacks
	fileKey = regexp.MustCompile(`^(.*/[^ ]*) \((.+)\)$`)
	// "config.storage.topic (the image default)": a property not set by the user
	propDefault = regexp.MustCompile(`^([a-z0-9][a-z0-9._-]*) \((.+)\)$`)
)

// named is the entry of what a problem names, as the settings and the
// worker configuration write it, taken apart into setting, flag, file,
// line and key.
func named(s string) errorEntry {
	if m := fileLineKey.FindStringSubmatch(s); m != nil && !strings.HasPrefix(s, "CONNECT_") {
		line, _ := strconv.Atoi(m[2])
		return errorEntry{File: m[1], Line: line, Key: m[3]}
	}
	if m := fileKey.FindStringSubmatch(s); m != nil && !strings.HasPrefix(s, "CONNECT_") && !strings.HasPrefix(s, "--") {
		return errorEntry{File: m[1], Key: m[2]}
	}
	var en errorEntry
	if m := nameKey.FindStringSubmatch(s); m != nil {
		s, en.Key = m[1], m[2]
	} else if m := propDefault.FindStringSubmatch(s); m != nil {
		return errorEntry{Key: m[1]}
	}
	switch {
	case s == commandLine || strings.HasPrefix(s, "--"):
		en.Flag = s
	default:
		en.Setting = s
	}
	return en
}

// entryOf is a problem as its entry: the one place a ConfigError, a
// worker-configuration error or a bad file becomes the one shape.
func entryOf(err error) errorEntry {
	var fp *fileProblem
	var fe *apply.FileError
	var ce *settings.ConfigError
	var we *workerconfig.Error
	var en errorEntry
	switch {
	case errors.As(err, &fp):
		en = errorEntry{File: fp.File, Line: fp.Line, Problem: fp.Problem, Fix: fp.fix}
	case errors.As(err, &fe):
		en = errorEntry{File: fe.File, Line: fe.Line, Problem: fe.Problem, Fix: "correct the file; nothing was written"}
	case errors.As(err, &ce):
		en = named(ce.Setting)
		en.Problem, en.Fix = ce.Problem, ce.Fix
	case errors.As(err, &we):
		en = named(we.Setting)
		if en.Key == "" && we.Property != "-" {
			en.Key = we.Property
		}
		en.Problem, en.Fix = workerProblem(we), we.Fix
	default:
		en.Problem = err.Error()
	}
	switch {
	case en.Fix != "":
	case en.subject() != "":
		// A bad input whose error names no fix (some worker-configuration
		// checks): the input to correct is known.
		en.Fix = "correct " + en.subject() + " as the problem says"
	default:
		en.Fix = fallbackFix
	}
	return en
}

// workerProblem is a worker-configuration error's problem alone: without
// the setting and property its entry names apart, with the value unless
// the property is sensitive, and the cause.
func workerProblem(we *workerconfig.Error) string {
	p := we.Problem
	if we.Value != "" && !workerconfig.IsSensitive(we.Property) {
		p += " (got " + strconv.Quote(we.Value) + ")"
	}
	if we.Err != nil {
		p += ": " + we.Err.Error()
	}
	return p
}

// subject is what an entry names, as a message leads with it: the flag,
// the setting or file:line, and the key.
func (en errorEntry) subject() string {
	s := en.Setting + en.Flag
	if en.File != "" {
		s = en.File
		if en.Line > 0 {
			s += ":" + strconv.Itoa(en.Line)
		}
	}
	if en.Key != "" {
		if s == "" {
			return "worker property " + en.Key
		}
		s += " (" + en.Key + ")"
	}
	return s
}

// attrs are the entry as the attributes of its event: each part apart
// (errorFromRecord reads them back), and the whole as one line.
func (en errorEntry) attrs() []any {
	var out []any
	for _, kv := range [][2]string{{"setting", en.Setting}, {"flag", en.Flag}, {"file", en.File}, {"key", en.Key}} {
		if kv[1] != "" {
			out = append(out, kv[0], kv[1])
		}
	}
	if en.Line > 0 {
		out = append(out, "line", en.Line)
	}
	return append(out, "problem", en.Problem, "fix", en.Fix, "error", en.text())
}

// text is the entry as one line: what it names, the problem, the fix.
func (en errorEntry) text() string {
	s := en.subject() + " " + en.Problem
	if en.File != "" || en.Flag == commandLine {
		s = en.subject() + ": " + en.Problem // file:line: problem, as compilers write it
	}
	return strings.TrimSpace(s) + ": " + en.Fix
}

// logConfigError reports every problem of err, one "bad configuration"
// event each, in the one shape.
func logConfigError(log *slog.Logger, err error) {
	for _, p := range settings.Each(err) {
		log.Error("bad configuration", append([]any{"gate", step.Settings}, entryOf(p).attrs()...)...)
	}
}
