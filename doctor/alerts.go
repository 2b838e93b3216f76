package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/metrics"
)

// AlertRule is one Prometheus alerting rule over the watcher's metrics
// (doctor --watch --metrics-addr). Its fix is the fix of the check that
// finds the same condition, taken from the check itself (package checks):
// the rules file is generated from AlertRules, so the alert and doctor
// cannot give two fixes for one problem.
type AlertRule = metrics.Rule

// WatcherSelector is the label matcher that names the watcher's scrape
// job in the rules: the one place of the rules that depends on how
// Prometheus scrapes it. The examples' static scrape job is
// connect-init-doctor; a PodMonitor names its job <namespace>/<name>
// (KubernetesRules).
const WatcherSelector = `job="connect-init-doctor"`

// lookedFor is how long the watcher may go without a successful look
// before LooksFailing: four looks at the examples' --interval=30s, plus
// a look's own time.
const lookedFor = 150 * time.Second

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

// AlertRules are the rules shipped in examples/monitoring/, with the
// watcher's job named by WatcherSelector.
func AlertRules() []AlertRule { return AlertRulesFor(WatcherSelector) }

// AlertRulesFor are the rules with the watcher's job named by selector (a
// PromQL label matcher list, such as job="monitoring/connect-init-doctor").
// The durations are what a look every 30 s needs to tell a state from a
// moment: a finding judged over a window (the storm, a foreign member,
// which a storming group shows only in its Stable moments) is read as its
// maximum over 2 minutes, so one calm look does not resolve it. A failed
// look keeps the last values it could not see (Metrics), so an outage
// keeps these firing, and LooksFailing pages for the outage itself. The
// catch-alls leave every check with a rule of its own to that rule, and
// stay quiet while the looks fail: one page per incident.
func AlertRulesFor(selector string) []AlertRule {
	own := append(checkRules(), lockRule())
	return append(own, watcherRules(selector, own)...)
}

// checkRules are the rules of the checks with a metric of their own.
func checkRules() []AlertRule {
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
	crit, warn := metrics.Critical, metrics.Warning
	return []AlertRule{
		{Alert: "ConnectInitRebalanceStorm", Severity: crit, Check: checks.IDGroupRebalanceStorm, For: time.Minute,
			// A storm a foreign member causes is that member's page.
			Expr: `max_over_time(connect_init_doctor_findings{check="group-rebalance-storm"}[2m]) > 0` +
				` unless on(group_id, instance) max_over_time(connect_init_group_foreign_members[2m]) > 0`,
			Summary: "the worker group {{ $labels.group_id }} keeps rebalancing and does not settle (every rebalance stops its connectors)",
			Fix:     fixOf(checks.GroupChecks(), checks.IDGroupRebalanceStorm, checks.Error, storm)},
		{Alert: "ConnectInitForeignGroupMember", Severity: crit, Check: checks.IDForeignGroupMember, For: time.Minute,
			Expr:    `max_over_time(connect_init_group_foreign_members[2m]) > 0`,
			Summary: "{{ $value }} member(s) of the worker group {{ $labels.group_id }} belong to another Connect cluster (connect-init doctor names them, with client host and URL)",
			Fix:     fixOf(checks.MemberChecks(), checks.IDForeignGroupMember, checks.Error, checks.GroupMember{Foreign: true})},
		{Alert: "ConnectInitCoordinatorNotAvailable", Severity: crit, Check: checks.IDCoordinatorNotAvailable, For: 30 * time.Second,
			Expr:    `connect_init_coordinator_available == 0`,
			Summary: "no coordinator can be found for the worker group {{ $labels.group_id }}: no worker can join it",
			Fix:     fixOf(checks.CoordinatorChecks(), checks.IDCoordinatorNotAvailable, checks.Error, lost)},
		{Alert: "ConnectInitCoordinatorPartitionUnderReplicated", Severity: warn, Check: checks.IDConsumerOffsetsSingle, For: time.Minute,
			Expr:    `connect_init_coordinator_partition_in_sync_replicas < 2 and on(group_id, instance) connect_init_brokers_registered >= 2`,
			Summary: "the worker group {{ $labels.group_id }} lives in __consumer_offsets partition {{ $labels.partition }}, which has {{ $value }} in-sync replica(s): one broker loss leaves the group without a coordinator",
			Fix:     fixOf(checks.CoordinatorChecks(), checks.IDConsumerOffsetsSingle, checks.Warning, single)},
		{Alert: "ConnectInitInternalTopicLeaderless", Severity: crit, Check: checks.IDTopicUnderReplicated, For: time.Minute,
			Expr:    `connect_init_internal_topic_leaderless_partitions > 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} has {{ $value }} partition(s) without a leader",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicUnderReplicated, checks.Error, offline)},
		{Alert: "ConnectInitInternalTopicUnderReplicated", Severity: warn, Check: checks.IDTopicUnderReplicated, For: 5 * time.Minute,
			Expr:    `connect_init_internal_topic_under_replicated_partitions > 0 unless connect_init_internal_topic_leaderless_partitions > 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} has {{ $value }} under-replicated partition(s)",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicUnderReplicated, checks.Warning, urp)},
		// A standing misconfiguration: Connect runs, a risk to fix in
		// working hours.
		{Alert: "ConnectInitConfigTopicPartitions", Severity: warn, Check: checks.IDConfigTopicPartitions, For: time.Minute,
			Expr:    `connect_init_internal_topic_partitions{role="config"} > 1`,
			Summary: "the config topic {{ $labels.topic }} has {{ $value }} partitions, Connect requires exactly 1",
			Fix:     fixOf(checks.TopicChecks(), checks.IDConfigTopicPartitions, checks.Error, wide)},
		{Alert: "ConnectInitInternalTopicNotCompacted", Severity: warn, Check: checks.IDTopicNotCompacted, For: time.Minute,
			Expr:    `connect_init_internal_topic_compacted == 0`,
			Summary: "the {{ $labels.role }} topic {{ $labels.topic }} is not compacted (cleanup.policy is not exactly compact)",
			Fix:     fixOf(checks.TopicChecks(), checks.IDTopicNotCompacted, checks.Error, notCompact)},
	}
}

