package apply

import (
	"context"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connect-init/connect-init/metrics"
)

// Metrics are the watcher's Prometheus metrics (apply --watch
// --metrics-addr): what it last saw and did, for an alert on a FAILED task
// that Connect's own JMX metrics cannot carry (a FAILED task's MBeans are
// dropped, and the JMX exporter exports no connector state). Registered on
// connect-init's one registry (package metrics, shared with doctor --watch),
// served by ServeMetrics. Every series carries the worker group as the
// label group_id once SetGroupID told it (two clusters' connectors of one
// name are two series), and a watcher that stands by exports only that it
// does (connect_init_apply_active 0) and its counters: the states it saw
// when it last acted are the active watcher's to tell.
type Metrics struct {
	reg *prometheus.Registry

	mu       sync.Mutex
	groupID  string
	restarts map[string]float64
	repairs  map[[2]string]float64
	active   bool
	// seen is false until a look while active, and again while standing
	// by; lookAt and lookOK are the last look's.
	seen   bool
	lookAt time.Time
	lookOK bool
	// states is the last successful look's status per connector.
	states map[string]*Status
}

// stateNames are the runtime states every connector and task series
// carries, one of them 1: Connect's states (AbstractStatus.State) and
// STOPPED (KIP-875).
var stateNames = []string{"RUNNING", "PAUSED", "STOPPED", "FAILED", "UNASSIGNED", "RESTARTING"}

// groupLabel is the label of the worker group, as doctor --watch's series
// carry it.
const groupLabel = "group_id"

func applyDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{groupLabel}, labels...), nil)
}

var (
	connectorStateDesc = applyDesc("connect_init_apply_connector_state",
		"Whether the connector was in this state (1) or not (0) at the active watcher's last successful look.", "connector", "state")
	taskStateDesc = applyDesc("connect_init_apply_task_state",
		"Whether the task was in this state (1) or not (0) at the active watcher's last successful look.", "connector", "task", "state")
	restartsDesc = applyDesc("connect_init_apply_restarts_total",
		"Restarts the watcher made of a connector's failed instances (POST /connectors/<name>/restart).", "connector")
	repairsDesc = applyDesc("connect_init_apply_repairs_total",
		"Drift the watcher put back, by action (create, update, delete).", "connector", "action")
	lastLookDesc = applyDesc("connect_init_apply_last_look_timestamp_seconds",
		"When the active watcher last read the connectors, successfully or not (Unix time).")
	lookOKDesc = applyDesc("connect_init_apply_last_look_success",
		"Whether the active watcher's last read of the connectors succeeded (1) or failed (0).")
	activeDesc = applyDesc("connect_init_apply_active",
		"Whether this watcher is the one that acts (1) or stands by (0).")
)

// NewMetrics makes the watcher's metrics on a new metrics.NewRegistry.
func NewMetrics() *Metrics { return NewMetricsOn(metrics.NewRegistry()) }

// NewMetricsOn makes the watcher's metrics on reg, which another watcher of
// the same process may share.
func NewMetricsOn(reg *prometheus.Registry) *Metrics {
	m := &Metrics{reg: reg, restarts: map[string]float64{}, repairs: map[[2]string]float64{}}
	m.reg.MustRegister((*collector)(m))
	return m
}

// SetGroupID names the worker group whose connectors the watcher keeps
// (group.id): the label group_id of every series. Until it is called
// the label is empty (apply --url without worker settings knows no group).
func (m *Metrics) SetGroupID(id string) {
	if m != nil {
		m.mu.Lock()
		m.groupID = id
		m.mu.Unlock()
	}
}

// Registry is the metrics' registry (for tests: testutil.GatherAndLint).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// collector emits the metrics from the watcher's last look and its
// counts, so that a connector that is gone leaves no series behind and a
// watcher that stands by shows no state.
type collector Metrics

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connectorStateDesc, taskStateDesc, restartsDesc, repairsDesc, lastLookDesc, lookOKDesc, activeDesc} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, append([]string{c.groupID}, labels...)...)
	}
	emit(activeDesc, prometheus.GaugeValue, one(c.active))
	for _, n := range sortedKeys(c.restarts) {
		emit(restartsDesc, prometheus.CounterValue, c.restarts[n], n)
	}
	for k, v := range c.repairs {
		emit(repairsDesc, prometheus.CounterValue, v, k[0], k[1])
	}
	if !c.active || !c.seen {
		return
	}
	emit(lastLookDesc, prometheus.GaugeValue, float64(c.lookAt.UnixNano())/1e9)
	emit(lookOKDesc, prometheus.GaugeValue, one(c.lookOK))
	for _, n := range sortedKeys(c.states) {
		st := c.states[n]
		for _, s := range stateNames {
			emit(connectorStateDesc, prometheus.GaugeValue, one(st.Connector.State == s), n, s)
		}
		for _, t := range st.Tasks {
			for _, s := range stateNames {
				emit(taskStateDesc, prometheus.GaugeValue, one(t.State == s), n, strconv.Itoa(t.ID), s)
			}
		}
	}
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// The watcher's hooks; each is a no-op on a nil *Metrics.

