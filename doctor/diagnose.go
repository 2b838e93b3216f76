package doctor

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/settings"
)

// Diagnose derives the findings from a snapshot, errors first, then
// warnings, then infos, each group in the order the checks run (brokers,
// topics, coordinator, group, peers). It does no I/O.
func Diagnose(s *Snapshot) []checks.Result {
	d := &diag{s: s}
	d.brokers()
	d.topics()
	d.coordinator()
	d.group()
	d.peers()
	d.plugins()
	d.parity() // settings parity (parity.go)
	d.rebalance()
	// Errors first; a group that does not settle is said first of all:
	// while it storms, every other look is a moment of a moving target.
	sort.SliceStable(d.out, func(i, j int) bool {
		if si, sj := d.out[i].ID == checks.IDGroupRebalanceStorm, d.out[j].ID == checks.IDGroupRebalanceStorm; si != sj {
			return si
		}
		return d.out[i].Severity.Rank() < d.out[j].Severity.Rank()
	})
	if d.out == nil {
		d.out = []checks.Result{}
	}
	return d.out
}

type diag struct {
	s   *Snapshot
	out []checks.Result
}

func (d *diag) add(id string, sev checks.Severity, subject, summary, evidence, fix string) {
	d.out = append(d.out, checks.Result{ID: id, Severity: sev, Subject: subject, Summary: summary, Evidence: evidence, Fix: fix})
}

func (d *diag) brokers() {
	b := d.s.Brokers
	if b == nil {
		return
	}
	if b.Brokers == nil {
		var parts []string
		for _, a := range sortedKeys(b.BootstrapErrs) {
			parts = append(parts, a+": "+b.BootstrapErrs[a])
		}
		d.add(IDBrokerUnreachable, checks.Error, strings.Join(d.s.BootstrapServers, ","),
			"no bootstrap server answers from here",
			strings.Join(parts, "; "),
			"check CONNECT_BOOTSTRAP_SERVERS and the security settings (CONNECT_SECURITY_PROTOCOL, CONNECT_SASL_*, CONNECT_SSL_*), and that the brokers run")
		return
	}
	for _, br := range b.Brokers {
		if !br.Up {
			d.add(IDBrokerUnreachable, checks.Error, fmt.Sprintf("broker %d", br.ID),
				fmt.Sprintf("broker %d does not answer at its advertised address %s", br.ID, br.Addr),
				fmt.Sprintf("ApiVersions to %s failed: %s", br.Addr, br.Err),
				"every broker must be reachable from the workers at the address it advertises: check the broker's advertised.listeners and the network between here and it, or start it")
		}
	}
	for _, a := range b.Absent {
		if a.ID < 0 {
			continue // only an address: the count finding names it
		}
		d.add(IDBrokerNotLive, checks.Warning, fmt.Sprintf("broker %d", a.ID),
			fmt.Sprintf("broker %d is %s; no gate waits for it", a.ID, a.State),
			fmt.Sprintf("last known address %s; live brokers: [%s]", a.Addr, liveIDs(b)),
			notLiveFix(a))
	}
	if len(b.Brokers) < d.s.ExpectedBrokers {
		missing := ""
		if m := b.MissingText(); m != "" {
			missing = "; missing: " + m
		}
		d.add(IDBrokerCountBelowExpected, checks.Error, "cluster",
			fmt.Sprintf("%d brokers live, %d expected", len(b.Brokers), d.s.ExpectedBrokers),
			fmt.Sprintf("live brokers: [%s]%s; connect-init run waits for %d (from CONNECT_INIT_EXPECTED_BROKERS, the bootstrap list, the internal topics' replication factors or CONNECT_CUB_KAFKA_MIN_BROKERS)",
				liveIDs(b), missing, d.s.ExpectedBrokers),
			gate.MissingFix(b))
	}
	if q := b.Quorum; q != nil && q.Lost {
		d.add(IDControllerQuorumLost, checks.Error, "cluster", "the KRaft controller quorum has no leader",
			q.Error+"; the brokers keep serving their last metadata, so a dead broker still looks registered and its partitions keep their stale leaders",
			"start the KRaft controllers (the nodes with process.roles=controller, or the combined nodes, in controller.quorum.voters / controller.quorum.bootstrap.servers): a majority of the voters must run for the quorum to elect a leader")
	}
	if b.ControllerID < 0 {
		d.add(IDControllerUnknown, checks.Error, "cluster", "the metadata names no controller",
			"MetadataResponse.ControllerID = -1", "check the brokers' logs: the KRaft quorum (or ZooKeeper) may have no leader")
	}
}

