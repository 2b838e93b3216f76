package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// commandDoc is what a command's help teaches beyond its flags: what the
// command does and when to use it, and real examples. The flags come from
// the settings table and the command's own flag set, the exit codes from
// package exitcode (the table docs/exit-codes.md is generated from): one
// home each.
type commandDoc struct {
	what     string
	examples []example
}

// example is one example of a help: a comment saying where it fits, and
// the command line (or the deployment file's line).
type example struct{ where, line string }

// commandDocs are the commands' help texts, by command as typed.
var commandDocs = map[string]commandDoc{
	"run": {
		what: "Runs every gate (settings, brokers, topics, coordinator, group, plugins), takes the startup lock so that workers join one at a time, checks the peers, then execs the worker, which becomes PID 1. Use it as the container's entrypoint, in front of the image's own start command.",
		examples: []example{
			{"Compose, in front of Confluent's image", `entrypoint: ["connect-init", "run", "--", "/etc/confluent/docker/run"]`},
			{"a shell, with a longer bound on the gates", "connect-init run --timeout=10m -- /etc/confluent/docker/run"},
			{"Swarm, the REST password as a secret", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/connect-rest-password connect-init run"},
		},
	},
	"prepare": {
		what: "Runs the cluster gates once (settings to group) and exits, without the lock, the peers or the exec. Use it as an init task: a Compose service the workers depend on with condition: service_completed_successfully, a Swarm or Kubernetes init job.",
		examples: []example{
			{"Compose, a one-shot service", `entrypoint: ["connect-init", "prepare"]`},
			{"a CI job, before starting the workers", "connect-init prepare --timeout=3m && docker compose up -d connect"},
		},
	},
	"doctor": {
		what: "Takes one look at the Kafka cluster and the worker group, changes nothing, and reports findings, each with its evidence and fix. Use it when a worker will not join or keeps rebalancing; --watch keeps looking and serves Prometheus metrics.",
		examples: []example{
			{"beside a failing worker, same environment", "docker compose exec connect connect-init doctor"},
			{"a monitor, Compose", `entrypoint: ["connect-init", "doctor", "--watch", "--interval=30s", "--metrics-addr=:9465"]`},
			{"a CI gate on the cluster's state", "connect-init doctor --json | jq '.errors'"},
		},
	},
	"config": {
		what: "Prints the worker configuration as the worker will see it, each value with its source, and connect-init's own settings; connects to nothing. Run it first when the worker disagrees with you.",
		examples: []example{
			{"inside the container", "docker compose exec connect connect-init config"},
			{"a CI check of a new environment file", "env $(cat connect.env) connect-init config --json > /dev/null || exit 1"},
		},
	},
	"healthcheck": {
		what: "Exits 0 when the local worker has joined its group and serves requests, else 1 with one line saying why (bad input included: Docker reserves 2). Use it as the container's HEALTHCHECK.",
		examples: []example{
			{"a Dockerfile", `HEALTHCHECK CMD ["connect-init", "healthcheck"]`},
			{"Compose", `healthcheck: {test: ["CMD", "connect-init", "healthcheck", "--timeout=5s"]}`},
		},
	},
	"apply": {
		what: "Creates and updates (and with --prune deletes) connectors from a directory of definitions (*.json, *.properties), validated by Connect first, then waits until they run; --dry-run prints the plan and writes nothing. Use it for connectors as code, from a pipeline or as a one-shot service.",
		examples: []example{
			{"a CI job: the plan, exit 3 when something would change", "connect-init apply --dir connectors --dry-run --json --detailed-exitcode --url http://connect-1:8083 > plan.json"},
			{"Compose, a one-shot service after the workers", `entrypoint: ["connect-init", "apply", "--wait=5m"]`},
			{"keep the desired state, with metrics", "connect-init apply --dir /connectors --watch --metrics-addr=:9464"},
		},
	},
	"offsets": {
		what: "Exports a connector's offsets to a file, applies them from one, or resets them, through one worker's REST API (Kafka 3.6 or later, KIP-875): the connector is stopped, written, read back and put back in its state. Use it to move or rewind a connector.",
		examples: []example{
			{"export", "connect-init offsets export --url http://connect-1:8083 --connector my-source --file my-source.offsets.json"},
			{"apply the file back", "connect-init offsets apply --url http://connect-1:8083 --connector my-source --file my-source.offsets.json"},
			{"reset every offset", "connect-init offsets reset --url http://connect-1:8083 --connector my-source"},
		},
	},
	"repair": {
		what: "Plans raising the replication factor of __consumer_offsets and Connect's internal topics online and prints the plan; --execute carries it out, throttled, and verifies it. Use it when doctor reports a single-replica internal topic.",
		examples: []example{
			{"the plan only", "connect-init repair"},
			{"carry it out, three replicas", "connect-init repair --execute --replication-factor=3 --throttle=50MB/s"},
		},
	},
	"lock": {
		what: "lock acquire waits inside the worker for its turn to join its group (the in-worker startup lock); the worker's config provider runs it, not people.",
		examples: []example{
			{"as the provider runs it", "connect-init lock acquire"},
		},
	},
	"version": {
		what: "Prints connect-init's version, the commit it was built from and its time.",
		examples: []example{
			{"a bug report", "connect-init version"},
			{"a pipeline", "connect-init version --json | jq -r .result.version"},
		},
	},
	"help": {
		what:     "Prints the commands, or a command's help (the same as connect-init COMMAND -h).",
		examples: []example{{"", "connect-init help apply"}},
	},
	"completion": {
		what: "Prints a completion script for bash, zsh or fish: the commands, each command's flags and the CONNECT_INIT_* names.",
		examples: []example{
			{"bash, this shell", "source <(connect-init completion bash)"},
			{"zsh", `connect-init completion zsh > "${fpath[1]}/_connect-init"`},
			{"fish", "connect-init completion fish > ~/.config/fish/completions/connect-init.fish"},
		},
	},
}

// commandHelp is a command's -h: what it does and when to use it, its
// usage, examples, flags (typed placeholders), the settings that are
// variables only, and its exit codes.
func commandHelp(w io.Writer, fs *flag.FlagSet, cmd command) {
	path := cmdPath(cmd)
	fmt.Fprintf(w, "usage of connect-init %s\n\n", cmd.usage)
	writeAbout(w, strings.Fields(path)[0])
	fmt.Fprintln(w, "flags:")
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(cmd.hidden, f.Name) {
			return
		}
		head, help := flagHelp(f, cmd)
		fmt.Fprintf(w, "%s\n      %s\n", head, help)
	})
	writeVariables(w, cmd.name)
	writeExitCodes(w, path)
}

