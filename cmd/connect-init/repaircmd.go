package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/repair"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// repairFlags are repair's own flags, besides the settings every command
// takes.
type repairFlags struct {
	topics    []string // "offsets", "internal"
	rf        int      // 0: per topic (broker setting or configured)
	execute   bool
	rateBytes int64
	throttle  string
}

// repairCommand is `connect-init repair`: it plans raising the replication
// factor of __consumer_offsets and of Connect's internal topics, prints the
// plan, and with --execute carries it out online (repair/). The worker
// settings are read as by prepare and doctor (the settings gate), so the
// internal topics and their configured replication factors are the
// worker's. Exit 0 done (or nothing to do, or a dry run), 1 refused or not
// finished, 2 bad flags or settings, 128+signal interrupted.
func (c *cli) repairCommand(ctx context.Context, args []string) int {
	env, stdout := c.env, c.stdout
	rf := repairFlags{topics: []string{"offsets", "internal"}, throttle: "50MB/s", rateBytes: 50_000_000}
	spec := command{name: settings.Repair, usage: "repair [--topics=offsets,internal] [--replication-factor N] [--execute] [--throttle=50MB/s]",
		flags: func(fs *flag.FlagSet) { bindRepairFlags(fs, &rf) }}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return code
	}
	if fs.NArg() > 0 {
		problems = mergeProblems(problems, &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("repair takes no arguments (got %q)", fs.Args()), Fix: "see connect-init repair -h"})
	}
	// Its own settings and the worker's, every problem at once.
	if _, werr := c.options.Inspect(env, s); werr != nil {
		problems = mergeProblems(problems, werr)
	}
	if problems != nil {
		reportProblems(c.earlyLogger(s, args), problems)
		return exitcode.Config
	}
	log := c.logger(s)

	cfg, clients, err := startup.LoadConfig(c.options, env, s, log)
	if err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	defer clients.Close()
	rctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	code = runRepair(rctx, cfg, clients, rf, log, stdout)
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	return code
}

// bindRepairFlags declares repair's own flags on fs, each writing into rf;
// rf holds the defaults.
func bindRepairFlags(fs *flag.FlagSet, rf *repairFlags) {
	funcVar(fs, "topics", "offsets,internal", "what to repair, comma-separated: offsets (__consumer_offsets), internal (Connect's config, offset and status topics); default offsets,internal", func(v string) error {
		out, err := parseTopicSets(v)
		if err != nil {
			return &flagError{problem: err.Error(), fix: "use offsets, internal or offsets,internal"}
		}
		rf.topics = out
		return nil
	})
	funcVar(fs, "replication-factor", "count", "target replication factor for every topic repaired (default: offsets.topic.replication.factor for __consumer_offsets, the configured <role>.storage.replication.factor for Connect's topics)", func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil || n < 1 || n > 32767 {
			return &flagError{problem: fmt.Sprintf("is %q, not a whole number of replicas from 1 to 32767", v), fix: "use e.g. --replication-factor=3"}
		}
		rf.rf = int(n)
		return nil
	})
	fs.BoolVar(&rf.execute, "execute", false, "carry the plan out (without it repair only prints the plan and changes nothing)")
	funcVar(fs, "throttle", "rate", "replication throttle while replicas copy, e.g. 50MB/s, 10MiB/s; 0 or none for no throttle (default 50MB/s)", func(v string) error {
		n, err := parseRate(v)
		if err != nil {
			return &flagError{problem: err.Error(), fix: "use a rate such as 50MB/s, 10MiB/s or 1000000 (bytes per second), or none"}
		}
		rf.rateBytes, rf.throttle = n, v
		return nil
	})
}

// parseTopicSets reads --topics: the comma-separated topic sets to repair
// (offsets, internal), each once, in the order given.
func parseTopicSets(v string) ([]string, error) {
	var out []string
	if strings.TrimSpace(v) == "" {
		return nil, errors.New("is empty")
	}
	for _, p := range strings.Split(v, ",") {
		switch p = strings.TrimSpace(p); p {
		case "offsets", "internal":
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		default:
			return nil, fmt.Errorf("names an unknown topic set %q", p)
		}
	}
	return out, nil
}