// groupHasWorkers reports whether the group has Connect members, which
// tells a fresh cluster (topics not created yet: fine) from a running one.
func (d *diag) groupHasWorkers() bool {
	return d.s.Group != nil && d.s.Group.ProtocolType == proto.ProtocolType && len(d.s.Group.Members) > 0
}

// results adds check results as findings.
func (d *diag) results(rs []checks.Result) { d.out = append(d.out, rs...) }

// rebalance renders the rebalance-delay rules (checks/rebalance.go): a
// worker setting, judged whatever the cluster's state.
func (d *diag) rebalance() {
	if d.s.Rebalance != nil {
		d.results(checks.Run(checks.RebalanceChecks(), *d.s.Rebalance))
	}
}

// topics renders the topic checks (checks.TopicChecks(), the topics gate's
// own rules) over what the topics look saw.
func (d *diag) topics() {
	if d.s.TopicsErr != "" {
		d.add(IDCheckFailed, checks.Warning, "internal topics", "could not describe the internal topics", d.s.TopicsErr,
			"check that this principal may DESCRIBE the topics and DESCRIBE_CONFIGS on them")
	}
	t := d.s.Topics
	if t == nil {
		return
	}
	specs := map[string]settings.TopicSpec{}
	for _, sp := range d.s.Specs {
		specs[sp.Name] = sp
	}
	for _, r := range t.Topics {
		subject := r.Subject(specs[r.Name])
		subject.WorkersRunning = d.groupHasWorkers()
		d.results(checks.Run(checks.TopicChecks(), subject))
	}
}

// liveIDs are the live brokers' ids, space separated.
func liveIDs(b *gate.BrokerReport) string {
	var ids []string
	for _, br := range b.Brokers {
		ids = append(ids, strconv.Itoa(int(br.ID)))
	}
	return strings.Join(ids, " ")
}

// notLiveFix is what to do about one broker that is not live.
func notLiveFix(a gate.AbsentBroker) string {
	if a.State == gate.StateFenced {
		return fmt.Sprintf("restart broker %d; if it is gone for good, unregister it: kafka-cluster unregister --bootstrap-server ... --id %d", a.ID, a.ID)
	}
	return fmt.Sprintf("start broker %d again if it should be part of the cluster; otherwise nothing to do", a.ID)
}

// coordinator renders the coordinator checks (checks.CoordinatorChecks(),
// the coordinator gate's own rules) with CONNECT_INIT_STRICT as run has it.
func (d *diag) coordinator() {
	if d.s.ConsumerOffsetsMissing {
		d.results(checks.Run(checks.CoordinatorChecks(), checks.Coordinator{GroupID: d.s.GroupID, ConsumerOffsetsMissing: true}))
		return
	}
	c := d.s.Coordinator
	if c == nil {
		return
	}
	d.results(checks.Run(checks.CoordinatorChecks(), c.Subject(d.s.Strict)))
	if c.CoordinatorID >= 0 && d.s.CoordinatorErr != "" {
		d.add(IDCheckFailed, checks.Warning, "__consumer_offsets", "could not describe the group's coordinator partition", d.s.CoordinatorErr,
			"check that this principal may DESCRIBE __consumer_offsets")
	}
}

