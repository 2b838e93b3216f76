package doctor

import (
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/gate"
)

// Metrics are doctor --watch --metrics-addr's Prometheus metrics: the last
// look, so that between deployments an alert rule watches what the gates
// check at start-up. Every series carries the worker group as the label
// group_id (group is a common target label, which Prometheus would rename
// exported_group). Each finding id is exported at each severity it can
// have, 0 when absent, so that one rule per severity covers every check
// and an alert resolves when its finding clears.
//
// A look that fails (no broker answers, a describe fails) cannot say what
// it did not see: the topic, coordinator, group and lock series then keep
// the value of the last look that saw them, and the findings the last
// successful look's, beside connect_init_doctor_last_successful_look_timestamp_seconds
// that says how old they are. An outage therefore keeps the critical
// alerts firing, and the looks-failing rule says the values are stale.
type Metrics struct {
	looks    prometheus.Counter
	failures prometheus.Counter

	mu   sync.Mutex
	last *Look
	// rebalances adds up the rebalances each look counted: the
	// generation's increments when the watcher reads the group's
	// __consumer_offsets partition (exact), else the look's window's (a
	// lower bound: the group is not watched between looks). It is served
	// from the same locked copy as the generation, so that one scrape
	// never shows a look's count beside the look before's generation.
	rebalances float64
	// good is the last look that did not fail; parts holds, for each
	// part of a look, the last look that saw it.
	good  *Look
	parts lookParts
}

// lookParts are the parts of the last looks that saw each: a failed look
// replaces only the parts it saw.
type lookParts struct {
	topics      *gate.TopicReport
	coordinator *gate.CoordinatorReport
	group       *Document
	lock        *LockLook
	generation  *GenerationLook
}

// findingSeverities lists every finding id doctor reports, with the
// severities it can have (the table of doc.go; TestFindingCatalog
// compares them).
func findingSeverities() map[string][]checks.Severity {
	e, w, i := checks.Error, checks.Warning, checks.Info
	return map[string][]checks.Severity{
		checks.IDGroupRebalanceStorm: {e}, IDBrokerUnreachable: {e}, IDBrokerCountBelowExpected: {e}, IDControllerUnknown: {e},
		IDControllerQuorumLost: {e}, IDBrokerNotLive: {w}, checks.IDInternalTopicMissing: {w, e}, checks.IDTopicConfigsUnreadable: {e},
		checks.IDConfigTopicPartitions: {e}, checks.IDTopicNotCompacted: {e}, checks.IDTopicUnderReplicated: {e, w},
		checks.IDTopicReplicationBelowConf: {w}, checks.IDTopicMinISRTooHigh: {w}, checks.IDConsumerOffsetsMissing: {i},
		checks.IDConsumerOffsetsSingle: {w, e}, checks.IDCoordinatorNotAvailable: {e}, checks.IDForeignGroupMember: {e},
		checks.IDGroupRegisteredElsewhere: {e, i}, checks.IDUnverifiedGroupMember: {w}, checks.IDRegistryUnreadable: {w},
		IDMemberConfigOffsetBehind: {w}, IDAssignmentConfigMismatch: {e}, IDDuplicateAdvertisedURL: {e},
		IDAdvertisedURLUnresolvable: {w}, IDAdvertisedURLUnreachable: {w}, IDConfigTopicOpenTxn: {e, w}, checks.IDGroupNotStable: {w},
		checks.IDGroupEmpty: {i}, plugins.IDPluginMissing: {e, w}, plugins.IDPluginMissingEverywhere: {w},
		plugins.IDPluginVersionDiffers: {w}, plugins.IDPluginVersionUnverified: {i}, plugins.IDPluginNoManifest: {i, w},
		plugins.IDPluginPathProblem: {w}, IDCheckFailed: {w}, IDRESTCredentialsRefused: {e},
		checks.IDRebalanceDelayDefault: {w}, checks.IDRebalanceDelayBelowRejoin: {w}, checks.IDMemberBehindUnjudged: {e},
		parity.IDSettingDiffers: {e}, parity.IDSignatureNotVerified: {e}, parity.IDStagedTransition: {w, e},
		parity.IDLeaderSettingDiffers: {w}, parity.IDAdvertisedURLShared: {e},
		parity.IDTxnStateCannotBeCreated: {e}, parity.IDTxnStateBelowMinISR: {e}, parity.IDTxnIDNotAuthorized: {e},
		parity.IDTxnIDUnchecked: {w}, parity.IDBrokersTooOld: {e},
	}
}

