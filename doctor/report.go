package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate"
)

// SchemaVersion is the version of the JSON document. It changes only when
// a field is removed or changes meaning; new fields may appear without it.
const SchemaVersion = 1

// Document is doctor's output: the cluster summary and the findings. Its
// JSON form is the stable document described in the package documentation.
type Document struct {
	SchemaVersion    int             `json:"schema_version"`
	Version          string          `json:"connect_init_version"`
	GeneratedAt      time.Time       `json:"generated_at"`
	GroupID          string          `json:"group_id"`
	BootstrapServers []string        `json:"bootstrap_servers"`
	Cluster          Cluster         `json:"cluster"`
	Findings         []checks.Result `json:"findings"`
	Counts           Counts          `json:"counts"`
	// ExitCode is what doctor exits with: 1 when any finding is an error.
	ExitCode int `json:"exit_code"`
	// Changes is, under --watch, what moved since the look before.
	Changes *Change `json:"changes,omitempty"`
}

// Counts are the number of findings per severity.
type Counts struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// Cluster is the summary of what doctor saw. A part is null when its look
// was not taken; Skipped says why.
type Cluster struct {
	Brokers     *Brokers          `json:"brokers"`
	Topics      []Topic           `json:"topics"`
	Coordinator *Coordinator      `json:"coordinator"`
	Group       *gate.GroupReport `json:"group"`
	Recheck     *OffsetsRecheck   `json:"config_offsets_recheck,omitempty"`
	Peers       []PeerCheck       `json:"peers"`
	// Plugins is the plugin parity look; null when it was not taken.
	Plugins *PluginsLook `json:"plugins"`
	Skipped []string     `json:"skipped"`
}

// Brokers summarises the broker probe.
type Brokers struct {
	Expected     int   `json:"expected"`
	Registered   int   `json:"registered"`
	Reachable    int   `json:"reachable"`
	ControllerID int32 `json:"controller_id"`
	// Mode is kraft or zookeeper (empty when the brokers cannot say).
	Mode string `json:"mode,omitempty"`
	// Quorum is the KRaft controller quorum (DescribeQuorum); null on
	// ZooKeeper mode or when it could not be asked.
	Quorum          *gate.QuorumReport `json:"quorum,omitempty"`
	List            []Broker           `json:"list"`
	BootstrapErrors map[string]string  `json:"bootstrap_errors,omitempty"`
	// Absent are the brokers that are not live (fenced, unregistered, or
	// only a bootstrap address), by id and last known address.
	Absent []gate.AbsentBroker `json:"absent"`
}

// Broker is one registered broker as seen from here.
type Broker struct {
	ID        int32  `json:"id"`
	Address   string `json:"advertised_address"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"`
}

// Topic is one internal topic as configured and as found.
type Topic struct {
	Role                        string  `json:"role"`
	Name                        string  `json:"name"`
	Exists                      bool    `json:"exists"`
	Partitions                  int     `json:"partitions"`
	ReplicationFactor           int     `json:"replication_factor"`
	ConfiguredReplicationFactor int     `json:"configured_replication_factor"`
	CleanupPolicy               string  `json:"cleanup_policy"`
	MinInsyncReplicas           string  `json:"min_insync_replicas"`
	UnderReplicated             []int32 `json:"under_replicated_partitions"`
	Offline                     []int32 `json:"offline_partitions"`
}

// Coordinator is the worker group's coordinator and its partition.
type Coordinator struct {
	ID                            int32   `json:"id"`
	Address                       string  `json:"address"`
	Partition                     int32   `json:"partition"`
	Partitions                    int     `json:"partitions"`
	Leader                        int32   `json:"leader"`
	Replicas                      []int32 `json:"replicas"`
	ISR                           []int32 `json:"isr"`
	OffsetsTopicReplicationFactor string  `json:"offsets_topic_replication_factor"`
	// FindError is why no coordinator was found (ID is then -1); the
	// partition, its replicas and the replicas down are still filled.
	FindError    string              `json:"find_error,omitempty"`
	DownReplicas []gate.AbsentBroker `json:"down_replicas"`
}