func (d *diag) group() {
	g := d.s.Group
	if d.s.GroupErr != "" {
		d.add(IDCheckFailed, checks.Warning, d.s.GroupID, "could not describe the worker group", d.s.GroupErr,
			"check that this principal may DESCRIBE the group, and the coordinator broker's log")
	}
	if g == nil {
		return
	}
	// The group rules are the gate's own (gate.GroupResults).
	d.results(gate.GroupResults(g, d.s.Handover, d.s.Strict))
	fixForeign := "give every Connect cluster its own CONNECT_GROUP_ID (the workers of one cluster share group.id and the config, offset and status topics; two clusters share none of them); or, if it is a stale worker of this cluster, find it by its client host and advertised URL and stop it"
	foreign := map[string]bool{}
	for _, f := range g.Foreign {
		foreign[f.MemberID] = true
	}
	for _, m := range g.Members {
		if m.Assignment != nil && m.Assignment.Error == proto.AssignmentConfigMismatch {
			d.add(IDAssignmentConfigMismatch, checks.Error, m.MemberID,
				fmt.Sprintf("the leader %q handed out CONFIG_MISMATCH: it cannot read its config topic up to the highest offset a member reported", m.Assignment.LeaderID),
				fmt.Sprintf("member %q got assignment error 1 from leader %q (%s) at config offset %d", m.MemberID, m.Assignment.LeaderID, orUnknown(m.Assignment.LeaderURL), m.Assignment.ConfigOffset),
				"some member reads a different (longer) config topic than the leader: "+fixForeign)
		}
		if foreign[m.MemberID] || m.ConfigOffset == nil || g.AssignmentOffset == nil || *m.ConfigOffset >= *g.AssignmentOffset {
			continue
		}
		assigned := *g.AssignmentOffset
		d.add(IDMemberConfigOffsetBehind, checks.Warning, m.MemberID,
			fmt.Sprintf("group member %q reported config offset %d, behind the assignment's %d", m.MemberID, *m.ConfigOffset, assigned),
			fmt.Sprintf("member %q (%s, client host %s) joined having read its config topic to offset %d; leader %q (%s) assigned at offset %d; our config topic %q ends at %s. A member that catches up is fine; one whose config topic never reaches the assignment offset logs \"Current config state offset %d does not match group assignment %d. Forcing rebalance.\" forever",
				m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost), *m.ConfigOffset, g.LeaderID, orUnknown(g.LeaderURL), assigned,
				g.ConfigTopic, offsetString(g.ConfigEndOffset), *m.ConfigOffset, assigned),
			"if that worker logs \"Forcing rebalance\" repeatedly, it and the leader read different config topics under one group.id: "+fixForeign)
	}
	d.duplicateURLs(g)
	d.openTransaction(g)
	if g.ConfigOffsetsError != "" && d.topicExists(g.ConfigTopic) {
		d.add(IDCheckFailed, checks.Warning, g.ConfigTopic, "could not read the config topic's end offsets; members' offsets were not checked against it",
			g.ConfigOffsetsError, "check that this principal may DESCRIBE the config topic and that its partition has a leader")
	}
}

func (d *diag) topicExists(name string) bool {
	if d.s.Topics == nil {
		return true
	}
	for _, t := range d.s.Topics.Topics {
		if t.Name == name {
			return t.Outcome != gate.TopicMissing
		}
	}
	return true
}

func (d *diag) duplicateURLs(g *gate.GroupReport) {
	byURL := map[string][]gate.GroupMember{}
	var order []string
	for _, m := range g.Members {
		if m.URL == "" {
			continue
		}
		if _, seen := byURL[m.URL]; !seen {
			order = append(order, m.URL)
		}
		byURL[m.URL] = append(byURL[m.URL], m)
	}
	for _, u := range order {
		ms := byURL[u]
		if len(ms) < 2 {
			continue
		}
		var who []string
		for _, m := range ms {
			who = append(who, fmt.Sprintf("%q (client host %s)", m.MemberID, orUnknown(m.ClientHost)))
		}
		d.add(IDDuplicateAdvertisedURL, checks.Error, u,
			fmt.Sprintf("%d group members advertise the same REST URL %s", len(ms), u),
			"members "+strings.Join(who, ", ")+" all advertise "+u+": requests forwarded to one of them reach whichever answers that address",
			"give each worker its own CONNECT_REST_ADVERTISED_HOST_NAME (its container's host name, e.g. HOSTNAME or {{.Task.Name}} in Swarm) or CONNECT_REST_ADVERTISED_LISTENER/PORT")
	}
}

