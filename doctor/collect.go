package doctor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
)

// Options tune the looks doctor takes. The zero value gives the defaults.
type Options struct {
	// StableWait bounds the wait for a Stable snapshot of a rebalancing
	// worker group (default 5s: doctor takes one look, not a gate's wait).
	StableWait time.Duration
	// TransactionRecheck is how long doctor waits before reading the
	// config topic's offsets again when its last stable offset is behind
	// its end offset, to tell a hanging transaction from a short one
	// (default 5s; negative: no second read).
	TransactionRecheck time.Duration
	// PeerTimeout bounds resolving and connecting to each advertised URL
	// (default 2s).
	PeerTimeout time.Duration
	// Clock is the gates' clock (default the system clock).
	Clock clock.Clock
	// SkipLocalScan leaves out the scan of this host's plugin.path: the
	// watcher runs in a container of the workers' image, not of a worker,
	// and a full scan (every class read) on every look would be its
	// dearest part.
	SkipLocalScan bool
	// Rejoins is the watcher's record of workers leaving the group and
	// coming back (doctor --watch keeps one across its looks); each look
	// adds its Stable group to it, and the longest recent rejoin feeds
	// the rebalance-delay rules. Nil for one-shot doctor, which sees the
	// group once and cannot measure a rejoin.
	Rejoins *RejoinTracker
	// Generations is the watcher's record of the group's generation
	// (doctor --watch keeps one across its looks): each look reads the
	// group's __consumer_offsets partition from where the last stopped,
	// for the exact rebalance count. Nil for one-shot doctor.
	Generations *GenerationTracker
}

func (o Options) withDefaults() Options {
	if o.StableWait <= 0 {
		o.StableWait = 5 * time.Second
	}
	if o.TransactionRecheck == 0 {
		o.TransactionRecheck = 5 * time.Second
	}
	if o.PeerTimeout <= 0 {
		o.PeerTimeout = 2 * time.Second
	}
	if o.Clock == nil {
		o.Clock = clock.System{}
	}
	return o
}

// OffsetsRecheck is the second read of the config topic's end offsets.
type OffsetsRecheck struct {
	After        time.Duration `json:"after_ns"`
	EndOffset    int64         `json:"config_end_offset"`
	StableOffset int64         `json:"config_last_stable_offset"`
	Error        string        `json:"error,omitempty"`
}

// Snapshot is everything doctor looked at: the gates' reports (nil when a
// look was not taken or failed before producing one) and why looks failed
// or were skipped. Diagnose derives the findings from it alone, so it can
// be built by hand in tests.
type Snapshot struct {
	GroupID          string
	BootstrapServers []string
	ExpectedBrokers  int
	// Strict is CONNECT_INIT_STRICT: a single-replica coordinator
	// partition is then an error, as it is for run.
	Strict bool
	// Handover is CONNECT_INIT_GROUP_HANDOVER, which the group rules
	// judge a registry claim with.
	Handover string
	// Specs are the internal topics as configured.
	Specs []settings.TopicSpec

	Brokers *gate.BrokerReport
	// ConnectErr is why the Kafka clients could not connect after the
	// broker probe.
	ConnectErr string

	Topics    *gate.TopicReport
	TopicsErr string

	// ConsumerOffsetsMissing is true when __consumer_offsets does not
	// exist yet; doctor then skips the coordinator and group looks, since
	// FindCoordinator would create the topic.
	ConsumerOffsetsMissing bool

	Coordinator    *gate.CoordinatorReport
	CoordinatorErr string

	Group    *gate.GroupReport
	GroupErr string
	// Recheck is set when the config topic had an open transaction at the
	// first read and was read again.
	Recheck *OffsetsRecheck

	Peers []PeerCheck

	// Skipped lists looks not taken, with the reason.
	Skipped []string
	// Plugins is the plugin parity look; nil when the group was not
	// described.
	Plugins *PluginsLook
	// Rebalance is what the worker settings say about the delay before a
	// departed worker's tasks are reassigned; nil when not read.
	Rebalance *checks.Rebalance
	// Generation is what the look added to the watcher's rebalance count
	// and from which source; nil without Options.Generations or without
	// a coordinator.
	Generation *GenerationLook
	// EOS are the exactly-once readiness results (gate.EOSLook, the group
	// step's rules) when the worker's exactly.once.source.support is
	// preparing or enabled; EOSErr says why they could not be read.
	EOS    []checks.Result
	EOSErr string
}