// runRepair connects, asks the brokers for their defaults, and plans or
// executes.
func runRepair(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, rf repairFlags, log *slog.Logger, stdout io.Writer) int {
	client, err := sarama.NewClient(cfg.BootstrapServers, clients.AdminConfig)
	if err != nil {
		log.Error("cannot connect to the cluster", "error", kafka.ExplainConnError(err), "bootstrap", strings.Join(cfg.BootstrapServers, ","))
		return exitcode.Failed
	}
	defer client.Close()
	// A client without full metadata learns the controller only from a
	// metadata request naming topics.
	seed := append([]string{repair.ConsumerOffsets}, cfg.TopicNames()...)
	if err := client.RefreshMetadata(seed...); err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) && !errors.Is(err, sarama.ErrLeaderNotAvailable) {
		log.Error("cannot read the cluster's metadata", "error", kafka.ExplainConnError(err), "bootstrap", strings.Join(cfg.BootstrapServers, ","))
		return exitcode.Failed
	}
	brokers, ok := brokersForRepair(ctx, cfg, clients, log, stdout)
	if !ok {
		return exitcode.Failed
	}
	cluster, err := repair.NewSaramaCluster(client)
	if err != nil {
		log.Error("cannot connect to the cluster", "error", err.Error())
		return exitcode.Failed
	}
	defer cluster.Close()
	reqs, err := repair.Targets(ctx, cluster, targetSpec(cfg, rf, brokers))
	if err != nil {
		log.Error("cannot plan the repair", "error", kafka.ExplainConnError(err))
		return exitcode.Failed
	}
	short := repair.ShortTargets(reqs, rf.rf != 0)
	x := &repair.Executor{Cluster: cluster, Log: log}
	req := repair.Request{Topics: reqs, RateBytes: rf.rateBytes, Execute: repair.MayExecute(rf.execute, short)}
	res, err := x.Run(ctx, req)
	printRepair(stdout, res, req, rf, err)
	if refused := repair.RefuseShort(rf.execute, short, res, err); refused != nil {
		log.Error("refusing to repair", "error", refused.Error(),
			"fix", "start the missing brokers and run repair again, or ask for the lower factor explicitly with --replication-factor")
		return exitcode.Failed
	}
	return repairOutcome(log, res, err)
}

// repairOutcome is the exit code of a planned or executed repair, with the
// fix: a resume is promised only when a reassignment was submitted.
func repairOutcome(log *slog.Logger, res repair.Result, err error) int {
	switch {
	case err == nil:
		return exitcode.OK
	case repair.IsForeign(err):
		log.Error("refusing to repair", "error", err.Error(), "fix", "let the running reassignment finish or cancel it, then run repair again")
	case repair.IsTooFewBrokers(err):
		log.Error("refusing to repair", "error", err.Error(), "fix", "start the missing brokers, or pass a smaller --replication-factor")
	case res.Submitted || len(res.Resumed) > 0:
		log.Error("repair did not finish", "error", kafka.ExplainConnError(err), "fix", "run connect-init repair --execute again: it resumes the reassignment it started and removes the throttle at the end")
	default:
		log.Error("repair did not start", "error", kafka.ExplainConnError(err), "fix", "nothing was reassigned; fix the cause above and run connect-init repair again")
	}
	return exitcode.Failed
}