func (d *diag) openTransaction(g *gate.GroupReport) {
	if g.ConfigEndOffset < 0 || g.ConfigStableOffset < 0 || g.ConfigStableOffset >= g.ConfigEndOffset {
		return
	}
	first := fmt.Sprintf("config topic %q: end offset %d (read_uncommitted) but last stable offset %d (read_committed)", g.ConfigTopic, g.ConfigEndOffset, g.ConfigStableOffset)
	fix := "find the hanging transaction with kafka-transactions --bootstrap-server ... find-hanging --broker-id <leader of " + g.ConfigTopic + "-0> and abort it (kafka-transactions abort); look for a crashed leader worker with exactly.once.source.support=enabled"
	rc := d.s.Recheck
	switch {
	case rc == nil:
		d.add(IDConfigTopicOpenTxn, checks.Warning, g.ConfigTopic, "the config topic has an open transaction", first+"; not read again, so a short-lived transaction cannot be ruled out", fix)
	case rc.Error != "":
		d.add(IDConfigTopicOpenTxn, checks.Warning, g.ConfigTopic, "the config topic has an open transaction", first+"; reading again failed: "+rc.Error, fix)
	case rc.StableOffset <= g.ConfigStableOffset && rc.StableOffset < rc.EndOffset:
		d.add(IDConfigTopicOpenTxn, checks.Error, g.ConfigTopic,
			"the config topic has a transaction open for longer than doctor watched: workers that read committed cannot get past it",
			fmt.Sprintf("%s; %s later still end offset %d, last stable offset %d", first, rc.After, rc.EndOffset, rc.StableOffset), fix)
	}
}

func (d *diag) peers() {
	for _, p := range d.s.Peers {
		who := "advertised by " + strings.Join(quoteAll(p.Members), ", ")
		if len(p.Members) == 0 {
			who = "the leader's URL from the assignment"
		}
		if p.Leader {
			who += " (the group leader: followers forward REST requests there)"
		}
		switch {
		case !p.Resolved:
			d.add(IDAdvertisedURLUnresolvable, checks.Warning, p.URL, fmt.Sprintf("advertised URL %s does not resolve from here", p.URL),
				p.URL+", "+who+": "+p.Error+". Checked from the host doctor runs on; run doctor in a worker's container or network to judge what the workers see",
				"make CONNECT_REST_ADVERTISED_HOST_NAME a name every worker resolves (in Swarm the service or task name on the shared overlay network), or advertise an address")
		case !p.Reachable:
			d.add(IDAdvertisedURLUnreachable, checks.Warning, p.URL, fmt.Sprintf("advertised URL %s does not accept connections from here", p.URL),
				fmt.Sprintf("%s, %s, resolves to %v: %s. Checked from the host doctor runs on", p.URL, who, p.Addresses, p.Error),
				"check that the worker listens on that port (CONNECT_LISTENERS) and that the network lets the other workers reach it")
		}
	}
}

// plugins renders the plugin parity look: the members that did not list
// their plugins (never counted either way), each member's gaps (memberGaps),
// and, when doctor scanned this worker in its container, its plugins
// without manifests that force the slow reflective scan and the plugin.path
// entries it skips, straight from plugins.Verdict.
func (d *diag) plugins() {
	p := d.s.Plugins
	if p == nil {
		return
	}
	if p.ConfigError != "" {
		d.add(IDCheckFailed, checks.Warning, "plugins", "the connectors of our config topic are unknown: plugin parity was not judged for them", p.ConfigError,
			"check that this principal may READ the config topic")
	}
	if p.DefinitionsError != "" {
		d.add(IDCheckFailed, checks.Warning, "plugins", "CONNECT_INIT_CONNECTORS_DIR's definitions were left out of the plugin parity look", p.DefinitionsError,
			"correct the file named, as connect-init apply would ask")
	}
	for _, u := range p.Unanswered {
		if u.Refused {
			d.add(IDRESTCredentialsRefused, checks.Error, u.URL, fmt.Sprintf("member %s refused connect-init's REST request: its plugins, and every REST check, need credentials", u.URL), u.Error, u.Fix)
			continue
		}
		d.add(IDCheckFailed, checks.Warning, u.URL, fmt.Sprintf("member %s did not list its plugins: it is not judged, and counts for no other member", u.URL), u.Error,
			"check that the worker's REST API answers GET /connector-plugins from here (listeners, rest.advertised.*, the REST TLS settings)")
	}
	d.memberGaps(p)
	if p.Local != nil {
		for _, f := range plugins.Verdict(plugins.Input{Local: p.Local}) {
			d.add(f.ID, pluginSeverity(f.Severity), f.Subject, f.Summary, f.Evidence, f.Fix)
		}
	}
}

// pluginGap is one member lacking one class that other members load, with
// every connector that names it.
type pluginGap struct {
	member, class    string
	connectors, uses []string
	peers            []string
}