// Collect takes doctor's one-shot looks with the caller's configuration and
// unconnected clients (kafka.NewClients): brokers, internal topics
// (inspect only), the group's coordinator, the worker group (a short wait
// for a Stable snapshot) and each member's advertised URL. It never creates
// or changes anything: in particular it does not send FindCoordinator when
// __consumer_offsets does not exist, since that would create it. Failures
// are recorded in the snapshot, never returned.
func Collect(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, opts Options) *Snapshot {
	opts = opts.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &looks{ctx: ctx, cfg: cfg, clients: clients, log: log, opts: opts,
		s: &Snapshot{GroupID: cfg.GroupID, BootstrapServers: cfg.BootstrapServers, ExpectedBrokers: cfg.ExpectedBrokers,
			Strict: cfg.Settings.Strict, Handover: cfg.Settings.GroupHandover, Specs: cfg.Topics,
			Rebalance: &checks.Rebalance{GroupID: cfg.GroupID, Delay: cfg.Worker["scheduled.rebalance.max.delay.ms"], Protocol: cfg.Worker["connect.protocol"]}}}
	if !l.brokers() {
		return l.s
	}
	l.topics()
	l.eos() // exactly-once readiness (parity.go)
	if !l.coordinator() {
		return l.s
	}
	gg := l.group()
	l.rejoins()
	l.generation()
	if gg == nil {
		return l.s
	}
	l.recheck(gg)
	g := l.s.Group
	l.s.Peers = checkPeers(ctx, g, proto.LeaderFirstURLs(g.Decoded), opts.PeerTimeout)
	l.s.Plugins = collectPlugins(ctx, cfg, g, log, opts.SkipLocalScan)
	return l.s
}

// looks is one Collect: its inputs and the snapshot its looks fill in.
// Each look that the next ones depend on says whether they can be taken;
// when not, it records in s.Skipped which were skipped and why.
type looks struct {
	ctx     context.Context
	cfg     *settings.Config
	clients *kafka.Clients
	log     *slog.Logger
	opts    Options
	s       *Snapshot
}

// brokers probes the bootstrap servers, then connects the clients; every
// later look needs both.
func (l *looks) brokers() bool {
	s, cfg := l.s, l.cfg
	bg := &gate.BrokerGate{Config: l.clients.MemberConfig, Bootstrap: cfg.BootstrapServers, Expected: cfg.ExpectedBrokers,
		Topics: cfg.TopicNames(), Log: l.log, Clock: l.opts.Clock, AskQuorum: true}
	s.Brokers = bg.Probe(l.ctx)
	if s.Brokers.Brokers == nil {
		s.Skipped = append(s.Skipped, "topics, coordinator, group and peers: no bootstrap server answered")
		return false
	}
	if err := l.clients.Connect(cfg.BootstrapServers, cfg.TopicNames()); err != nil {
		s.ConnectErr = err.Error()
		s.Skipped = append(s.Skipped, "topics, coordinator, group and peers: "+err.Error())
		return false
	}
	return true
}

// topics inspects the internal topics without creating any; a failed
// look is recorded only when it gave no report, since a report already
// says what is wrong.
func (l *looks) topics() {
	tg := &gate.TopicGate{Admin: l.clients.Admin, Config: l.clients.AdminConfig, Specs: l.cfg.Topics, Log: l.log, Clock: l.opts.Clock, Create: false}
	rep, err := tg.Ensure(l.ctx)
	l.s.Topics = rep
	if err != nil && rep == nil {
		l.s.TopicsErr = err.Error()
	}
}