// groupStates are the classic group states DescribeGroups reports; the
// state series carries each, one of them 1.
var groupStates = []string{"Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"}

// desc is a metric of the last look, with the group label added by the
// registerer.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	findingsDesc = desc("connect_init_doctor_findings",
		"Findings by check id and severity (0 when the check found nothing): doctor's findings, one alert rule per severity covers every check. After a failed look, the last successful look's, or the failed look's own when higher.", "check", "finding_severity")
	lookDurationDesc = desc("connect_init_doctor_look_duration_seconds", "How long the last look took.")
	lookSuccessDesc  = desc("connect_init_doctor_look_success",
		"Whether the last look saw the whole cluster (1) or failed (0): no broker answered, a describe failed, or it ran out of time.")
	lookTimeDesc = desc("connect_init_doctor_last_look_timestamp_seconds", "When the last look began (Unix time).")
	lookGoodDesc = desc("connect_init_doctor_last_successful_look_timestamp_seconds",
		"When the last look that saw the whole cluster began (Unix time; 0: none yet): how old the values a failed look kept are.")
	lookRequestsDesc    = desc("connect_init_doctor_look_kafka_requests", "Kafka requests the last look sent, over every connection.")
	brokersRegisteredDs = desc("connect_init_brokers_registered", "Brokers the cluster's metadata lists.")
	brokersReachableDs  = desc("connect_init_brokers_reachable", "Brokers that answer on their advertised listener from the watcher.")
	brokersExpectedDs   = desc("connect_init_brokers_expected", "Brokers run waits for (CONNECT_INIT_EXPECTED_BROKERS; 0: not set).")

	topicPartitionsDesc = desc("connect_init_internal_topic_partitions", "Partitions of the internal topic (0 when it does not exist).", "role", "topic")
	topicExistsDesc     = desc("connect_init_internal_topic_exists", "Whether the internal topic exists.", "role", "topic")
	topicRFDesc         = desc("connect_init_internal_topic_replication_factor", "Largest replica set of any partition of the internal topic.", "role", "topic")
	topicISRDesc        = desc("connect_init_internal_topic_in_sync_replicas", "Fewest in-sync replicas of any partition of the internal topic.", "role", "topic")
	topicURPDesc        = desc("connect_init_internal_topic_under_replicated_partitions", "Partitions of the internal topic with fewer in-sync replicas than replicas.", "role", "topic")
	topicLeaderlessDesc = desc("connect_init_internal_topic_leaderless_partitions", "Partitions of the internal topic without a leader.", "role", "topic")
	topicMinISRDesc     = desc("connect_init_internal_topic_min_insync_replicas", "The internal topic's min.insync.replicas setting (absent when unreadable).", "role", "topic")
	topicCompactDesc    = desc("connect_init_internal_topic_compacted", "Whether the internal topic's cleanup.policy is exactly compact (absent when unreadable).", "role", "topic")
	configEndDesc       = desc("connect_init_config_topic_end_offset", "End offset of the config topic as the group look read it.", "topic")

	coordAvailableDesc = desc("connect_init_coordinator_available", "Whether FindCoordinator found the worker group's coordinator.")
	coordISRDesc       = desc("connect_init_coordinator_partition_in_sync_replicas", "In-sync replicas of the group's __consumer_offsets partition.", "partition")
	coordReplicasDesc  = desc("connect_init_coordinator_partition_replicas", "Replicas of the group's __consumer_offsets partition.", "partition")
	coordHasLeaderDesc = desc("connect_init_coordinator_partition_has_leader", "Whether the group's __consumer_offsets partition has a leader.", "partition")
	coordLeaderDesc    = desc("connect_init_coordinator_partition_leader_info", "The broker leading the group's __consumer_offsets partition, as the label broker_id (absent: none).", "partition", "broker_id")

	groupStateDesc      = desc("connect_init_group_state", "The worker group's state at the last look (1 for the current one).", "state")
	groupMembersDesc    = desc("connect_init_group_members", "Members of the worker group.")
	groupForeignDesc    = desc("connect_init_group_foreign_members", "Members a group-identity rule proved foreign (another Connect cluster or a stale worker).")
	groupUnverifiedDesc = desc("connect_init_group_unverified_members", "Members neither proven ours nor foreign.")

	rejoinDesc = desc("connect_init_group_rejoin_longest_seconds",
		"The longest recent time a restarted or replaced worker was away from the group, between two bounds (bound: at_least, at_most) set by the looks' interval; absent until the watcher has seen a worker leave and come back. scheduled.rebalance.max.delay.ms should exceed it.", "bound")
	rejoinsDesc    = desc("connect_init_group_rejoins_total", "Workers the watcher saw leave the group and come back (or be replaced) since it started.")
	rebalancesDesc = desc("connect_init_group_rebalances_total",
		"Rebalances of the worker group: the generation's increments when the watcher may read the group's __consumer_offsets partition (exact), else what the looks' windows counted (a lower bound); connect_init_group_rebalances_source says which. Rules read increase() of it.")
	generationDesc = desc("connect_init_group_generation",
		"The worker group's generation, from its last group metadata record in __consumer_offsets (0: none); absent while the watcher cannot read that partition.")
	rebalanceSourceDesc = desc("connect_init_group_rebalances_source",
		"Which count connect_init_group_rebalances_total served at the last look (1 for the current one): generation (exact, read from __consumer_offsets) or window (the look's window, a lower bound).", "source")

	lockExistsDesc   = desc("connect_init_lock_topic_exists", "Whether the startup lock's topic exists.", "topic")
	lockWritableDesc = desc("connect_init_lock_topic_writable", "Whether the startup lock's topic has a leader and at least min.insync.replicas in-sync replicas.", "topic")
	lockQueueDesc    = desc("connect_init_lock_queue_length", "Live holders and waiters in the worker group's startup lock queue.", "topic")
	lockWaitersDesc  = desc("connect_init_lock_waiters", "Live waiters in the worker group's startup lock queue.", "topic")
	lockAgeDesc      = desc("connect_init_lock_holder_age_seconds", "How long the oldest holder of the startup lock has held it (0: none).", "topic")
	lockLeaseDesc    = desc("connect_init_lock_hold_lease_seconds", "CONNECT_INIT_LOCK_LEASE: how long a holder that never gets ready keeps its permit.", "topic")
	lockReadDesc     = desc("connect_init_lock_read_success", "Whether the last look read the startup lock's queue.", "topic")
)

