package doctor

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

const dashboardPath = "../examples/monitoring/connect-init.dashboard.json"

// The shipped dashboard is DashboardPanels rendered.
func TestDashboardFile(t *testing.T) {
	want, err := DashboardFile()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(dashboardPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s differs from doctor.DashboardPanels: run go test ./doctor -run TestDashboardFile -update and review the change", dashboardPath)
	}
	var doc struct {
		Panels []struct {
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(want, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range doc.Panels {
		if p.Type != "row" {
			n++
			if len(p.Targets) == 0 {
				t.Errorf("a %s panel has no query", p.Type)
			}
		}
	}
	if n != len(DashboardPanels()) {
		t.Errorf("%d panels rendered, %d defined", n, len(DashboardPanels()))
	}
}

// describer records the names of the metrics registered on it.
type describer struct{ names map[string]bool }

func (d *describer) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 100)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		s := desc.String()
		if i := strings.Index(s, `fqName: "`); i >= 0 {
			d.names[strings.SplitN(s[i+len(`fqName: "`):], `"`, 2)[0]] = true
		}
	}
	return nil
}

func (d *describer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = d.Register(c)
	}
}

func (d *describer) Unregister(prometheus.Collector) bool { return false }

// Every metric a panel or a rule reads is one the watchers export:
// doctor's (as registered) or apply's (as its source names them).
func TestDashboardReadsExportedMetrics(t *testing.T) {
	d := &describer{names: map[string]bool{}}
	NewMetrics(d, "g")
	if !d.names["connect_init_group_members"] || !d.names["connect_init_doctor_looks_total"] {
		t.Fatalf("the describer read %v", d.names)
	}
	applySrc, err := os.ReadFile("../apply/metrics.go")
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, p := range DashboardPanels() {
		queries = append(queries, p.Queries...)
		if len(p.Legends) != len(p.Queries) {
			t.Errorf("%s: %d queries, %d legends", p.Title, len(p.Queries), len(p.Legends))
		}
	}
	for _, r := range allRules() {
		queries = append(queries, r.Expr)
	}
	for _, q := range queries {
		for _, n := range metricName.FindAllString(q, -1) {
			if !d.names[n] && !strings.Contains(string(applySrc), `"`+n+`"`) {
				t.Errorf("%s reads %s, which no watcher exports", q, n)
			}
		}
	}
	if rel := relatedAlerts([]string{"connect_init_coordinator_available"}); len(rel) != 1 || rel[0].Alert != "ConnectInitCoordinatorNotAvailable" {
		t.Errorf("alerts related to connect_init_coordinator_available: %v", rel)
	}
}