// NewDocument builds the document from a snapshot and its findings.
func NewDocument(s *Snapshot, findings []checks.Result, version string, now time.Time) *Document {
	doc := &Document{SchemaVersion: SchemaVersion, Version: version, GeneratedAt: now.UTC(), GroupID: s.GroupID,
		BootstrapServers: s.BootstrapServers, Findings: findings}
	if doc.BootstrapServers == nil {
		doc.BootstrapServers = []string{}
	}
	if doc.Findings == nil {
		doc.Findings = []checks.Result{}
	}
	doc.Counts = countFindings(findings)
	if doc.Counts.Error > 0 {
		doc.ExitCode = exitcode.Failed
	}
	c := &doc.Cluster
	c.Topics, c.Peers, c.Skipped = []Topic{}, s.Peers, s.Skipped
	if c.Peers == nil {
		c.Peers = []PeerCheck{}
	}
	if c.Skipped == nil {
		c.Skipped = []string{}
	}
	if b := s.Brokers; b != nil {
		c.Brokers = brokersSummary(b)
	}
	if s.Topics != nil {
		c.Topics = topicsSummary(s)
	}
	if co := s.Coordinator; co != nil && (co.CoordinatorID >= 0 || co.Partitions > 0) {
		c.Coordinator = coordinatorSummary(co)
	}
	c.Group = s.Group
	c.Recheck = s.Recheck
	c.Plugins = s.Plugins
	return doc
}

// countFindings counts the findings per severity; anything neither an
// error nor a warning counts as info.
func countFindings(findings []checks.Result) Counts {
	var n Counts
	for _, f := range findings {
		switch f.Severity {
		case checks.Error:
			n.Error++
		case checks.Warning:
			n.Warning++
		default:
			n.Info++
		}
	}
	return n
}

// brokersSummary is the document's form of the broker probe, with empty
// lists rather than nulls.
func brokersSummary(b *gate.BrokerReport) *Brokers {
	out := &Brokers{Expected: b.Expected, Registered: len(b.Brokers), Reachable: b.UpCount(), ControllerID: b.ControllerID, Mode: string(b.Mode), Quorum: b.Quorum,
		List: []Broker{}, BootstrapErrors: b.BootstrapErrs, Absent: b.Absent}
	if out.Absent == nil {
		out.Absent = []gate.AbsentBroker{}
	}
	for _, br := range b.Brokers {
		out.List = append(out.List, Broker{ID: br.ID, Address: br.Addr, Reachable: br.Up, Error: br.Err})
	}
	return out
}

// topicsSummary is each internal topic as found, with the replication
// factor the worker configures for it.
func topicsSummary(s *Snapshot) []Topic {
	topics := []Topic{}
	conf := map[string]int{}
	for _, sp := range s.Specs {
		conf[sp.Name] = int(sp.ReplicationFactor)
	}
	for _, t := range s.Topics.Topics {
		topics = append(topics, Topic{Role: t.Role, Name: t.Name, Exists: t.Outcome != gate.TopicMissing,
			Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, ConfiguredReplicationFactor: conf[t.Name],
			CleanupPolicy: t.CleanupPolicy, MinInsyncReplicas: t.MinInsyncReplicas,
			UnderReplicated: nonNilInt32(t.UnderReplicated), Offline: nonNilInt32(t.Offline)})
	}
	return topics
}

// coordinatorSummary is the document's form of the coordinator look, with
// empty lists rather than nulls.
func coordinatorSummary(co *gate.CoordinatorReport) *Coordinator {
	out := &Coordinator{ID: co.CoordinatorID, Address: co.CoordinatorAddr, Partition: co.Partition, Partitions: co.Partitions,
		Leader: co.Leader, Replicas: nonNilInt32(co.Replicas), ISR: nonNilInt32(co.ISR), OffsetsTopicReplicationFactor: co.OffsetsTopicReplicationFactor,
		FindError: co.FindError, DownReplicas: co.DownReplicas}
	if out.DownReplicas == nil {
		out.DownReplicas = []gate.AbsentBroker{}
	}
	return out
}

