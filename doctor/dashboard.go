package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/metrics"
)

// Panel is one panel of the Grafana dashboard shipped in
// examples/monitoring/ (DashboardFile): its queries read the watchers'
// metrics, filtered by the dashboard's group_id variable.
type Panel struct {
	Title string
	// Row is the dashboard row the panel sits in.
	Row string
	// Queries are PromQL with the Grafana variables $group_id and
	// $__rate_interval; Legends their legend formats.
	Queries []string
	Legends []string
	Unit    string
	Help    string
}

// groupVar is the dashboard's worker group variable, in a label matcher.
const groupVar = `group_id=~"$group_id"`

// DashboardPanels are the dashboard's panels: the group's state and
// members (foreign and unverified), rebalances, the internal topics, the
// coordinator, the lock's queue, the findings, the connectors' and tasks'
// states, and the alerts of the shipped rules.
func DashboardPanels() []Panel {
	g := groupVar
	return []Panel{
		{Row: "Worker group", Title: "Group state", Unit: "none", Help: "The worker group's state at each look (1 for the current one).",
			Queries: []string{`max by (group_id, state) (connect_init_group_state{` + g + `}) == 1`}, Legends: []string{"{{group_id}} {{state}}"}},
		{Row: "Worker group", Title: "Members", Unit: "none", Help: "Members of the worker group; foreign ones belong to another Connect cluster, unverified ones are neither proven ours nor foreign.",
			Queries: []string{`connect_init_group_members{` + g + `}`, `connect_init_group_foreign_members{` + g + `}`, `connect_init_group_unverified_members{` + g + `}`},
			Legends: []string{"{{group_id}} members", "{{group_id}} foreign", "{{group_id}} unverified"}},
		{Row: "Worker group", Title: "Rebalances", Unit: "none", Help: "Rebalances of the worker group: exact (the generation's increments) when the watcher may read the group's __consumer_offsets partition, else what the looks' windows counted, a lower bound (connect_init_group_rebalances_source says which).",
			Queries: []string{`increase(connect_init_group_rebalances_total{` + g + `}[$__rate_interval])`}, Legends: []string{"{{group_id}}"}},
		{Row: "Worker group", Title: "Rejoins", Unit: "none", Help: "Workers the watcher saw leave the group and come back (connect_init_group_rejoin_longest_seconds holds the longest recent one; scheduled.rebalance.max.delay.ms should exceed it).",
			Queries: []string{`connect_init_group_rejoins_total{` + g + `}`}, Legends: []string{"{{group_id}} rejoins measured"}},
		{Row: "Kafka", Title: "Internal topics", Unit: "none", Help: "Connect's config, offset and status topics: in-sync replicas (fewest of any partition), under-replicated and leaderless partitions.",
			Queries: []string{`connect_init_internal_topic_in_sync_replicas{` + g + `}`, `connect_init_internal_topic_under_replicated_partitions{` + g + `}`,
				`connect_init_internal_topic_leaderless_partitions{` + g + `}`},
			Legends: []string{"{{role}} in sync", "{{role}} under-replicated", "{{role}} leaderless"}},
		{Row: "Kafka", Title: "Coordinator", Unit: "none", Help: "Whether the group's coordinator is found, and its __consumer_offsets partition's replicas and in-sync replicas.",
			Queries: []string{`connect_init_coordinator_available{` + g + `}`, `connect_init_coordinator_partition_in_sync_replicas{` + g + `}`,
				`connect_init_coordinator_partition_replicas{` + g + `}`},
			Legends: []string{"{{group_id}} available", "partition {{partition}} in sync", "partition {{partition}} replicas"}},
		{Row: "Kafka", Title: "Brokers", Unit: "none", Help: "Brokers in the metadata, answering from the watcher, and expected.",
			Queries: []string{`connect_init_brokers_registered{` + g + `}`, `connect_init_brokers_reachable{` + g + `}`, `connect_init_brokers_expected{` + g + `}`},
			Legends: []string{"registered", "reachable", "expected"}},
		{Row: "Startup lock", Title: "Lock queue", Unit: "none", Help: "Live holders and waiters of the group's startup lock queue.",
			Queries: []string{`connect_init_lock_queue_length{` + g + `}`, `connect_init_lock_waiters{` + g + `}`}, Legends: []string{"{{group_id}} queue", "{{group_id}} waiters"}},
		{Row: "Startup lock", Title: "Lock holder age", Unit: "s", Help: "How long the oldest holder has held the lock, against CONNECT_INIT_LOCK_LEASE.",
			Queries: []string{`connect_init_lock_holder_age_seconds{` + g + `}`, `connect_init_lock_hold_lease_seconds{` + g + `}`}, Legends: []string{"{{group_id}} holder age", "{{group_id}} lease"}},
		{Row: "Watcher", Title: "Findings", Unit: "none", Help: "connect-init doctor's findings by severity (connect-init doctor shows each with its evidence and fix).",
			Queries: []string{`sum by (group_id, finding_severity) (connect_init_doctor_findings{` + g + `})`}, Legends: []string{"{{group_id}} {{finding_severity}}"}},
		{Row: "Watcher", Title: "Looks", Unit: "s", Help: "Seconds since the watcher's last successful look, and each look's duration.",
			Queries: []string{`time() - connect_init_doctor_last_successful_look_timestamp_seconds{` + g + `}`, `connect_init_doctor_look_duration_seconds{` + g + `}`},
			Legends: []string{"{{group_id}} since the last successful look", "{{group_id}} look duration"}},
		{Row: "Watcher", Title: "Alerts", Unit: "none", Help: "The shipped rules' alerts, pending and firing.",
			Queries: []string{fmt.Sprintf(`ALERTS{alertname=~%q}`, alertNames())}, Legends: []string{"{{alertname}} {{alertstate}}"}},
		{Row: "Connectors (apply --watch)", Title: "Connector states", Unit: "none", Help: "Connectors by state, as the active apply watcher last saw them.",
			Queries: []string{`count by (group_id, state) (max by (group_id, connector, state) (connect_init_apply_connector_state{` + g + `}) == 1)`},
			Legends: []string{"{{group_id}} {{state}}"}},
		{Row: "Connectors (apply --watch)", Title: "Task states", Unit: "none", Help: "Tasks by state, as the active apply watcher last saw them.",
			Queries: []string{`count by (group_id, state) (max by (group_id, connector, task, state) (connect_init_apply_task_state{` + g + `}) == 1)`},
			Legends: []string{"{{group_id}} {{state}}"}},
		{Row: "Connectors (apply --watch)", Title: "Restarts", Unit: "none", Help: "Restarts the apply watcher made of failed connectors and tasks.",
			Queries: []string{`increase(connect_init_apply_restarts_total{` + g + `}[$__rate_interval])`}, Legends: []string{"{{connector}}"}},
	}
}