// writeAbout is a help's description and examples.
func writeAbout(w io.Writer, name string) {
	d, ok := commandDocs[name]
	if !ok {
		return
	}
	fmt.Fprintln(w, wrap(d.what, 78, ""))
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range d.examples {
		if e.where != "" {
			fmt.Fprintf(w, "  # %s\n", e.where)
		}
		fmt.Fprintf(w, "  %s\n", e.line)
	}
	fmt.Fprintln(w)
}

// flagHelp is one flag's head (--name placeholder) and help line.
func flagHelp(f *flag.Flag, cmd command) (head, help string) {
	if sf, ok := f.Value.(*settingFlag); ok {
		return settingFlagHelp(sf, f.DefValue)
	}
	head = "  --" + f.Name
	if p := placeholder(f); p != "bool" {
		head += " " + p
	}
	_, help = flag.UnquoteUsage(f)
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(help, "default") {
		help += " (default " + f.DefValue + ")"
	}
	return head, help
}

// writeVariables lists the settings that mean something for the command
// but are variables only.
func writeVariables(w io.Writer, name settings.Command) {
	var vars []settings.Setting
	for _, r := range settings.Table() {
		if r.AppliesTo(name) && !r.FlagFor(name) {
			vars = append(vars, r)
		}
	}
	if len(vars) == 0 {
		return
	}
	fmt.Fprintln(w, "settings without a flag here (variables only):")
	for _, r := range vars {
		line := "  " + r.Env + ": " + plainHelp(r.HelpIn(name))
		if d := r.ShownDefault(); d != "" {
			line += " (default " + plainHelp(d) + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// writeExitCodes is the command's exit codes, from package exitcode.
func writeExitCodes(w io.Writer, path string) {
	t, ok := exitcode.For(path)
	if !ok {
		return
	}
	fmt.Fprintln(w, "exit codes (docs/exit-codes.md):")
	for _, c := range t.Codes {
		code := strconv.Itoa(c.Code)
		if c.Code == exitcode.SignalBase {
			code = "128+signal"
		}
		fmt.Fprintf(w, "  %-10s %s\n", code, wrap(c.Means, 66, "             "))
	}
}

// settingPlaceholder names a setting flag's value by its type: duration,
// count, bool, a list's element, or what a string holds.
func settingPlaceholder(r settings.Setting) string {
	switch t := r.Type(); {
	case t == "duration":
		return "duration"
	case t == "int":
		return "count"
	case t == "list" && r.Flag == "peers":
		return "host:port,..."
	case t == "list":
		return "name,..."
	case t != "string":
		return t
	case strings.HasSuffix(r.Flag, "addr"):
		return "host:port"
	case strings.Contains(r.Flag, "file") || strings.Contains(r.Flag, "config") || r.Flag == "dir" || r.Flag == "cacert" || r.Flag == "cert" || r.Flag == "key" || r.Flag == "lock-jar":
		return "path"
	case strings.HasSuffix(r.Flag, "topic"):
		return "topic"
	}
	return "string"
}

// wrap breaks s into lines of at most width, each after the first
// starting with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// helpPages are the commands whose help docs/cli.md holds, as typed.
var helpPages = [][]string{{"run"}, {"prepare"}, {"doctor"}, {"config"}, {"healthcheck"}, {"apply"}, {"offsets"}, {"repair"}, {"lock", "acquire"}, {"version"}, {"completion"}}

// cliReference is docs/cli.md: connect-init -h and every command's help,
// as the binary prints them with no setting set (TestCLIDoc holds it).
func cliReference(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n[Documentation index](README.md) · [README](../README.md)\n\n")
	b.WriteString("Generated from the binary's own help (`go test ./cmd/connect-init -run TestCLIDoc -update`): each command's description, examples, flags with their types (`duration`, `count`, `path`, `name,...`), the settings that are variables only, and the exit codes of [exit codes](exit-codes.md). `connect-init completion bash|zsh|fish` prints a completion script for the same commands and flags.\n\n")
	page := func(title string, args []string) {
		var out bytes.Buffer
		c := &cli{stdout: &out, stderr: io.Discard, stdin: strings.NewReader("")}
		c.dispatch(ctx, args)
		b.WriteString("## " + title + "\n\n```\n" + strings.TrimRight(out.String(), "\n") + "\n```\n\n")
	}
	page("connect-init -h", []string{"-h"})
	for _, p := range helpPages {
		page("connect-init "+strings.Join(p, " "), append(slices.Clone(p), "-h"))
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