// NewMetrics registers the watcher's metrics on reg (metrics.NewRegistry,
// shared with apply --watch's when both run), each series labelled with
// the worker group (group_id).
func NewMetrics(reg prometheus.Registerer, groupID string) *Metrics {
	m := &Metrics{
		looks: prometheus.NewCounter(prometheus.CounterOpts{Name: "connect_init_doctor_looks_total",
			Help: "Looks the watcher took, failed ones included."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "connect_init_doctor_look_failures_total",
			Help: "Looks that did not see the whole cluster: no broker answered, a describe failed, or the look ran out of time."}),
	}
	prometheus.WrapRegistererWith(prometheus.Labels{GroupLabel: groupID}, reg).MustRegister(m.looks, m.failures, (*lastLook)(m))
	return m
}

// GroupLabel is the label every watcher series carries the worker
// group's id in.
const GroupLabel = "group_id"

// Observe records a look; a nil *Metrics ignores it.
func (m *Metrics) Observe(l *Look) {
	if m == nil {
		return
	}
	m.looks.Inc()
	if l.Failed != "" {
		m.failures.Inc()
	}
	var gl *GenerationLook
	if l.Snapshot != nil {
		gl = l.Snapshot.Generation
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The look's count: the tracker's (generation or window) when the
	// watcher keeps one, else the window's.
	g := l.Document.Cluster.Group
	switch {
	case gl != nil:
		m.rebalances += float64(gl.Added)
	case g != nil && g.Window != nil:
		m.rebalances += float64(g.Window.Rebalances)
	}
	m.last = l
	if l.Failed == "" {
		m.good = l
	}
	if s := l.Snapshot; s != nil {
		if s.Topics != nil {
			m.parts.topics = s.Topics
		}
		if s.Coordinator != nil {
			m.parts.coordinator = s.Coordinator
		}
	}
	if l.Document.Cluster.Group != nil {
		m.parts.group = l.Document
	}
	if gl != nil {
		m.parts.generation = gl
	}
	if l.Lock != nil && (l.Lock.Err == "" || l.Failed == "") {
		m.parts.lock = l.Lock
	}
}

// lastLook emits the last look's values, so that a topic renamed or a
// partition moved leaves no stale series behind.
type lastLook Metrics

func (c *lastLook) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{findingsDesc, lookDurationDesc, lookSuccessDesc, lookTimeDesc, lookGoodDesc, lookRequestsDesc,
		brokersRegisteredDs, brokersReachableDs, brokersExpectedDs,
		topicPartitionsDesc, topicExistsDesc, topicRFDesc, topicISRDesc, topicURPDesc, topicLeaderlessDesc, topicMinISRDesc, topicCompactDesc, configEndDesc,
		coordAvailableDesc, coordISRDesc, coordReplicasDesc, coordHasLeaderDesc, coordLeaderDesc,
		groupStateDesc, groupMembersDesc, groupForeignDesc, groupUnverifiedDesc, rejoinDesc, rejoinsDesc,
		rebalancesDesc, generationDesc, rebalanceSourceDesc, lockExistsDesc, lockWritableDesc, lockQueueDesc, lockWaitersDesc, lockAgeDesc, lockLeaseDesc, lockReadDesc} {
		ch <- d
	}
}

