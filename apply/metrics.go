package apply

import (
	"context"
	"net"
	"sort"
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
// served by ServeMetrics.
type Metrics struct {
	reg      *prometheus.Registry
	restarts *prometheus.CounterVec
	repairs  *prometheus.CounterVec
	lastLook prometheus.Gauge
	lookOK   prometheus.Gauge
	active   prometheus.Gauge

	mu sync.Mutex
	// states is the last look's status per connector (nil until a look
	// succeeded).
	states map[string]*Status
}

// stateNames are the runtime states every connector and task series
// carries, one of them 1: Connect's states (AbstractStatus.State) and
// STOPPED (KIP-875).
var stateNames = []string{"RUNNING", "PAUSED", "STOPPED", "FAILED", "UNASSIGNED", "RESTARTING"}

var (
	connectorStateDesc = prometheus.NewDesc("connect_init_watch_connector_state",
		"Whether the connector was in this state (1) or not (0) at the watcher's last successful look.", []string{"connector", "state"}, nil)
	taskStateDesc = prometheus.NewDesc("connect_init_watch_task_state",
		"Whether the task was in this state (1) or not (0) at the watcher's last successful look.", []string{"connector", "task", "state"}, nil)
)

// NewMetrics makes the watcher's metrics on a new metrics.NewRegistry.
func NewMetrics() *Metrics { return NewMetricsOn(metrics.NewRegistry()) }

// NewMetricsOn makes the watcher's metrics on reg, which another watcher of
// the same process may share.
func NewMetricsOn(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		reg: reg,
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "connect_init_watch_restarts_total",
			Help: "Restarts the watcher made of a connector's failed instances (POST /connectors/<name>/restart)."}, []string{"connector"}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "connect_init_watch_repairs_total",
			Help: "Drift the watcher put back, by action (create, update, delete)."}, []string{"connector", "action"}),
		lastLook: prometheus.NewGauge(prometheus.GaugeOpts{Name: "connect_init_watch_last_look_timestamp_seconds",
			Help: "When the watcher last read the connectors, successfully or not (Unix time)."}),
		lookOK: prometheus.NewGauge(prometheus.GaugeOpts{Name: "connect_init_watch_last_look_success",
			Help: "Whether the watcher's last read of the connectors succeeded (1) or failed (0)."}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "connect_init_watch_active",
			Help: "Whether this watcher is the one that acts (1) or stands by (0)."}),
	}
	m.reg.MustRegister(m.restarts, m.repairs, m.lastLook, m.lookOK, m.active, (*stateCollector)(m))
	return m
}

// Registry is the metrics' registry (for tests: testutil.GatherAndLint).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// stateCollector emits the connector and task states of the last look, so
// that a connector that is gone leaves no series behind.
type stateCollector Metrics

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- connectorStateDesc
	ch <- taskStateDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.states))
	for n := range c.states {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st := c.states[n]
		for _, s := range stateNames {
			ch <- prometheus.MustNewConstMetric(connectorStateDesc, prometheus.GaugeValue, one(st.Connector.State == s), n, s)
		}
		for _, t := range st.Tasks {
			for _, s := range stateNames {
				ch <- prometheus.MustNewConstMetric(taskStateDesc, prometheus.GaugeValue, one(t.State == s), n, strconv.Itoa(t.ID), s)
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
	m.lastLook.Set(float64(at.UnixNano()) / 1e9)
	if l == nil {
		m.lookOK.Set(0)
		return
	}
	m.lookOK.Set(1)
	states := map[string]*Status{}
	for _, d := range desired {
		if st := l.Status[d.Name]; st != nil {
			states[d.Name] = st
		}
	}
	m.mu.Lock()
	m.states = states
	m.mu.Unlock()
}

func (m *Metrics) setActive(a bool) {
	if m != nil {
		m.active.Set(one(a))
	}
}

func (m *Metrics) restarted(name string) {
	if m != nil {
		m.restarts.WithLabelValues(name).Inc()
	}
}

func (m *Metrics) repaired(name string, k Kind) {
	if m != nil {
		m.repairs.WithLabelValues(name, string(k)).Inc()
	}
}

// ServeMetrics serves m's registry at /metrics on addr until ctx ends
// (metrics.Serve).
func ServeMetrics(ctx context.Context, addr string, m *Metrics) (net.Addr, error) {
	return metrics.Serve(ctx, addr, m.reg)
}