func nonNilInt32(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// WriteJSON writes the document as indented JSON followed by a newline.
func (d *Document) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("encode doctor document: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the human report: the cluster summary on top, one
// section per look, then the findings grouped by severity.
func (d *Document) WriteText(w io.Writer) error {
	p := &printer{w: w}
	p.f("connect-init doctor %s — worker group %q, bootstrap %s\n\n", d.Version, d.GroupID, strings.Join(d.BootstrapServers, ","))
	// A group that does not settle is said before anything else: every
	// section below is one moment of it.
	for _, f := range d.Findings {
		if f.ID == checks.IDGroupRebalanceStorm {
			p.f("[%s] %s\n  evidence: %s\n  fix:      %s\n\n", f.ID, f.Summary, f.Evidence, f.Fix)
		}
	}
	c := d.Cluster
	for _, section := range []func(*printer, Cluster){writeBrokers, writeTopics, writeCoordinator, writeGroup, writePeers, writePlugins, writeSkipped} {
		section(p, c)
	}
	d.writeFindings(p)
	return p.err
}

func writeBrokers(p *printer, c Cluster) {
	b := c.Brokers
	if b == nil {
		return
	}
	ctrl := "unknown"
	if b.ControllerID >= 0 {
		ctrl = fmt.Sprint(b.ControllerID)
	}
	mode := map[string]string{"kraft": ", KRaft", "zookeeper": ", ZooKeeper mode"}[b.Mode]
	p.f("Brokers      %d/%d reachable, %d expected, controller %s%s\n", b.Reachable, b.Registered, b.Expected, ctrl, mode)
	if b.Quorum != nil {
		p.f("Quorum       %s\n", b.Quorum.Summary())
	}
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, br := range b.List {
		st := "ok"
		if !br.Reachable {
			st = "UNREACHABLE: " + br.Error
		}
		fmt.Fprintf(tw, "  broker %d\t%s\t%s\n", br.ID, br.Address, st)
	}
	for _, a := range b.Absent {
		if a.ID >= 0 {
			fmt.Fprintf(tw, "  broker %d\t%s\tNOT LIVE: %s\n", a.ID, a.Addr, a.State)
		} else {
			fmt.Fprintf(tw, "  bootstrap\t%s\tNOT LIVE: %s\n", a.Addr, a.State)
		}
	}
	for _, a := range sortedKeys(b.BootstrapErrors) {
		fmt.Fprintf(tw, "  bootstrap\t%s\t%s\n", a, b.BootstrapErrors[a])
	}
	tw.Flush()
}

func writeTopics(p *printer, c Cluster) {
	if len(c.Topics) == 0 {
		return
	}
	p.f("Topics\n")
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, t := range c.Topics {
		if !t.Exists {
			fmt.Fprintf(tw, "  %s\t%s\tmissing\n", t.Role, t.Name)
			continue
		}
		extra := ""
		if len(t.UnderReplicated) > 0 {
			extra += fmt.Sprintf(", under-replicated %v", t.UnderReplicated)
		}
		if len(t.Offline) > 0 {
			extra += fmt.Sprintf(", offline %v", t.Offline)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d partition(s), replication factor %d, cleanup.policy=%s%s\n",
			t.Role, t.Name, t.Partitions, t.ReplicationFactor, orUnknown(t.CleanupPolicy), extra)
	}
	tw.Flush()
}

func writeCoordinator(p *printer, c Cluster) {
	co := c.Coordinator
	switch {
	case co == nil:
	case co.ID < 0:
		var down []string
		for _, d := range co.DownReplicas {
			down = append(down, d.String())
		}
		p.f("Coordinator  none found; __consumer_offsets partition %d of %d, leader %d, replicas %v, ISR %v, down: %s\n",
			co.Partition, co.Partitions, co.Leader, co.Replicas, co.ISR, noneIfEmpty(strings.Join(down, "; ")))
	default:
		p.f("Coordinator  broker %d (%s), __consumer_offsets partition %d of %d, leader %d, replicas %v, ISR %v\n",
			co.ID, co.Address, co.Partition, co.Partitions, co.Leader, co.Replicas, co.ISR)
	}
}

func writeGroup(p *printer, c Cluster) {
	g := c.Group
	if g == nil {
		return
	}
	proto := g.ProtocolType
	if g.Protocol != "" {
		proto += "/" + g.Protocol
	}
	leader := "unknown"
	if g.LeaderID != "" {
		leader = fmt.Sprintf("%s (%s)", g.LeaderID, orUnknown(g.LeaderURL))
	}
	asg := "unknown"
	if g.AssignmentOffset != nil {
		asg = fmt.Sprint(*g.AssignmentOffset)
	}
	p.f("Group        %s, protocol %s, %d member(s), leader %s, assignment offset %s\n",
		orUnknown(g.State), orUnknown(proto), len(g.Members), leader, asg)
	p.f("Config topic %s: end offset %s, last stable offset %s\n", g.ConfigTopic, offsetString(g.ConfigEndOffset), offsetString(g.ConfigStableOffset))
	if w := g.Window; w != nil {
		calm := "calm"
		if !w.Calm {
			calm = "not calm"
		}
		p.f("Watched      %d look(s) over %s: %d rebalance(s), %s\n", w.Samples, w.Span.Round(time.Millisecond), w.Rebalances, calm)
	}
	verdicts := map[string]gate.MemberVerdict{}
	for _, v := range g.Verdicts {
		verdicts[v.MemberID] = v
	}
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, m := range g.Members {
		off := "unknown"
		if m.ConfigOffset != nil {
			off = fmt.Sprint(*m.ConfigOffset)
		}
		asg := "none"
		if m.Assignment != nil {
			asg = fmt.Sprintf("offset %d, %d connector(s), %d task(s)", m.Assignment.ConfigOffset, len(m.Assignment.Connectors), len(m.Assignment.Tasks))
		}
		mark := ""
		if m.Leader {
			mark = " [leader]"
		}
		verdict := ""
		if v, ok := verdicts[m.MemberID]; ok {
			verdict = "\t" + v.Verdict
			if v.Rule != "" {
				verdict += " (" + v.Rule + ")"
			}
		}
		fmt.Fprintf(tw, "  %s%s\t%s\thost %s\tconfig offset %s\tassignment %s%s\n", m.MemberID, mark, orUnknown(m.URL), orUnknown(m.ClientHost), off, asg, verdict)
	}
	tw.Flush()
	printRegistry(p, g.Identity)
	printParity(p, g) // the settings side by side (parity.go)
}

func writePeers(p *printer, c Cluster) {
	if len(c.Peers) == 0 {
		return
	}
	p.f("Peers (from this host)\n")
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, pc := range c.Peers {
		st := "reachable"
		if !pc.Reachable {
			st = pc.Error
		}
		mark := ""
		if pc.Leader {
			mark = " [leader]"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\n", pc.URL, mark, st)
	}
	tw.Flush()
}

// writePlugins lists what each member reports and what doctor found here.
func writePlugins(p *printer, c Cluster) {
	pl := c.Plugins
	if pl == nil {
		return
	}
	p.f("Plugins      %d plugin class(es) named by the connectors; CONNECT_INIT_PLUGIN_CHECK=%s\n", len(pl.Uses), pl.Mode)
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, m := range pl.Members {
		fmt.Fprintf(tw, "  %s\t%d plugins listed\n", m.Member, len(m.Plugins))
	}
	for _, u := range pl.Unanswered {
		fmt.Fprintf(tw, "  %s\tdid not answer: %s\n", u.URL, u.Error)
	}
	if l := pl.Local; l != nil {
		scan := 0
		for _, pg := range l.Plugins {
			if pg.Found == plugins.FoundScan {
				scan++
			}
		}
		fmt.Fprintf(tw, "  this worker\t%d plugins, %d without manifests, %d jars read in %s\n", len(l.Plugins), scan, l.Stats.Files, l.Stats.Duration.Round(time.Millisecond))
	} else if pl.LocalSkipped != "" {
		fmt.Fprintf(tw, "  this worker\tnot scanned: %s\n", pl.LocalSkipped)
	}
	tw.Flush()
}

func writeSkipped(p *printer, c Cluster) {
	for _, s := range c.Skipped {
		p.f("Skipped      %s\n", s)
	}
}

// writeFindings lists the findings by severity, each with its evidence
// and fix.
func (d *Document) writeFindings(p *printer) {
	p.f("\nFindings: %d error(s), %d warning(s), %d info\n", d.Counts.Error, d.Counts.Warning, d.Counts.Info)
	bySev := map[checks.Severity][]checks.Result{}
	for _, f := range d.Findings {
		bySev[f.Severity] = append(bySev[f.Severity], f)
	}
	for _, sev := range []checks.Severity{checks.Error, checks.Warning, checks.Info} {
		fs := bySev[sev]
		if len(fs) == 0 {
			continue
		}
		p.f("\n%s\n", strings.ToUpper(string(sev)))
		for _, f := range fs {
			p.f("  [%s] %s\n", f.ID, f.Summary)
			p.f("      evidence: %s\n", f.Evidence)
			p.f("      fix:      %s\n", f.Fix)
		}
	}
	if len(d.Findings) == 0 {
		p.f("  nothing to report\n")
	}
}

// printer remembers the first write error so WriteText can return it.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.w.Write(b)
	p.err = err
	return n, err
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(p, format, args...) }

// printRegistry prints the cluster registry's view of the group.
func printRegistry(p *printer, ir *gate.IdentityReport) {
	if ir == nil {
		return
	}
	switch {
	case ir.Registry == nil:
		p.f("Registry     unreadable: %s\n", orUnknown(ir.RegistryError))
		return
	case !ir.Registry.Exists:
		p.f("Registry     topic %s does not exist yet (no connect-init has registered on this Kafka cluster %s)\n", ir.Registry.Topic, orUnknown(ir.KafkaClusterID))
		return
	}
	owner := "nobody (unclaimed)"
	if o := ir.Registry.Owner(); o != nil {
		owner = fmt.Sprintf("config topic %s (offset topic %s, status topic %s), claimed %s by %s", o.ConfigTopic, o.OffsetTopic, o.StatusTopic,
			o.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), orUnknown(o.URL))
		if o.HandedOverFrom != "" {
			owner += ", handed over from config topic " + o.HandedOverFrom
		}
	}
	p.f("Registry     topic %s, Kafka cluster %s: group owned by %s\n", ir.Registry.Topic, orUnknown(ir.KafkaClusterID), owner)
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	for _, w := range ir.Registry.Workers {
		fmt.Fprintf(tw, "  %s\thost %s\tconfig topic %s\tfirst seen %s\tlast seen %s\n", w.URL, orUnknown(w.Host), w.ConfigTopic,
			w.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), w.LastSeen.UTC().Format("2006-01-02T15:04:05Z"))
	}
	tw.Flush()
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