// coordinator finds the group's coordinator, but only once
// __consumer_offsets exists: FindCoordinator would create it. The group
// look needs a coordinator.
func (l *looks) coordinator() bool {
	s := l.s
	missing, err := consumerOffsetsMissing(l.ctx, l.clients.MemberConfig, s.Brokers)
	if err != nil {
		s.CoordinatorErr = err.Error()
		s.Skipped = append(s.Skipped, "coordinator, group and peers: "+err.Error())
		return false
	}
	if missing {
		s.ConsumerOffsetsMissing = true
		s.Skipped = append(s.Skipped, "coordinator, group and peers: __consumer_offsets does not exist yet (looking up a coordinator would create it)")
		return false
	}
	cg := &gate.CoordinatorGate{Client: l.clients.Member, Admin: l.clients.Admin, GroupID: l.cfg.GroupID, Log: l.log, Clock: l.opts.Clock,
		Strict: false, Wait: false, ReadReplicationFactor: true}
	s.Coordinator, err = cg.Check(l.ctx)
	if err != nil {
		s.CoordinatorErr = err.Error()
		if s.Coordinator == nil || s.Coordinator.CoordinatorID < 0 {
			s.Skipped = append(s.Skipped, "group and peers: no coordinator")
			return false
		}
	}
	return true
}

// group describes the worker group and returns the gate that did, which
// the recheck reads the config topic with; nil when the group could not
// be described. A gate's refusal comes with a report that says it, so
// only other errors are recorded.
func (l *looks) group() *gate.GroupGate {
	s := l.s
	gg := gate.NewGroupGate(l.cfg, l.clients, l.log, l.opts.Clock)
	gg.StableWait = l.opts.StableWait
	var err error
	s.Group, err = gg.Check(l.ctx)
	var ge *gate.GateError
	if err != nil && (s.Group == nil || !errors.As(err, &ge)) {
		s.GroupErr = err.Error()
	}
	if s.Group == nil {
		s.Skipped = append(s.Skipped, "peers: the group could not be described")
		return nil
	}
	return gg
}

// rejoins adds the group look to the watcher's rejoin record and gives the
// rebalance-delay rules its longest recent rejoin.
func (l *looks) rejoins() {
	t := l.opts.Rejoins
	if t == nil {
		return
	}
	t.Observe(l.opts.Clock.Now(), l.s.Group)
	if r, ok := t.Longest(); ok {
		l.s.Rebalance.Rejoin, l.s.Rebalance.RejoinAtMost, l.s.Rebalance.RejoinWorker = r.AtLeast, r.AtMost, r.Worker
	}
}

// generation reads the group's generation from its __consumer_offsets
// partition for the watcher's exact rebalance count, after the group look
// so that the count covers the rebalances its window saw.
func (l *looks) generation() {
	t, c := l.opts.Generations, l.s.Coordinator
	if t == nil || c == nil || c.Partitions == 0 {
		return
	}
	window := 0
	if g := l.s.Group; g != nil && g.Window != nil {
		window = g.Window.Rebalances
	}
	l.s.Generation = t.Observe(l.ctx, saramaOffsetsLog{client: l.clients.Member, partition: c.Partition}, l.cfg.GroupID, c.Partition, window)
	switch gl := l.s.Generation; {
	case gl.Changed && gl.Err != "":
		l.log.Warn("cannot read the group's __consumer_offsets partition; connect_init_group_rebalances_total counts the looks' windows (a lower bound)",
			"partition", c.Partition, "error", gl.Err)
	case gl.Changed:
		l.log.Info("reading the group's generation from __consumer_offsets; connect_init_group_rebalances_total is exact",
			"partition", c.Partition, "generation", gl.Generation)
	}
}

