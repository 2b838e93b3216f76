package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
	"github.com/connect-init/connect-init/workerconfig"
)

// `connect-init apply` (issue 15): connectors as code. The apply package
// plans, validates, writes and waits; this file finds the REST API of a
// worker of *our* group and proves it is one before anything is written:
//
//   - candidates: --url, else CONNECT_INIT_PEERS, else the group's members
//     from DescribeGroups (leader first, decoded by connect/proto as the
//     group gate does), or, with --wait-local, this container's worker;
//   - proof: GET / answers as Connect does (version and kafka_cluster_id),
//     with the Kafka cluster id of our brokers; the worker is a member of
//     our group (its URL is a member's advertised URL, or every connector
//     and task it reports runs on a member); and it is ready (GET /health
//     200, or the herder's 404 on workers without /health). The self-probe
//     connect-init serves before the exec answers none of this as Connect
//     does, so it is never taken for the worker.
//
// It waits (logging every 5 s) until such a worker answers, bounded by
// CONNECT_INIT_TIMEOUT; --wait-local waits as long as the worker lives.

// applyPoll is the pause between two looks for a worker.
const applyPoll = time.Second

// applyFlags are apply's own flags.
type applyFlags struct {
	dir       string
	prune     bool
	dryRun    bool
	wait      time.Duration
	url       string
	waitLocal bool
}