func (c *lastLook) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	l, good, parts, rebalances := c.last, c.good, c.parts, c.rebalances
	c.mu.Unlock()
	if l == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(rebalancesDesc, prometheus.CounterValue, rebalances)
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	doc := l.Document
	g(lookDurationDesc, l.Duration.Seconds())
	g(lookSuccessDesc, one(l.Failed == ""))
	g(lookTimeDesc, unixSeconds(l.Started))
	g(lookRequestsDesc, float64(l.KafkaRequests))
	var kept []checks.Result
	if good != nil {
		g(lookGoodDesc, unixSeconds(good.Started))
		if good != l {
			kept = good.Document.Findings
		}
	} else {
		g(lookGoodDesc, 0)
	}
	collectFindings(g, doc.Findings, kept)
	if b := doc.Cluster.Brokers; b != nil {
		g(brokersRegisteredDs, float64(b.Registered))
		g(brokersReachableDs, float64(b.Reachable))
		g(brokersExpectedDs, float64(b.Expected))
	}
	if parts.topics != nil {
		for _, t := range parts.topics.Topics {
			collectTopic(g, t)
		}
	}
	collectCoordinator(g, parts.coordinator)
	if parts.group != nil {
		collectGroup(g, parts.group)
	}
	ch <- prometheus.MustNewConstMetric(rejoinsDesc, prometheus.CounterValue, float64(l.Rejoins))
	if r := l.Rejoin; r != nil {
		g(rejoinDesc, r.AtLeast.Seconds(), "at_least")
		g(rejoinDesc, max(r.AtMost, r.AtLeast).Seconds(), "at_most")
	}
	collectGeneration(g, parts.generation)
	collectLock(g, parts.lock)
}