func lockRule() AlertRule {
	return AlertRule{Alert: "ConnectInitStartupLockHolderStuck", Severity: metrics.Warning, For: 2 * time.Minute,
		Expr:    `connect_init_lock_holder_age_seconds > connect_init_lock_hold_lease_seconds and connect_init_lock_waiters > 0`,
		Summary: "a worker of the group {{ $labels.group_id }} has held the startup lock for {{ $value | humanizeDuration }}, past CONNECT_INIT_LOCK_LEASE, while others wait",
		Fix:     "the waiters pass the permit on when they can write the lock topic: check connect_init_lock_topic_writable and the lock topic's leader; then find why the holder does not join the group (the waiting workers' log names it)"}
}

// watcherRules are the rules on the watcher itself and the catch-alls,
// which leave the checks of the rules own to them.
func watcherRules(selector string, own []AlertRule) []AlertRule {
	var ids []string
	for _, r := range own {
		if r.Check != "" && !slices.Contains(ids, r.Check) {
			ids = append(ids, r.Check)
		}
	}
	sort.Strings(ids)
	others := fmt.Sprintf(`check!~%q`, strings.Join(ids, "|"))
	catchAll := func(sev string) string {
		return fmt.Sprintf(`connect_init_doctor_findings{finding_severity=%q,%s} > 0 unless on(group_id, instance) connect_init_doctor_look_success == 0`, sev, others)
	}
	const doctorFix = "run connect-init doctor with the workers' settings: the finding's evidence and fix"
	return []AlertRule{
		{Alert: "ConnectInitLooksFailing", Severity: metrics.Critical, For: time.Minute,
			Expr: fmt.Sprintf(`time() - connect_init_doctor_last_successful_look_timestamp_seconds > %d`, int(lookedFor.Seconds())),
			Summary: "the connect-init watcher {{ $labels.instance }} has not seen the cluster of the worker group {{ $labels.group_id }} for {{ $value | humanizeDuration }}: " +
				"no broker answers it, or a describe fails (the other alerts keep the last values it saw)",
			Fix: "read the watcher's log (each failed look is a warning with its cause) and run connect-init doctor with the workers' settings; if no broker answers, the brokers are down or unreachable from here: bring them back"},
		{Alert: "ConnectInitWatcherAbsent", Severity: metrics.Warning, For: 2 * time.Minute,
			Expr:    fmt.Sprintf(`absent(connect_init_doctor_look_success{%s})`, selector),
			Summary: "no connect-init watcher serves its metrics (" + strings.ReplaceAll(selector, `"`, "") + "): nothing watches the worker groups between deployments",
			Fix:     "check that the watcher runs (one per Connect cluster) and that Prometheus scrapes it under this job: the rules' job selector must name its scrape job"},
		{Alert: "ConnectInitWatcherDown", Severity: metrics.Warning, For: 5 * time.Minute,
			Expr:    fmt.Sprintf(`up{%s} == 0 unless on() absent(connect_init_doctor_look_success{%s})`, selector, selector),
			Summary: "the connect-init watcher {{ $labels.instance }} does not answer Prometheus' scrape: nothing watches its worker group",
			Fix:     "read the watcher's log and its container's state (restarts, out of memory); check that it serves --metrics-addr on the scraped port"},
		{Alert: "ConnectInitDoctorError", Severity: metrics.Critical, For: 10 * time.Minute, Expr: catchAll(string(checks.Error)),
			Summary: "connect-init doctor finds {{ $labels.check }} ({{ $value }}) on the worker group {{ $labels.group_id }}: connect-init run would refuse to start a worker",
			Fix:     doctorFix},
		{Alert: "ConnectInitDoctorWarning", Severity: metrics.Warning, For: 30 * time.Minute, Expr: catchAll(string(checks.Warning)),
			Summary: "connect-init doctor finds {{ $labels.check }} ({{ $value }}) on the worker group {{ $labels.group_id }}",
			Fix:     doctorFix},
	}
}

// RulesFile renders AlertRules as a Prometheus rules file (one group).
func RulesFile() ([]byte, error) {
	return metrics.RulesFile("connect-init", rulesHeader, AlertRules())
}

const rulesHeader = `Generated from doctor.AlertRules (go test ./doctor -run TestRulesFile -update): edit the Go, not this file.
The rules read the metrics of connect-init doctor --watch --metrics-addr (docs/doctor.md#metrics);
the runbooks are docs/runbooks.md.`
