package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
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

// offsetsCommand exits 0 when done (or nothing to write), 1 when Connect
// refused or a step failed, 2 on bad flags or a bad file.
func (c *cli) offsetsCommand(ctx context.Context, args []string) int {
	verb := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		verb, args = args[0], args[1:]
	}
	var url, name, file string
	var timeout time.Duration
	spec := command{name: settings.Offsets, usage: "offsets export|apply|reset --url U --connector N [--file F]", flags: func(fs *flag.FlagSet) {
		fs.StringVar(&url, "url", "", "the REST URL of a worker of the Connect cluster")
		fs.StringVar(&name, "connector", "", "the connector's name")
		fs.StringVar(&file, "file", "", "export: where to write the offsets (default stdout); apply: the offsets document to apply")
		fs.DurationVar(&timeout, "timeout", 2*time.Minute, "how long stopping, writing, reading back and restarting may take")
	}}
	s, fs, code, done, _ := c.bootstrap(spec, args, false)
	if done {
		return code
	}
	var bad *settings.ConfigError
	switch {
	case verb != "export" && verb != "apply" && verb != "reset":
		bad = &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("needs export, apply or reset after offsets (got %q)", verb), Fix: "e.g. connect-init offsets export --url http://connect:8083 --connector my-source --file my-source.offsets.json"}
	case fs.NArg() > 0:
		bad = &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("takes no arguments (got %q)", fs.Args()), Fix: "name the connector with --connector"}
	case url == "":
		bad = &settings.ConfigError{Setting: "--url", Problem: "is not given", Fix: "give a worker's REST URL, e.g. --url http://connect-1:8083"}
	case strings.TrimSpace(name) == "":
		bad = &settings.ConfigError{Setting: "--connector", Problem: "is not given", Fix: "name the connector whose offsets to " + verb}
	case verb == "apply" && file == "":
		bad = &settings.ConfigError{Setting: "--file", Problem: "is not given", Fix: "name the offsets document to apply (as offsets export writes it)"}
	case timeout <= 0:
		bad = &settings.ConfigError{Setting: "--timeout", Problem: "is not positive", Fix: "e.g. --timeout=2m"}
	}
	if bad == nil {
		if _, perr := restclient.Parse(url); perr != nil {
			bad = &settings.ConfigError{Setting: "--url", Problem: perr.Error(), Fix: "give a worker's REST URL, e.g. http://connect-1:8083"}
		}
	}
	var want *apply.Offsets
	if bad == nil && verb == "apply" {
		data, rerr := os.ReadFile(file)
		if rerr == nil {
			want, rerr = apply.ParseOffsets(data)
		}
		if rerr != nil {
			bad = &settings.ConfigError{Setting: "--file", Problem: fmt.Sprintf("%s: %v", file, rerr), Fix: "give an offsets document as offsets export writes it"}
		}
	}
	if bad != nil {
		logConfigError(c.earlyLogger(s, args), bad)
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
		if file == "" {
			_, _ = c.stdout.Write(b)
		} else if err := os.WriteFile(file, b, 0o644); err != nil {
			log.Error("cannot write the offsets", "file", file, "error", err.Error())
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