// collectGeneration says which rebalance count is served, and the
// generation when it is read.
func collectGeneration(g gaugeFunc, gl *GenerationLook) {
	if gl == nil {
		return
	}
	for _, src := range []string{SourceGeneration, SourceWindow} {
		g(rebalanceSourceDesc, one(gl.Source == src), src)
	}
	if gl.Source == SourceGeneration {
		g(generationDesc, float64(gl.Generation))
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

type gaugeFunc func(d *prometheus.Desc, v float64, labels ...string)

// collectFindings counts the findings by id and severity. kept are the
// last successful look's findings when the last look failed: each count is
// then the higher of the two looks' (a check the failed look could not
// run keeps its last known count).
func collectFindings(g gaugeFunc, findings, kept []checks.Result) {
	count := func(fs []checks.Result) map[[2]string]int {
		c := map[[2]string]int{}
		for _, f := range fs {
			c[[2]string{f.ID, string(f.Severity)}]++
		}
		return c
	}
	counts := count(findings)
	for k, n := range count(kept) {
		counts[k] = max(counts[k], n)
	}
	for id, sevs := range findingSeverities() {
		for _, sev := range sevs {
			k := [2]string{id, string(sev)}
			if _, ok := counts[k]; !ok {
				counts[k] = 0
			}
		}
	}
	keys := make([][2]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		g(findingsDesc, float64(counts[k]), k[0], k[1])
	}
}

func collectTopic(g gaugeFunc, t gate.TopicResult) {
	exists := t.Outcome != gate.TopicMissing
	g(topicExistsDesc, one(exists), t.Role, t.Name)
	g(topicPartitionsDesc, float64(t.Partitions), t.Role, t.Name)
	if !exists {
		return
	}
	g(topicRFDesc, float64(t.ReplicationFactor), t.Role, t.Name)
	g(topicISRDesc, float64(t.MinISR), t.Role, t.Name)
	g(topicURPDesc, float64(len(t.UnderReplicated)), t.Role, t.Name)
	g(topicLeaderlessDesc, float64(len(t.Offline)), t.Role, t.Name)
	if t.ConfigError != "" {
		return
	}
	if n, err := strconv.Atoi(t.MinInsyncReplicas); err == nil {
		g(topicMinISRDesc, float64(n), t.Role, t.Name)
	}
	g(topicCompactDesc, one(t.CleanupPolicy == "compact"), t.Role, t.Name)
}

func collectCoordinator(g gaugeFunc, c *gate.CoordinatorReport) {
	if c == nil {
		return
	}
	g(coordAvailableDesc, one(c.CoordinatorID >= 0))
	if c.Partitions == 0 {
		return
	}
	p := strconv.Itoa(int(c.Partition))
	g(coordISRDesc, float64(len(c.ISR)), p)
	g(coordReplicasDesc, float64(len(c.Replicas)), p)
	g(coordHasLeaderDesc, one(c.Leader >= 0), p)
	if c.Leader >= 0 {
		g(coordLeaderDesc, 1, p, strconv.Itoa(int(c.Leader)))
	}
}

func collectGroup(g gaugeFunc, doc *Document) {
	gr := doc.Cluster.Group
	if gr == nil {
		return
	}
	known := false
	for _, st := range groupStates {
		known = known || st == gr.State
		g(groupStateDesc, one(st == gr.State), st)
	}
	if !known && gr.State != "" {
		g(groupStateDesc, 1, gr.State)
	}
	g(groupMembersDesc, float64(len(gr.Members)))
	g(groupForeignDesc, float64(len(gr.Foreign)))
	unverified := 0
	for _, f := range doc.Findings {
		if f.ID == checks.IDUnverifiedGroupMember {
			unverified++
		}
	}
	g(groupUnverifiedDesc, float64(unverified))
}

func collectLock(g gaugeFunc, l *LockLook) {
	if l == nil {
		return
	}
	g(lockExistsDesc, one(l.Exists), l.Topic)
	g(lockLeaseDesc, l.HoldLease.Seconds(), l.Topic)
	if !l.Exists {
		return
	}
	g(lockWritableDesc, one(l.Writable), l.Topic)
	g(lockReadDesc, one(l.Err == ""), l.Topic)
	if l.Err != "" {
		return
	}
	g(lockQueueDesc, float64(l.Holders+l.Waiters), l.Topic)
	g(lockWaitersDesc, float64(l.Waiters), l.Topic)
	g(lockAgeDesc, l.HolderAge.Seconds(), l.Topic)
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