// recheck reads the config topic's offsets a second time when the first
// read found an open transaction, so Diagnose can tell a hanging
// transaction from one that was merely in flight.
func (l *looks) recheck(gg *gate.GroupGate) {
	g, opts := l.s.Group, l.opts
	if g.ConfigEndOffset < 0 || g.ConfigStableOffset < 0 || g.ConfigStableOffset >= g.ConfigEndOffset || opts.TransactionRecheck <= 0 {
		return
	}
	l.log.Info("the config topic has an open transaction; reading its offsets again", "topic", g.ConfigTopic,
		"end_offset", g.ConfigEndOffset, "last_stable_offset", g.ConfigStableOffset, "after", opts.TransactionRecheck.String())
	select {
	case <-l.ctx.Done():
	case <-opts.Clock.After(opts.TransactionRecheck):
		rc := &OffsetsRecheck{After: opts.TransactionRecheck}
		var err error
		rc.EndOffset, rc.StableOffset, err = gg.ConfigEndOffsets(l.ctx)
		if err != nil {
			rc.Error = err.Error()
		}
		l.s.Recheck = rc
	}
}

// PluginsLook is what the plugin parity look read: the classes the
// cluster's connectors name, each member's GET /connector-plugins, and,
// when doctor runs where this worker's plugin.path is (its container),
// this worker's own scan.
type PluginsLook struct {
	// Mode is CONNECT_INIT_PLUGIN_CHECK, which decides whether a member's
	// gap is an error (fail) or a warning, as run would judge it.
	Mode plugins.CheckMode `json:"check_mode"`
	// Uses are the plugin classes the connectors name (no other value of
	// their configurations, which may hold secrets).
	Uses []plugins.Use `json:"uses"`
	// ConfigError says why our config topic's connectors are not known.
	ConfigError string `json:"config_error,omitempty"`
	// DefinitionsError says why CONNECT_INIT_CONNECTORS_DIR was left out.
	DefinitionsError string `json:"definitions_error,omitempty"`
	// Members are the members that answered, leader first (foreign
	// members are not asked); Unanswered those that did not.
	Members    []plugins.Peer         `json:"members"`
	Unanswered []gate.PluginPeerError `json:"unanswered,omitempty"`
	// Local is this worker's scan (every class read, as Connect's
	// reflective scan does); nil with LocalSkipped saying why.
	Local        *plugins.Inventory `json:"local,omitempty"`
	LocalSkipped string             `json:"local_skipped,omitempty"`
}

// collectPlugins takes the plugin parity look: the connectors of our
// config topic as the group gate read it (never read again here) and of
// CONNECT_INIT_CONNECTORS_DIR, the members' REST plugin lists, and this
// worker's scan when a plugin.path entry exists on this host.
func collectPlugins(ctx context.Context, cfg *settings.Config, g *gate.GroupReport, log *slog.Logger, skipLocal bool) *PluginsLook {
	mode, _ := plugins.ParseCheckMode(cfg.Settings.PluginCheck) // validated by the settings gate
	pl := &PluginsLook{Mode: mode, Members: []plugins.Peer{}}
	if g.Config == nil && len(g.Members) > 0 {
		pl.ConfigError = "our config topic was not read"
		if g.Identity != nil && g.Identity.ConfigError != "" {
			pl.ConfigError = g.Identity.ConfigError
		}
	}
	var defs map[string]map[string]string
	if dir := strings.TrimSpace(cfg.Settings.ConnectorsDir); dir != "" {
		conns, _, err := apply.Load(dir)
		if err != nil {
			pl.DefinitionsError = err.Error()
		}
		defs = map[string]map[string]string{}
		for _, c := range conns {
			defs[c.Name] = c.Config
		}
	}
	pl.Uses = plugins.UsedClasses(gate.PluginConfigs(g.Config, defs))
	foreign := map[string]bool{}
	for _, f := range g.Foreign {
		foreign[f.URL] = true
	}
	var urls []string
	for _, u := range proto.LeaderFirstURLs(g.Decoded) {
		if !foreign[u] {
			urls = append(urls, u)
		}
	}
	peers, failed := gate.PluginPeers(ctx, &restclient.Client{TLS: cfg.RESTClientTLS, Auth: cfg.Settings.RESTAuth()}, urls)
	pl.Members, pl.Unanswered = append(pl.Members, peers...), failed
	if skipLocal {
		pl.LocalSkipped = "the watcher does not scan this host's plugins"
		return pl
	}
	pl.Local, pl.LocalSkipped = scanHere(ctx, cfg, log)
	return pl
}

