package doctor

import (
	"bytes"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/connect-init/connect-init/checks"
)

// AlertRule is one Prometheus alerting rule over the watcher's metrics
// (doctor --watch --metrics-addr). Its summary ends with the fix, which is
// the fix of the check that finds the same condition, taken from the
// check itself (package checks): the rules file is generated from
// AlertRules, so the alert and doctor cannot give two fixes for one
// problem.
type AlertRule struct {
	Alert string
	Expr  string
	For   time.Duration
	// Severity is the rule's severity label: critical (Connect stops or
	// will at the next start) or warning (a risk).
	Severity string
	// Check is the doctor check whose fix the summary carries ("" for the
	// watcher's own rules).
	Check   string
	Summary string
	Fix     string
}

// WatcherJob is the scrape job the examples give the watcher; the
// watcher-down rule reads its up series.
const WatcherJob = "connect-init-doctor"

// fixOf runs check id of list over subject and returns its fix: the
// subject is built so that the check fires, with Prometheus templates
// where the fix names a topic.
func fixOf[T any](list []checks.Check[T], id string, sev checks.Severity, subject T) string {
	for _, r := range checks.Run(list, subject) {
		if r.ID == id && r.Severity == sev {
			return r.Fix
		}
	}
	panic(fmt.Sprintf("doctor: check %s (%s) does not fire on the subject built for its alert", id, sev))
}