// applyCommand is `connect-init apply [--dir D] [--prune] [--dry-run]
// [--wait=5m] [--url U] [--wait-local]`. Exit 0: all applied and in the
// desired state; 1: a connector or task failed, a write failed, no worker
// of the group answered, or the wait timed out; 2: a bad file (named with
// its line), a definition Connect's validation refused, or bad flags;
// 128+signal when SIGTERM or SIGINT stopped it.
func (c *cli) applyCommand(ctx context.Context, args []string) int {
	env, stdout, stderr := c.env, c.stdout, c.stderr
	s, err := settings.LoadSettings(env)
	if err != nil {
		logConfigError(earlyLogger(stderr, env, args), err)
		return startup.ExitConfig
	}
	fs := flag.NewFlagSet("connect-init apply", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindFlags(fs, &s)
	var af applyFlags
	fs.StringVar(&af.dir, "dir", s.ConnectorsDir, "directory of connector definitions, *.json and *.properties (CONNECT_INIT_CONNECTORS_DIR)")
	fs.BoolVar(&af.prune, "prune", false, "delete the cluster's connectors that no file defines")
	fs.BoolVar(&af.dryRun, "dry-run", false, "print the plan and Connect's validation, write nothing")
	fs.DurationVar(&af.wait, "wait", 5*time.Minute, "how long to wait for every connector and task to be in the desired state (0: do not wait)")
	fs.StringVar(&af.url, "url", "", "the REST URL of a worker of the group (default: CONNECT_INIT_PEERS, else the group's members)")
	fs.BoolVar(&af.waitLocal, "wait-local", false, "wait for this container's worker to be ready, then apply once (started by run)")
	if code, done := parseCommandFlags(fs, args, env, stderr, "apply"); done {
		return code
	}
	s.Flags = setFlags(fs)
	if flagSet(fs, "dir") {
		s.Flags["CONNECT_INIT_CONNECTORS_DIR"] = "--dir"
	}
	early := earlyLogger(stderr, env, args)
	switch {
	case fs.NArg() > 0:
		logConfigError(early, &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("apply takes no arguments (got %q)", fs.Args()), Fix: "name the directory with --dir"})
		return startup.ExitConfig
	case strings.TrimSpace(af.dir) == "":
		logConfigError(early, &settings.ConfigError{Setting: "CONNECT_INIT_CONNECTORS_DIR", Problem: "is not set, and --dir is not given", Fix: "point --dir or CONNECT_INIT_CONNECTORS_DIR at a directory of connector definitions (*.json, *.properties)"})
		return startup.ExitConfig
	case af.wait < 0:
		logConfigError(early, &settings.ConfigError{Setting: "--wait", Problem: fmt.Sprintf("is negative (%s)", af.wait), Fix: "use a duration such as 5m, or 0 not to wait"})
		return startup.ExitConfig
	case af.waitLocal && af.url != "":
		logConfigError(early, &settings.ConfigError{Setting: "--url", Problem: "is given with --wait-local, which applies to this container's worker", Fix: "use one of them"})
		return startup.ExitConfig
	case af.url != "":
		if _, err := restclient.Parse(af.url); err != nil {
			logConfigError(early, &settings.ConfigError{Setting: "--url", Problem: err.Error(), Fix: "give a worker's REST URL, e.g. http://connect-1:8083"})
			return startup.ExitConfig
		}
	}
	if err := s.Validate(); err != nil {
		logConfigError(early, err)
		return startup.ExitConfig
	}
	log := newLogger(stderr, s)
	out := stdout
	if af.waitLocal {
		// The child of run: its lines go to the worker's stderr, marked.
		log = log.With("process", "apply")
		pw := &prefixWriter{w: stderr, prefix: "connect-init apply: "}
		out = pw
		defer pw.flush()
	}
	sarama.Logger = slog.NewLogLogger(log.Handler(), slog.LevelDebug)

	// The files first: a typo costs no connection.
	conns, skipped, err := apply.Load(af.dir)
	if err != nil {
		log.Error("bad connector definition", "gate", "apply", "error", err.Error(), "setting", s.Name("CONNECT_INIT_CONNECTORS_DIR"),
			"fix", "correct the file; nothing was written")
		return startup.ExitConfig
	}
	for _, f := range skipped {
		log.Info("ignored a file of the connectors directory", "file", f, "why", "only *.json and *.properties are definitions")
	}
	if len(conns) == 0 && !af.prune {
		log.Warn("no connector definitions", "dir", af.dir)
	}

	cfg, clients, err := startup.LoadConfig(c.options, env, s, log)
	if err != nil {
		logConfigError(log, err)
		return startup.ExitConfig
	}
	defer clients.Close()
	if err := connectForLock(ctx, cfg, clients, log); err != nil {
		if se, ok := entrypoint.Interrupted(ctx); ok {
			log.Warn("apply interrupted", "gate", "apply", "signal", se.Signal.String())
			return se.ExitCode()
		}
		log.Error("cannot reach the Kafka cluster", "gate", "apply", "error", err.Error())
		return startup.ExitGate
	}
	f := &workerFinder{cfg: cfg, clients: clients, log: log, clock: c.clock, local: af.waitLocal}
	if af.url != "" {
		f.explicit, f.explicitFrom = []string{af.url}, "--url"
	} else if len(s.Peers) > 0 && !af.waitLocal {
		for _, p := range s.Peers {
			u, err := peerURL(p, cfg.AdvertisedURL)
			if err != nil {
				logConfigError(log, &settings.ConfigError{Setting: s.Name("CONNECT_INIT_PEERS"), Problem: fmt.Sprintf("entry %q %v", p, err), Fix: "list peers as host or host:port, comma-separated"})
				return startup.ExitConfig
			}
			f.explicit = append(f.explicit, u)
		}
		f.explicitFrom = s.Name("CONNECT_INIT_PEERS")
	}
	api, err := f.find(ctx)
	if se, ok := entrypoint.Interrupted(ctx); ok {
		log.Warn("apply interrupted", "gate", "apply", "signal", se.Signal.String())
		return se.ExitCode()
	}
	if err != nil {
		log.Error("no worker of the group to apply to", "gate", "apply", "group", cfg.GroupID, "error", err.Error(),
			"fix", "start the group's workers, or give --url of one of them")
		return startup.ExitGate
	}
	log.Info("applying connector definitions", "gate", "apply", "url", api.Target.Raw, "dir", af.dir, "definitions", len(conns), "prune", af.prune, "dry_run", af.dryRun)
	res := apply.Run(ctx, api, conns, apply.Options{Out: out, Log: log, Clock: c.clock, Prune: af.prune, DryRun: af.dryRun,
		Wait: af.wait, Source: af.dir})
	if se, ok := entrypoint.Interrupted(ctx); ok {
		log.Warn("apply interrupted", "gate", "apply", "signal", se.Signal.String())
		return se.ExitCode()
	}
	if res.Code != startup.ExitOK {
		log.Error("apply failed", "gate", "apply", "failed", strings.Join(res.Failed, ","), "exit", res.Code)
	} else {
		log.Info("apply done", "gate", "apply", "created", res.Plan.Count(apply.Create), "updated", res.Plan.Count(apply.Update),
			"unchanged", res.Plan.Count(apply.Unchanged), "deleted", res.Plan.Count(apply.Delete))
	}
	return res.Code
}