// scanHere scans this worker's plugins when doctor runs in its container,
// that is when one of its plugin.path entries exists here; it reads every
// class (FullScan), so that every plugin without a manifest is listed.
func scanHere(ctx context.Context, cfg *settings.Config, log *slog.Logger) (*plugins.Inventory, string) {
	opts, err := gate.PluginScanOptions(cfg, nil, "")
	if err != nil {
		return nil, err.Error()
	}
	if opts.PluginPath == "" {
		return nil, "plugin.path is not set"
	}
	here := false
	for _, e := range strings.Split(opts.PluginPath, ",") {
		if _, err := os.Stat(strings.TrimSpace(e)); err == nil {
			here = true
		}
	}
	if !here {
		return nil, "no plugin.path entry (" + opts.PluginPath + ") exists on this host: doctor does not run in the worker's container"
	}
	opts.FullScan = true
	inv, err := plugins.Scan(ctx, opts)
	if err != nil {
		return nil, err.Error()
	}
	log.Info("scanned this worker's plugins", "plugins", len(inv.Plugins), "jars", inv.Stats.Files, "took", inv.Stats.Duration.Round(time.Millisecond).String())
	return inv, ""
}

// consumerOffsetsMissing asks the reachable brokers whether
// __consumer_offsets exists, with automatic topic creation off. Right
// after a FindCoordinator made the cluster create it, a broker whose
// metadata lags still answers UNKNOWN_TOPIC_OR_PARTITION: the topic is
// missing only when every broker that answers says so; one that knows it
// (or answers "not yet" otherwise, kafka.NotYet: a leader being elected)
// means it exists. A final answer (TOPIC_AUTHORIZATION_FAILED) is an error.
func consumerOffsetsMissing(ctx context.Context, cfg *sarama.Config, brokers *gate.BrokerReport) (bool, error) {
	var lastErr error
	unknown := 0
	for _, b := range brokers.Brokers {
		if !b.Up {
			continue
		}
		md, err := kafka.Metadata(ctx, cfg, b.Addr, []string{"__consumer_offsets"})
		if err != nil {
			lastErr = err
			continue
		}
		found := false
		for _, t := range md.Topics {
			if t.Name != "__consumer_offsets" {
				continue
			}
			found = true
			switch {
			case errors.Is(t.Err, sarama.ErrNoError):
				return false, nil
			case errors.Is(t.Err, sarama.ErrUnknownTopicOrPartition):
				unknown++
			case kafka.NotYet(t.Err):
				return false, nil
			default:
				return false, fmt.Errorf("describe __consumer_offsets: %w", t.Err)
			}
		}
		if !found {
			lastErr = errors.New("the broker's answer does not mention it")
		}
	}
	if unknown > 0 {
		return true, nil
	}
	if lastErr == nil {
		lastErr = errors.New("no broker is reachable")
	}
	return false, fmt.Errorf("describe __consumer_offsets: %s", kafka.ExplainConnError(lastErr))
}

// Run is doctor end to end: Collect, Diagnose, and the document.
func Run(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, opts Options, version string) *Document {
	s := Collect(ctx, cfg, clients, log, opts)
	clock := opts.withDefaults().Clock
	return NewDocument(s, Diagnose(s), version, clock.Now())
}