// brokersForRepair probes every registered broker (the brokers gate's
// probe) and refuses, naming each, when one is registered but does not
// answer (repair.CountBrokers). It returns the brokers the default target
// is computed from.
func brokersForRepair(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, stdout io.Writer) (repair.KnownBrokers, bool) {
	bg := &gate.BrokerGate{Config: clients.AdminConfig, Bootstrap: cfg.BootstrapServers, Expected: 1, Topics: cfg.TopicNames(), Log: log}
	rep := bg.Probe(ctx)
	if rep.Brokers == nil {
		log.Error("cannot reach the cluster", "error", rep.Summary(), "fix", "check CONNECT_BOOTSTRAP_SERVERS and the security settings, and that the brokers run")
		return repair.KnownBrokers{}, false
	}
	registered := make([]repair.Registered, 0, len(rep.Brokers))
	for _, b := range rep.Brokers {
		registered = append(registered, repair.Registered{ID: b.ID, Addr: b.Addr, Up: b.Up, Err: b.Err})
	}
	absent := make([]repair.Absent, 0, len(rep.Absent))
	for _, a := range rep.Absent {
		absent = append(absent, repair.Absent{ID: a.ID, Name: a.String()})
	}
	known, err := repair.CountBrokers(registered, absent)
	if err != nil {
		fmt.Fprintf(stdout, "connect-init repair %s: refused, nothing changed: %s\n", version, err)
		log.Error("refusing to repair", "error", err.Error(),
			"fix", "start the broker again; if it is gone for good, unregister it (kafka-cluster unregister --bootstrap-server ... --id N) and run repair again")
		return repair.KnownBrokers{}, false
	}
	return known, true
}

// targetSpec is what rf and the worker's settings ask repair for.
func targetSpec(cfg *settings.Config, rf repairFlags, brokers repair.KnownBrokers) repair.TargetSpec {
	spec := repair.TargetSpec{Offsets: slices.Contains(rf.topics, "offsets"), ReplicationFactor: rf.rf, Brokers: brokers}
	if slices.Contains(rf.topics, "internal") {
		for _, t := range cfg.Topics {
			spec.Internal = append(spec.Internal, repair.InternalTopic{Name: t.Name, Role: t.Role, ReplicationFactor: int(t.ReplicationFactor)})
		}
	}
	return spec
}

// printRepair prints the plan and, after an execution, its result.
func printRepair(w io.Writer, res repair.Result, req repair.Request, rf repairFlags, runErr error) {
	p := res.Plan
	printRepairHeader(w, req, rf)
	printPlanBrokers(w, p)
	printPlanTopics(w, p)
	if len(res.Resumed) > 0 {
		fmt.Fprintf(w, "In progress, started by an earlier repair (followed, not submitted again): %d partition(s)\n", len(res.Resumed))
		for _, t := range req.Topics {
			printMoves(w, "  ", res.Resumed, t.Name)
		}
	}
	if !p.Empty() || len(res.Resumed) > 0 {
		if rf.rateBytes > 0 {
			fmt.Fprintf(w, "Throttle %s (%d bytes/s) on %s and %s of every live broker while the replicas copy; removed at the end\n", rf.throttle, rf.rateBytes, repair.LeaderRate, repair.FollowerRate)
		} else {
			fmt.Fprintln(w, "Throttle none")
		}
	}
	printRepairResult(w, res, req, runErr)
}

// printRepairHeader prints the first line, saying whether the plan is
// carried out, and a warning for each target below the one wanted.
func printRepairHeader(w io.Writer, req repair.Request, rf repairFlags) {
	mode := "dry run: nothing changed; add --execute to carry it out"
	switch {
	case req.Execute:
		mode = "executing"
	case rf.execute:
		mode = "not executed: the target is below the one wanted; nothing changed"
	}
	fmt.Fprintf(w, "connect-init repair %s (%s)\n", version, mode)
	for _, t := range req.Topics {
		if t.Short(rf.rf != 0) {
			fmt.Fprintf(w, "WARNING  %s: target %d replicas, below the %d wanted (%s); --execute refuses it unless --replication-factor=%d asks for it\n",
				t.Name, t.TargetRF, t.Wanted, t.Why, t.TargetRF)
		}
	}
}

// printPlanBrokers prints the live brokers the plan spreads over, with
// their racks; nothing when the plan names none.
func printPlanBrokers(w io.Writer, p repair.Plan) {
	if len(p.Brokers) == 0 {
		return
	}
	var bs []string
	for _, b := range p.Brokers {
		if b.Rack != "" {
			bs = append(bs, fmt.Sprintf("%d (rack %s)", b.ID, b.Rack))
		} else {
			bs = append(bs, strconv.Itoa(int(b.ID)))
		}
	}
	racks := "no broker.rack"
	if p.RackAware {
		racks = "rack-aware"
	}
	fmt.Fprintf(w, "Brokers  %d live: %s (%s)\n", len(p.Brokers), strings.Join(bs, ", "), racks)
}

