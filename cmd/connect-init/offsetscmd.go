package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
)

// `connect-init offsets export|apply|reset` (issue 31): a connector's
// offsets as code, through one worker's REST API (no broker needed). The
// behaviour is apply.API's SetOffsets and GetOffsets; this file wires
// flags to them.

// offsetsTimeout bounds an offsets command when CONNECT_INIT_TIMEOUT
// (or --timeout) is not set: the table's 5m is the gates'.
const offsetsTimeout = 2 * time.Minute

// offsetsCommand exits 0 when done (or nothing to write), 1 when Connect
// refused or a step failed, 2 on bad flags, settings or a bad file. It
// follows every command's flag rules: the settings' flags the table
// gives it (--timeout, --log-format, --log-level, the REST credentials),
// flags before or after the subcommand, every problem reported at once.
func (c *cli) offsetsCommand(ctx context.Context, args []string) int {
	var url, name, file string
	spec := command{name: settings.Offsets, usage: "offsets export|apply|reset --url U --connector N [--file F]", flags: func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "the REST URL of a worker of the Connect cluster")
		fs.StringVar(&name, "connector", "", "the connector's name")
		fs.StringVar(&file, "file", "", "export: where to write the offsets (default stdout); apply: the offsets document to apply; reset takes none")
	}}
	verb := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return code
	}
	if verb == "" && fs.NArg() > 0 {
		// Flags before the subcommand: take it out and read the command
		// line again, whole (the flags bind to bootstrap's settings).
		at := len(args) - fs.NArg()
		verb, args = fs.Arg(0), append(append([]string{}, args[:at]...), args[at+1:]...)
		if s, fs, code, done, problems = c.bootstrap(spec, args, true); done {
			return code
		}
	}
	timeout := offsetsTimeout
	if s.Given("CONNECT_INIT_TIMEOUT") {
		timeout = s.Timeout
	}
	want, extra := offsetsProblems(fs, offsetsArgs{verb: verb, url: url, name: name, file: file})
	if err := mergeProblems(problems, extra); err != nil {
		reportProblems(c.earlyLogger(s, args), err)
		return exitcode.Config
	}
	log := c.logger(s)
	rest := &restclient.Client{Timeout: 10 * time.Second, Clock: c.clock, Auth: s.RESTAuth()}
	if cfg, lerr := c.options.Load(c.env, s); lerr == nil {
		rest.TLS = cfg.RESTClientTLS
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	api, _, err := apply.Direct(ctx, rest, url)
	if err == nil {
		if why := api.OffsetsSupported(ctx); why != "" {
			log.Error("offsets refused", "connector", name, "why", why, "fix", "upgrade the workers to Kafka 3.6 or later")
			return exitcode.Failed
		}
	}
	if err != nil {
		log.Error("cannot reach the worker", "url", url, "error", err.Error())
		return exitcode.Failed
	}
	api.Clock = c.clock
	until := clock.Or(c.clock).Now().Add(timeout)
	switch verb {
	case "export":
		o, err := api.GetOffsets(ctx, name)
		if err != nil {
			log.Error("cannot read the offsets", "connector", name, "error", err.Error())
			return exitcode.Failed
		}
		b, _ := json.MarshalIndent(o, "", "  ")
		b = append(b, '\n')
		if err := writeOffsets(c.stdout, file, b); err != nil {
			log.Error("cannot write the offsets", "connector", name, "file", file, "error", err.Error(),
				"fix", "give a --file (or a stdout) that can be written, and export again: nothing was exported")
			return exitcode.Failed
		}
		log.Info("offsets exported", "connector", name, "partitions", len(o.Offsets), "file", file)
		return exitcode.OK
	}
	res, err := api.SetOffsets(ctx, name, want, until)
	if err != nil {
		log.Error("offsets not written", "connector", name, "action", verb, "state_before", res.Was, "error", err.Error(),
			"fix", "read the error; the connector may be left STOPPED: resume it by hand (PUT /connectors/"+name+"/resume) once fixed")
		return exitcode.Failed
	}
	if !res.Changed {
		log.Info("offsets: nothing to write, Connect already holds them", "connector", name, "state", res.Was)
		return exitcode.OK
	}
	log.Info("offsets written and read back", "connector", name, "action", verb, "state_put_back", res.Was)
	return exitcode.OK
}

// writeOffsets writes an export to stdout, or to file ("" none), and says
// whether it was written whole: an export that did not reach its reader
// is lost, never "exported". A regular file is synced before it counts.
func writeOffsets(stdout io.Writer, file string, b []byte) error {
	if file == "" {
		_, err := stdout.Write(b)
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if fi, serr := f.Stat(); err == nil && serr == nil && fi.Mode().IsRegular() {
		err = f.Sync() // not a pipe's or a device's (--file /dev/stdout)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// exportTarget refuses an export's --file whose directory does not exist
// or is no directory, before Connect is asked: the file is written only
// at the end, and a typo in its path must not cost a read of the offsets.
func exportTarget(file string) error {
	dir := filepath.Dir(file)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s: its directory %s cannot be used (%v)", file, dir, errors.Unwrap(err))
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", file, dir)
	}
	return nil
}

// offsetsArgs are the offsets command line's words and own flags.
type offsetsArgs struct{ verb, url, name, file string }

// offsetsProblems checks the offsets command line, every problem at once,
// and reads the document offsets apply applies.
func offsetsProblems(fs *flag.FlagSet, a offsetsArgs) (want *apply.Offsets, problems error) {
	var bad []error
	add := func(setting, problem, fix string) {
		bad = append(bad, &settings.ConfigError{Setting: setting, Problem: problem, Fix: fix})
	}
	if a.verb != "export" && a.verb != "apply" && a.verb != "reset" {
		add("command line", fmt.Sprintf("needs export, apply or reset after offsets (got %q)", a.verb), "e.g. connect-init offsets export --url http://connect:8083 --connector my-source --file my-source.offsets.json")
	}
	if fs.NArg() > 0 {
		add("command line", fmt.Sprintf("offsets %s takes no arguments (got %q)", a.verb, fs.Args()), "name the connector with --connector")
	}
	if a.url == "" {
		add("--url", "is not given", "give a worker's REST URL, e.g. --url http://connect-1:8083")
	} else if perr := checkURLFlag(a.url); perr != nil {
		bad = append(bad, perr)
	}
	if strings.TrimSpace(a.name) == "" {
		add("--connector", "is not given", "name the connector with --connector, e.g. --connector my-source")
	}
	switch {
	case a.verb == "reset" && a.file != "":
		// reset removes every offset; a file would say which to keep,
		// which is offsets apply's job: never delete what the user
		// meant to set.
		add("--file", "is given with offsets reset, which removes every offset of the connector and reads no file",
			"to set the offsets of a file, run offsets apply --file "+a.file+"; to remove them all, leave --file out")
	case a.verb == "export" && a.file != "":
		if err := exportTarget(a.file); err != nil {
			add("--file", err.Error(), "name a file in a directory that exists and can be written (nothing was read from Connect)")
		}
	}
	if a.verb == "apply" && a.file == "" {
		add("--file", "is not given", "name the offsets document to apply (as offsets export writes it)")
	} else if a.verb == "apply" {
		data, rerr := os.ReadFile(a.file)
		if rerr == nil {
			want, rerr = apply.ParseOffsets(data)
		}
		if rerr != nil {
			add("--file", fmt.Sprintf("%s: %v", a.file, rerr), "give an offsets document as offsets export writes it")
		}
	}
	return want, problemList(bad)
}