// AlertRules are the rules shipped in examples/monitoring/. The durations
// are what a look every 30 s needs to tell a state from a moment: a
// finding judged over a window (the storm, a foreign member, which a
// storming group shows only in its Stable moments) is read as its maximum
// over 2 minutes, so one calm look does not resolve it.
func AlertRules() []AlertRule {
	topicT := checks.Topic{Role: "config", Name: "{{ $labels.topic }}", TopicEnv: "CONNECT_{{ $labels.role | toUpper }}_STORAGE_TOPIC", Exists: true}
	storm := checks.Group{GroupID: "g", Storm: &checks.GroupStorm{Rebalances: 3, Stuck: []string{"m"}}}
	lost := checks.Coordinator{GroupID: "g", FindError: "COORDINATOR_NOT_AVAILABLE", Partition: -1}
	single := checks.Coordinator{GroupID: "g", Found: true, Partitions: 50, Brokers: 3, ISR: []int32{1}}
	offline, urp, wide, notCompact := topicT, topicT, topicT, topicT
	offline.Offline = []int32{0}
	urp.UnderReplicated = []int32{0}
	wide.Partitions = 2
	wide.TopicEnv = "CONNECT_CONFIG_STORAGE_TOPIC"
	notCompact.CleanupPolicy = "delete"
	return []AlertRule{
		{Alert: "ConnectInitRebalanceStorm", Severity: "critical", Check: checks.IDGroupRebalanceStorm, For: time.Minute,
			Expr:    `max_over_time(connect_init_doctor_findings{check="group-rebalance-storm"}[2m]) > 0`,
			Summary: "the worker group {{ $labels.group }} keeps rebalancing and does not settle (every rebalance stops its connectors)",
			Fix:     fixOf(checks.GroupChecks(), checks.IDGroupRebalanceStorm, checks.Error, storm)},
		{Alert: "ConnectInitForeignGroupMember", Severity: "critical", Check: checks.IDForeignGroupMember, For: time.Minute,
			Expr:    `max_over_time(connect_init_group_foreign_members[2m]) > 0`,
			Summary: "{{ $value }} member(s) of the worker group {{ $labels.group }} belong to another Connect cluster (connect-init doctor names them, with client host and URL)",
			Fix:     fixOf(checks.MemberChecks(), checks.IDForeignGroupMember, checks.Error, checks.GroupMember{Foreign: true})},
		{Alert: "ConnectInitCoordinatorNotAvailable", Severity: "critical", Check: checks.IDCoordinatorNotAvailable, For: 30 * time.Second,
			Expr:    `connect_init_coordinator_available == 0`,
			Summary: "no coordinator can be found for the worker group {{ $labels.group }}: no worker can join it",
			Fix:     fixOf(checks.CoordinatorChecks(), checks.IDCoordinatorNotAvailable, checks.Error, lost)},
		{Alert: "ConnectInitCoordinatorPartitionUnderReplicated", Severity: "warning", Check: checks.IDConsumerOffsetsSingle, For: time.Minute,
			Expr:    `connect_init_coordinator_partition_in_sync_replicas < 2 and on(group) connect_init_brokers{state="registered"} >= 2`,
			Summary: "the worker group {{ $labels.group }} lives in __consumer_offsets partition {{ $labels.partition }}, which has {{ $value }} in-sync replica(s): one broker loss leaves the group without a coordinator",
			Fix:     fixOf(checks.CoordinatorChecks(), checks.IDConsumerOffsetsSingle, checks.Warning, single)},
		{Alert: "ConnectInitInternalTopicLeaderless", Severity: "critical", Check: checks.IDTopicUnderReplicated, For: time.Minute,
			Expr:    `connect_init_internal_topic_leaderless_partitions > 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} has {{ $value }} partition(s) without a leader",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicUnderReplicated, checks.Error, offline)},
		{Alert: "ConnectInitInternalTopicUnderReplicated", Severity: "warning", Check: checks.IDTopicUnderReplicated, For: 5 * time.Minute,
			Expr:    `connect_init_internal_topic_under_replicated_partitions > 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} has {{ $value }} under-replicated partition(s)",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicUnderReplicated, checks.Warning, urp)},
		{Alert: "ConnectInitConfigTopicPartitions", Severity: "critical", Check: checks.IDConfigTopicPartitions, For: time.Minute,
			Expr:    `connect_init_internal_topic_partitions{role="config"} > 1`,
			Summary: "the config topic {{ $labels.topic }} has {{ $value }} partitions, Connect requires exactly 1",
			Fix:     fixOf(checks.TopicChecks(), checks.IDConfigTopicPartitions, checks.Error, wide)},
		{Alert: "ConnectInitInternalTopicNotCompacted", Severity: "critical", Check: checks.IDTopicNotCompacted, For: time.Minute,
			Expr:    `connect_init_internal_topic_compacted == 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} is not compacted (cleanup.policy is not exactly compact)",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicNotCompacted, checks.Error, notCompact)},
		{Alert: "ConnectInitStartupLockHolderStuck", Severity: "warning", For: 2 * time.Minute,
			Expr:    `connect_init_lock_holder_age_seconds > connect_init_lock_hold_lease_seconds and connect_init_lock_waiters > 0`,
			Summary: "a worker of the group {{ $labels.group }} has held the startup lock for {{ $value | humanizeDuration }}, past CONNECT_INIT_LOCK_LEASE, while others wait",
			Fix:     "the waiters pass the permit on when they can write the lock topic: check connect_init_lock_topic_writable and the lock topic's leader; then find why the holder does not join the group (the waiting workers' log names it)"},
		{Alert: "ConnectInitWatcherDown", Severity: "warning", For: 5 * time.Minute,
			Expr:    fmt.Sprintf(`up{job=%q} == 0 or connect_init_doctor_look_success == 0 or time() - connect_init_doctor_last_look_timestamp_seconds > 300`, WatcherJob),
			Summary: "the connect-init watcher {{ $labels.instance }} does not see the cluster: nothing watches the worker group between deployments",
			Fix:     "read the watcher's log (each failed look is a warning with its cause); check that it runs, that its settings are the workers' and that it reaches the brokers"},
		{Alert: "ConnectInitDoctorError", Severity: "critical", For: 10 * time.Minute,
			Expr:    `connect_init_doctor_findings{severity="error"} > 0`,
			Summary: "connect-init doctor finds {{ $labels.check }} ({{ $value }}) on the worker group {{ $labels.group }}: connect-init run would refuse to start a worker",
			Fix:     "run connect-init doctor with the workers' settings: the finding's evidence and fix"},
		{Alert: "ConnectInitDoctorWarning", Severity: "warning", For: 30 * time.Minute,
			Expr:    `connect_init_doctor_findings{severity="warning"} > 0`,
			Summary: "connect-init doctor finds {{ $labels.check }} ({{ $value }}) on the worker group {{ $labels.group }}",
			Fix:     "run connect-init doctor with the workers' settings: the finding's evidence and fix"},
	}
}

// RulesFile renders the rules as a Prometheus rules file (one group).
// Each summary is the condition, then "fix:" and the fix.
func RulesFile() ([]byte, error) {
	type rule struct {
		Alert       string            `yaml:"alert"`
		Expr        string            `yaml:"expr"`
		For         string            `yaml:"for,omitempty"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	var rules []rule
	for _, r := range AlertRules() {
		ann := map[string]string{"summary": r.Summary + "; fix: " + r.Fix}
		if r.Check != "" {
			ann["doctor_check"] = r.Check
		}
		rules = append(rules, rule{Alert: r.Alert, Expr: r.Expr, For: promDuration(r.For), Labels: map[string]string{"severity": r.Severity}, Annotations: ann})
	}
	doc := map[string]any{"groups": []map[string]any{{"name": "connect-init", "rules": rules}}}
	var b bytes.Buffer
	b.WriteString("# Generated from doctor.AlertRules (go test ./doctor -run TestRulesFile -update): edit the Go, not this file.\n" +
		"# The rules read the metrics of connect-init doctor --watch --metrics-addr (docs/doctor.md#metrics).\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("render the rules: %w", err)
	}
	return b.Bytes(), nil
}

// promDuration is d as Prometheus writes it (1m, 30s, 5m).
func promDuration(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}