// printPlanTopics prints the plan's notes, each topic with its moves, and
// the partitions it cannot reassign.
func printPlanTopics(w io.Writer, p repair.Plan) {
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note     %s\n", n)
	}
	for _, t := range p.Topics {
		if t.Moves == 0 {
			fmt.Fprintf(w, "%s  %d partition(s), replication factor %d, target %d (%s): nothing to do\n", t.Name, t.Partitions, t.CurrentRF, t.TargetRF, t.Why)
			continue
		}
		fmt.Fprintf(w, "%s  %d partition(s), replication factor %d -> %d (%s): %d to reassign\n", t.Name, t.Partitions, t.CurrentRF, t.TargetRF, t.Why, t.Moves)
		printMoves(w, "  ", p.Moves, t.Name)
	}
	for _, b := range p.Blocked {
		fmt.Fprintf(w, "Blocked  %s-%d %s: %s\n", b.Topic, b.Partition, repair.FormatIDs(b.Replicas), b.Reason)
	}
}

// printRepairResult prints the closing line: nothing to repair, or after
// an execution what was done or what remains.
func printRepairResult(w io.Writer, res repair.Result, req repair.Request, runErr error) {
	p := res.Plan
	if runErr == nil && p.Empty() && len(p.Blocked) == 0 && len(res.Resumed) == 0 {
		fmt.Fprintln(w, "Nothing to repair.")
		return
	}
	if !req.Execute {
		return
	}
	if runErr == nil {
		n := len(res.Done)
		fmt.Fprintf(w, "Done: %d partition(s) reassigned and verified (every target replica in sync), throttle removed, took %s\n", n, res.Took.Round(1e6))
		return
	}
	if len(res.Remaining) > 0 {
		fmt.Fprintf(w, "Not finished: %d of %d partition(s) remain:\n", len(res.Remaining), len(res.Remaining)+len(res.Done))
		for _, t := range req.Topics {
			printMoves(w, "  ", res.Remaining, t.Name)
		}
		fmt.Fprintln(w, "The reassignment goes on in the cluster; run connect-init repair --execute again to follow it and remove the throttle.")
	}
}

// printMoves prints topic's moves one line per change, the partitions
// with the same change together: "__consumer_offsets partitions 0-49  [1] -> [1,2,3]".
func printMoves(w io.Writer, indent string, moves []repair.Move, topic string) {
	var keys []string
	parts := map[string][]int32{}
	for _, m := range moves {
		if m.Topic != topic {
			continue
		}
		k := repair.FormatIDs(m.Current) + " -> " + repair.FormatIDs(m.Target)
		if _, ok := parts[k]; !ok {
			keys = append(keys, k)
		}
		parts[k] = append(parts[k], m.Partition)
	}
	for _, k := range keys {
		ps := parts[k]
		word := "partitions"
		if len(ps) == 1 {
			word = "partition"
		}
		fmt.Fprintf(w, "%s%s %s %s  %s\n", indent, topic, word, ranges(ps), k)
	}
}

// ranges renders sorted partition ids compactly: 0-3,5,7-9.
func ranges(ids []int32) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	var out []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			out = append(out, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			out = append(out, strconv.Itoa(int(ids[i])))
		}
		i = j + 1
	}
	return strings.Join(out, ",")
}

// parseRate reads a byte rate: 50MB/s, 10MiB/s, 500KB, 1000000; 0 or none
// means no throttle. Decimal units are powers of 1000, binary of 1024.
func parseRate(v string) (int64, error) {
	s := strings.TrimSpace(v)
	if s == "0" || strings.EqualFold(s, "none") || strings.EqualFold(s, "off") {
		return 0, nil
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/s"), "/S")
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f*float64(mult) < 1 || f*float64(mult) > 1e15 {
		return 0, fmt.Errorf("is %q, not a rate of at least 1 byte per second", v)
	}
	return int64(f * float64(mult)), nil
}