// peerURL turns a CONNECT_INIT_PEERS entry (host, host:port or a URL) into
// a URL with the scheme and port of our own advertised URL, by the one rule
// for such entries (restclient.ParsePeer; the settings step has already
// refused entries it cannot read).
func peerURL(p, advertised string) (string, error) {
	scheme, port := "http", "8083"
	if t, err := restclient.Parse(advertised); err == nil {
		scheme, port = t.Scheme, t.Port
	}
	t, err := restclient.ParsePeer(p, scheme, port)
	if err != nil {
		return "", err
	}
	return t.Raw, nil
}

// workerFinder finds a worker of our group that is ready.
type workerFinder struct {
	cfg     *settings.Config
	clients *kafka.Clients
	log     *slog.Logger
	clock   clock.Clock
	// local: this container's worker (--wait-local).
	local bool
	// explicit are --url or CONNECT_INIT_PEERS, named by explicitFrom.
	explicit     []string
	explicitFrom string
}

// rootInfo is Connect's GET / answer.
type rootInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// errForeign is a worker proven to belong elsewhere: never waited out.
type errForeign struct{ msg string }

func (e *errForeign) Error() string { return e.msg }

// find waits until a candidate is proven ours and ready.
func (f *workerFinder) find(ctx context.Context) (*apply.API, error) {
	var cancel context.CancelFunc
	if !f.local {
		ctx, cancel = context.WithTimeout(ctx, f.cfg.Settings.Timeout)
		defer cancel()
	}
	parent := os.Getppid()
	rest := &restclient.Client{TLS: f.cfg.RESTClientTLS, Timeout: 5 * time.Second, Clock: f.clock}
	if f.local {
		h, err := peers.LocalHealth(f.cfg.Worker, f.cfg.AdvertisedURL, f.cfg.RESTClientTLS, 5*time.Second)
		if err != nil {
			return nil, err
		}
		rest = h.REST
	}
	start, lastLog := f.clock.Now(), time.Time{}
	for {
		if f.local && os.Getppid() != parent {
			return nil, errors.New("the worker exited (this process was reparented) before it was ready")
		}
		api, why, err := f.round(ctx, rest)
		if api != nil {
			return api, nil
		}
		var fe *errForeign
		if errors.As(err, &fe) {
			return nil, err
		}
		if err != nil {
			why = err.Error()
		}
		now := f.clock.Now()
		if now.Sub(lastLog) >= 5*time.Second {
			lastLog = now
			f.log.Info("waiting for a worker of the group", "gate", "apply", "group", f.cfg.GroupID, "why", why, "waited", now.Sub(start).Round(time.Second).String())
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("none within %s: %s", now.Sub(start).Round(time.Second), why)
		case <-f.clock.After(applyPoll):
		}
	}
}

// round takes one look: the group's members, then each candidate.
func (f *workerFinder) round(ctx context.Context, rest *restclient.Client) (*apply.API, string, error) {
	clusterID, err := registry.KafkaClusterID(f.clients.Member, f.cfg.ConfigTopic().Name)
	if err != nil {
		return nil, "", err
	}
	g := &gate.GroupGate{Admin: f.clients.Admin, Client: f.clients.Member, GroupID: f.cfg.GroupID, ConfigTopic: f.cfg.ConfigTopic().Name,
		Log: slog.New(slog.DiscardHandler), Clock: f.clock, StableWait: 10 * time.Second}
	rep, err := g.Check(ctx)
	if err != nil {
		var ge *gate.GateError
		if errors.As(err, &ge) && rep != nil && len(rep.Foreign) > 0 {
			return nil, "", &errForeign{msg: err.Error()}
		}
		return nil, "", err
	}
	members := proto.LeaderFirstURLs(rep.Decoded)
	if len(members) == 0 {
		return nil, fmt.Sprintf("the group %s has no members yet (state %s)", f.cfg.GroupID, rep.State), nil
	}
	memberSet := map[string]bool{}
	for _, u := range members {
		if t, err := restclient.Parse(u); err == nil {
			memberSet[t.Scheme+"://"+t.HostPort()] = true
		}
	}
	var candidates []string
	switch {
	case f.local:
		own, _ := restclient.Parse(f.cfg.AdvertisedURL)
		if !memberSet[own.Scheme+"://"+own.HostPort()] {
			return nil, fmt.Sprintf("this worker (%s) is not a member of the group %s yet", f.cfg.AdvertisedURL, f.cfg.GroupID), nil
		}
		local, err := workerconfig.LocalRESTURL(f.cfg.Worker)
		if err != nil {
			return nil, "", err
		}
		candidates = []string{local}
	case len(f.explicit) > 0:
		candidates = f.explicit
	default:
		candidates = members
	}
	var whys []string
	for _, u := range candidates {
		t, err := restclient.Parse(u)
		if err != nil {
			return nil, "", &errForeign{msg: err.Error()}
		}
		why, err := f.prove(ctx, rest, t, clusterID, memberSet)
		if err != nil {
			return nil, "", err
		}
		if why == "" {
			return &apply.API{REST: rest, Target: t, Clock: f.clock}, "", nil
		}
		whys = append(whys, why)
	}
	return nil, strings.Join(whys, "; "), nil
}