func (m *Metrics) looked(at time.Time, l *Listing, desired []Connector) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen, m.lookAt, m.lookOK = true, at, l != nil
	if l == nil {
		return
	}
	m.states = map[string]*Status{}
	for _, d := range desired {
		if st := l.Status[d.Name]; st != nil {
			m.states[d.Name] = st
		}
	}
}

// setActive records whether this watcher acts; one that stands by
// forgets what it saw, so that its scrape shows no connector state that
// the active watcher may since have changed.
func (m *Metrics) setActive(a bool) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active = a
	if !a {
		m.seen, m.states = false, nil
	}
}

func (m *Metrics) restarted(name string) {
	if m != nil {
		m.mu.Lock()
		m.restarts[name]++
		m.mu.Unlock()
	}
}

func (m *Metrics) repaired(name string, k Kind) {
	if m != nil {
		m.mu.Lock()
		m.repairs[[2]string{name, string(k)}]++
		m.mu.Unlock()
	}
}

// ServeMetrics serves m's registry at /metrics on addr until ctx ends
// (metrics.Serve).
func ServeMetrics(ctx context.Context, addr string, m *Metrics) (net.Addr, error) {
	return metrics.Serve(ctx, addr, m.reg)
}

// AlertRules are the rules on the watcher's metrics shipped in
// examples/monitoring/connect-init-apply.rules.yml (RulesFile). Only the
// active watcher of a group exports states, and max by group keeps one
// series when a watcher is replaced while the old one is still scraped.
func AlertRules() []metrics.Rule {
	return []metrics.Rule{
		{Alert: "ConnectInitConnectorFailed", Severity: metrics.Critical, For: 5 * time.Minute,
			Expr:    `max by (group_id, connector) (connect_init_apply_connector_state{state="FAILED"}) == 1`,
			Summary: "the connector {{ $labels.connector }} of the worker group {{ $labels.group_id }} is FAILED",
			Fix:     "the watcher restarts it with a growing backoff (connect_init_apply_restarts_total) and gives up after --max-restarts; read GET /connectors/{{ $labels.connector }}/status for the trace, fix its cause, then POST /connectors/{{ $labels.connector }}/restart?includeTasks=true&onlyFailed=true"},
		{Alert: "ConnectInitTaskFailed", Severity: metrics.Critical, For: 5 * time.Minute,
			Expr:    `max by (group_id, connector, task) (connect_init_apply_task_state{state="FAILED"}) == 1`,
			Summary: "task {{ $labels.task }} of the connector {{ $labels.connector }} (worker group {{ $labels.group_id }}) is FAILED",
			Fix:     "the watcher restarts it with a growing backoff (connect_init_apply_restarts_total) and gives up after --max-restarts; read GET /connectors/{{ $labels.connector }}/status for the trace, fix its cause, then POST /connectors/{{ $labels.connector }}/restart?includeTasks=true&onlyFailed=true"},
		{Alert: "ConnectInitApplyWatcherNotLooking", Severity: metrics.Warning, For: 5 * time.Minute,
			Expr:    `connect_init_apply_active == 1 and (time() - connect_init_apply_last_look_timestamp_seconds > 300 or connect_init_apply_last_look_success == 0)`,
			Summary: "the active apply watcher {{ $labels.instance }} of the worker group {{ $labels.group_id }} cannot read the connectors: nothing restarts a failed task or puts drift back",
			Fix:     "read the watcher's log (watch: cannot read the connectors, with the cause): the worker's REST API is down, refuses the credentials, or is unreachable from the watcher"},
		{Alert: "ConnectInitApplyNoActiveWatcher", Severity: metrics.Warning, For: 10 * time.Minute,
			Expr:    `max by (group_id) (connect_init_apply_active) == 0`,
			Summary: "every apply watcher of the worker group {{ $labels.group_id }} stands by: the group's leader runs none",
			Fix:     "set CONNECT_INIT_APPLY_WATCH=true (with CONNECT_INIT_CONNECTORS_DIR) on every worker of the cluster: the watcher beside the group's leader acts"},
	}
}

// RulesFile renders AlertRules as a Prometheus rules file (one group).
func RulesFile() ([]byte, error) {
	return metrics.RulesFile("connect-init-apply", `Generated from apply.AlertRules (go test ./apply -run TestRulesFile -update): edit the Go, not this file.
The rules read the metrics of connect-init apply --watch --metrics-addr (docs/apply.md);
the runbooks are docs/runbooks.md.`, AlertRules())
}