// allRules are doctor's and apply's rules: the dashboard's source besides
// its panels.
func allRules() []metrics.Rule { return append(AlertRules(), apply.AlertRules()...) }

// alertNames is the regular expression of every shipped alert's name.
func alertNames() string {
	var names []string
	for _, r := range allRules() {
		names = append(names, r.Alert)
	}
	return strings.Join(names, "|")
}

var metricName = regexp.MustCompile(`\bconnect_init_[a-z_]+`)

// relatedAlerts are the rules that read one of the metrics queries read.
func relatedAlerts(queries []string) []metrics.Rule {
	var names []string
	for _, q := range queries {
		names = append(names, metricName.FindAllString(q, -1)...)
	}
	var out []metrics.Rule
	for _, r := range allRules() {
		for _, n := range metricName.FindAllString(r.Expr, -1) {
			if slices.Contains(names, n) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// DashboardFile renders DashboardPanels as a Grafana dashboard (JSON
// model, Prometheus data source chosen by the variable datasource). Each
// panel's description names the shipped alerts that read its metrics,
// with their runbooks, so that the dashboard and the rules stay one.
func DashboardFile() ([]byte, error) {
	ds := map[string]string{"type": "prometheus", "uid": "${datasource}"}
	var panels []map[string]any
	row, y, x := "", 0, 0
	for _, p := range DashboardPanels() {
		if p.Row != row {
			if x > 0 {
				y += 8
			}
			row, x = p.Row, 0
			panels = append(panels, map[string]any{"type": "row", "title": row, "collapsed": false, "id": len(panels) + 1,
				"gridPos": map[string]int{"h": 1, "w": 24, "x": 0, "y": y}, "panels": []any{}})
			y++
		}
		var targets []map[string]any
		for i, q := range p.Queries {
			targets = append(targets, map[string]any{"refId": string(rune('A' + i)), "datasource": ds, "expr": q, "legendFormat": p.Legends[i]})
		}
		desc := p.Help
		if rel := relatedAlerts(p.Queries); len(rel) > 0 {
			var links []string
			for _, r := range rel {
				links = append(links, fmt.Sprintf("[%s](%s)", r.Alert, r.Runbook()))
			}
			desc += "\n\nAlerts on these series: " + strings.Join(links, ", ") + "."
		}
		panels = append(panels, map[string]any{"type": "timeseries", "title": p.Title, "description": desc, "id": len(panels) + 1, "datasource": ds,
			"gridPos": map[string]int{"h": 8, "w": 12, "x": x, "y": y}, "targets": targets,
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.Unit}, "overrides": []any{}},
			"options":     map[string]any{"legend": map[string]any{"displayMode": "list", "placement": "bottom", "showLegend": true}}})
		if x == 12 {
			x, y = 0, y+8
		} else {
			x = 12
		}
	}
	groupQuery := "label_values(connect_init_doctor_look_success, group_id)"
	doc := map[string]any{
		"title": "connect-init", "uid": "connect-init", "schemaVersion": 39, "version": 1, "editable": true,
		"description": "Generated from doctor.DashboardPanels (go test ./doctor -run TestDashboardFile -update): the worker groups connect-init's watchers see. Edit the Go, not this file.",
		"tags":        []string{"kafka-connect", "connect-init"}, "time": map[string]string{"from": "now-6h", "to": "now"}, "refresh": "30s",
		"templating": map[string]any{"list": []map[string]any{
			{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			{"name": "group_id", "label": "Worker group", "type": "query", "datasource": ds, "definition": groupQuery,
				"query": map[string]string{"query": groupQuery, "refId": "group_id"}, "includeAll": true, "allValue": ".*", "multi": true, "refresh": 2, "sort": 1},
		}},
		"panels": panels,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("render the dashboard: %w", err)
	}
	return b.Bytes(), nil
}
