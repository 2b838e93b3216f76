package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/connect-init/connect-init/apply"
)

// jsonSchemaVersion is the version of the envelope every --json document
// shares (docs/json.md, docs/schemas/). 1 was doctor's own document
// before the envelope; 3 is the one entry shape of errors (a flag is
// "flag", no longer "setting"; a file's line and key apart; always a fix).
// It changes only when a field changes meaning or goes away.
const jsonSchemaVersion = 3

// envelope is every --json document: who printed it, how it ended, every
// problem found (the same events as the log's errors), and the command's
// own result. It is printed on every outcome, bad usage included, because
// the machines that read it (a pipeline gating on `apply --dry-run
// --json`, jq) cannot tell "no output" from "nothing to say".
type envelope struct {
	document

	// planOut is where apply writes its plan document (apply.PlanDoc),
	// which becomes Result.
	planOut bytes.Buffer
	// stream is doctor --watch --json: an envelope per change, one per
	// line (streamLine); streamed once the first is out.
	stream, streamed bool

	mu sync.Mutex
}

// document is what the envelope prints: the one shape of every --json
// document, and of each line of a stream (streamLine).
type document struct {
	SchemaVersion int    `json:"schema_version"`
	Command       string `json:"command"`
	Version       string `json:"version"`
	ExitCode      int    `json:"exit_code"`
	// Errors are never null: a reader checks its length.
	Errors []errorEntry `json:"errors"`
	// Result is the command's own document; null when the command ended
	// before it had one (bad usage, bad settings).
	Result any `json:"result"`
}

// addError records one problem, once.
func (e *envelope) addError(en errorEntry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, have := range e.Errors {
		if have == en {
			return
		}
	}
	e.Errors = append(e.Errors, en)
}

// jsonCommands are the commands that take --json and so print an
// envelope on every outcome.
var jsonCommands = map[string]bool{"apply": true, "config": true, "doctor": true, "version": true}

// wantsJSON reports whether the command line asks for --json output (not
// for help, which is text), and whether that output is a stream (doctor
// --watch --json: one envelope per change, one per line).
func wantsJSON(args []string) (want, stream bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		b, err := strconv.ParseBool(val)
		on := !hasVal || err != nil || b
		switch name {
		case "h", "help":
			return false, false
		case "watch":
			stream = on
		case "json":
			want = on
		}
	}
	return want, want && stream
}

// runJSON runs a --json command and prints its envelope, whatever the
// outcome.
func (c *cli) runJSON(ctx context.Context, sc subcommand, args []string, stream bool) int {
	c.envelope = &envelope{document: document{SchemaVersion: jsonSchemaVersion, Command: sc.name, Version: version, Errors: []errorEntry{}}, stream: stream}
	code := sc.run(c, ctx, args)
	env := c.envelope
	if env.streamed {
		return code // the stream's envelopes are out; a signal ends it
	}
	env.ExitCode = code
	if env.planOut.Len() > 0 {
		c.planResult()
	}
	if env.Result == nil && sc.name == "apply" {
		env.Result = apply.PlanDoc{} // bad usage: nothing was planned
	}
	enc := json.NewEncoder(c.stdout)
	if !stream {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(env.document); err != nil {
		slog.New(slog.NewTextHandler(c.stderr, nil)).Error("cannot write the JSON document", "error", err.Error())
	}
	return code
}

// planResult takes apply's plan document as the result; why there is no
// plan becomes one of the errors.
func (c *cli) planResult() {
	var doc apply.PlanDoc
	if err := json.Unmarshal(c.envelope.planOut.Bytes(), &doc); err != nil {
		c.envelope.addError(errorEntry{Problem: "the plan could not be read back: " + err.Error(), Fix: fallbackFix})
		return
	}
	if doc.Error != "" {
		c.envelope.addError(errorEntry{Problem: "no plan: " + doc.Error, Fix: "see the log on stderr; nothing was written"})
		doc.Error = ""
	}
	// Each key Connect's validation refused is an error of its own, at
	// its file and line.
	for _, r := range doc.Refused {
		for _, f := range r.Errors {
			file, line := f.Where, 0
			if i := strings.LastIndexByte(f.Where, ':'); i > 0 {
				if n, err := strconv.Atoi(f.Where[i+1:]); err == nil {
					file, line = f.Where[:i], n
				}
			}
			c.envelope.addError(errorEntry{File: file, Line: line, Key: f.Key, Problem: r.Name + ": " + strings.Join(f.Messages, "; "),
				Fix: "correct the definition as Connect's validation says; nothing was written"})
		}
	}
	c.envelope.Result = doc
}

// streamLine prints one envelope of a stream on its own line: result,
// its exit code and its errors, with the problems found so far.
func (c *cli) streamLine(result any, code int, errs []errorEntry) error {
	env := c.envelope
	env.mu.Lock()
	line := env.document
	line.ExitCode, line.Errors, line.Result = code, append(append([]errorEntry{}, env.Errors...), errs...), result
	env.streamed = true
	env.mu.Unlock()
	return json.NewEncoder(c.stdout).Encode(line)
}

// setResult makes doc the command's result in its JSON document (a no-op
// without --json).
func (c *cli) setResult(doc any) {
	if c.envelope != nil {
		c.envelope.Result = doc
	}
}

// envelopeHandler copies every error event of the log into the envelope's
// errors, so that a --json document names every problem the log names,
// from the bad flag to the refused connection, without a second path for
// each.
type envelopeHandler struct {
	slog.Handler
	env   *envelope
	attrs []slog.Attr
}

func (h *envelopeHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.env.addError(errorFromRecord(r, h.attrs))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *envelopeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &envelopeHandler{Handler: h.Handler.WithAttrs(as), env: h.env, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h *envelopeHandler) WithGroup(name string) slog.Handler {
	return &envelopeHandler{Handler: h.Handler.WithGroup(name), env: h.env, attrs: h.attrs}
}

// errorFromRecord is one error event as an entry: what it names (setting,
// flag, file and line, key), the problem (the "problem" attribute of a
// bad-input event, else the event and its error), and the fix (a generic
// one when the event names none: every entry has one).
func errorFromRecord(r slog.Record, base []slog.Attr) errorEntry {
	var en errorEntry
	var cause, problem string
	visit := func(a slog.Attr) bool {
		switch a.Key {
		case "setting":
			en.Setting = a.Value.String()
		case "flag":
			en.Flag = a.Value.String()
		case "file":
			en.File = a.Value.String()
		case "key":
			en.Key = a.Value.String()
		case "line":
			if n, err := strconv.Atoi(a.Value.String()); err == nil {
				en.Line = n
			}
		case "fix":
			en.Fix = a.Value.String()
		case "problem":
			problem = a.Value.String()
		case "error":
			cause = a.Value.String()
		}
		return true
	}
	for _, a := range base {
		visit(a)
	}
	r.Attrs(visit)
	switch {
	case problem != "":
		en.Problem = problem
	case cause != "":
		en.Problem = r.Message + ": " + cause
	default:
		en.Problem = r.Message
	}
	if en.File != "" {
		en.Setting = "" // a file's entry names the file, not the setting that led to it
	}
	if en.Fix == "" {
		en.Fix = fallbackFix
	}
	return en
}