// memberGaps judges every member that answered against the others with
// plugins.Verdict, as the plugins step judges a starting worker: a class a
// member lacks and others load (IDPluginMissing, one finding per member
// and class naming the connectors at risk; an error under
// CONNECT_INIT_PLUGIN_CHECK=fail, as run would refuse that worker), a class
// no member loads (IDPluginMissingEverywhere) and a plugin in different
// versions (IDPluginVersionDiffers), once per connector.
func (d *diag) memberGaps(p *PluginsLook) {
	var gaps []*pluginGap
	byKey := map[string]*pluginGap{}
	once := map[string]bool{}
	for i, m := range p.Members {
		others := append(append([]plugins.Peer{}, p.Members[:i]...), p.Members[i+1:]...)
		for _, f := range plugins.Verdict(plugins.Input{Uses: p.Uses, Local: plugins.PeerInventory(m), Peers: others}) {
			key := f.ID + "|" + f.Connector + "|" + f.Key
			switch {
			case f.ID == plugins.IDPluginMissing:
				g := byKey[m.Member+"|"+f.Class]
				if g == nil {
					g = &pluginGap{member: m.Member, class: f.Class, peers: f.Peers}
					byKey[m.Member+"|"+f.Class] = g
					gaps = append(gaps, g)
				}
				g.connectors = append(g.connectors, strconv.Quote(f.Connector))
				g.uses = append(g.uses, fmt.Sprintf("%s of connector %q", f.Key, f.Connector))
			case f.ID == plugins.IDPluginMissingEverywhere && !once[key]:
				once[key] = true
				d.add(f.ID, checks.Warning, f.Subject,
					fmt.Sprintf("connector %q needs %s, which none of the %d members that answered can load: it fails on whichever worker runs it", f.Connector, f.Class, len(p.Members)),
					fmt.Sprintf("%s=%s; members asked: %s", f.Key, f.Class, strings.Join(peerURLs(p.Members), ", ")), f.Fix)
			case f.ID == plugins.IDPluginVersionDiffers && !once[key]:
				once[key] = true
				d.add(f.ID, checks.Warning, f.Subject,
					fmt.Sprintf("connector %q uses %s in different versions across the members: its tasks behave differently depending on where they run", f.Connector, f.Class),
					"versions: "+memberVersions(p.Members, f.Class), f.Fix)
			}
		}
	}
	sev := checks.Error
	if p.Mode != plugins.CheckFail {
		sev = checks.Warning
	}
	for _, g := range gaps {
		d.add(plugins.IDPluginMissing, sev, g.member,
			fmt.Sprintf("member %s cannot load %s, which connector(s) %s need and %s can load: they fail whenever a rebalance gives them to it", g.member, g.class, strings.Join(g.connectors, ", "), strings.Join(g.peers, ", ")),
			fmt.Sprintf("%s name it; GET /connector-plugins of %s does not list it; it is listed by %s", strings.Join(g.uses, ", "), g.member, strings.Join(g.peers, ", ")),
			fmt.Sprintf("install the plugin that provides %s on %s as on %s (the same image, plugin.path and mounted volumes), then restart it; connect-init run refuses such a worker before it joins (CONNECT_INIT_PLUGIN_CHECK=fail)", g.class, g.member, g.peers[0]))
	}
}

// pluginSeverity maps a plugin finding's severity onto the checks'.
func pluginSeverity(s checks.Severity) checks.Severity {
	switch s {
	case checks.Error:
		return checks.Error
	case checks.Warning:
		return checks.Warning
	}
	return checks.Info
}

func peerURLs(ps []plugins.Peer) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Member
	}
	return out
}

// memberVersions says which version of class each member reports.
func memberVersions(ps []plugins.Peer, class string) string {
	var parts []string
	for _, p := range ps {
		var vs []string
		for _, rp := range p.Plugins {
			if rp.Class == class {
				vs = append(vs, orUnknown(rp.Version))
			}
		}
		if len(vs) > 0 {
			parts = append(parts, p.Member+" "+strings.Join(vs, "/"))
		}
	}
	return strings.Join(parts, ", ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func offsetString(o int64) string {
	if o < 0 {
		return "unknown"
	}
	return strconv.FormatInt(o, 10)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