// prove checks one candidate: "" when it is a ready worker of our group, a
// reason to keep waiting, or an *errForeign.
func (f *workerFinder) prove(ctx context.Context, rest *restclient.Client, t restclient.Target, clusterID string, members map[string]bool) (string, error) {
	resp, err := rest.Get(ctx, t, "", nil)
	if err != nil {
		return fmt.Sprintf("GET / at %s: %v", t.Raw, err), nil
	}
	var root rootInfo
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &root) != nil || root.Version == "" || root.KafkaClusterID == "" {
		return fmt.Sprintf("GET / at %s answered %d, not as Connect does (version and kafka_cluster_id): not the worker yet", t.Raw, resp.Status), nil
	}
	if root.KafkaClusterID != clusterID {
		return "", &errForeign{msg: fmt.Sprintf("the worker at %s belongs to Kafka cluster %s, ours is %s: refusing to apply to another cluster", t.Raw, root.KafkaClusterID, clusterID)}
	}
	if !f.local && !members[t.Scheme+"://"+t.HostPort()] {
		ok, why, err := runsOnMembers(ctx, rest, t, members)
		if err != nil {
			return "", err
		}
		if !ok {
			return fmt.Sprintf("%s (%s) is not an advertised URL of the group %s's members (%s), and %s", t.Raw, f.explicitFrom, f.cfg.GroupID, strings.Join(sortedSet(members), ", "), why), nil
		}
	}
	return ready(ctx, rest, t), nil
}

// ready is "" when the worker at t serves requests (restclient.Health),
// else why not.
func ready(ctx context.Context, rest *restclient.Client, t restclient.Target) string {
	if r := rest.Health(ctx, t, nil); !r.Ready {
		return r.Reason
	}
	return ""
}

// runsOnMembers proves that a worker reached through another name (a load
// balancer) is of our group: every connector and task it reports runs on a
// worker id (host:port) of our members. A worker with no connectors proves
// nothing.
func runsOnMembers(ctx context.Context, rest *restclient.Client, t restclient.Target, members map[string]bool) (bool, string, error) {
	hosts := map[string]bool{}
	for m := range members {
		if mt, err := restclient.Parse(m + "/"); err == nil {
			hosts[mt.HostPort()] = true
		}
	}
	api := &apply.API{REST: rest, Target: t}
	l, err := api.List(ctx)
	if err != nil {
		return false, "its connectors cannot be read: " + err.Error(), nil
	}
	n := 0
	for name, st := range l.Status {
		ids := []string{st.Connector.WorkerID}
		for _, tk := range st.Tasks {
			ids = append(ids, tk.WorkerID)
		}
		for _, id := range ids {
			if id == "" {
				continue
			}
			n++
			if !hosts[id] {
				return false, "", &errForeign{msg: fmt.Sprintf("the worker at %s runs %s on %s, which is no member of our group: refusing to apply to another Connect cluster", t.Raw, name, id)}
			}
		}
	}
	if n == 0 {
		return false, "it runs no connector that would prove its group", nil
	}
	return true, "", nil
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// prefixWriter marks every line the in-run child prints.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := io.WriteString(p.w, p.prefix+string(p.buf[:i+1])); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		_, _ = io.WriteString(p.w, p.prefix+string(p.buf)+"\n")
		p.buf = nil
	}
}
