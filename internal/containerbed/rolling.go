package containerbed

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A rolling update's record: what `bedctl poll` printed while a Connect
// service was updated (make rolling, rolling_integration_test.go), and
// what it cost each connector and task. The record is Connect's own view
// (GET /connectors?expand=status, read from the status topic by whichever
// worker answered), so a state is as fresh as that worker's status store.

// Unit is one connector or task as GET /connectors?expand=status shows it.
type Unit struct {
	State  string
	Worker string
}

// Observation is one poll: when, and every unit's state by id ("name"
// for a connector, "name/3" for its task 3). Answered is false when no
// worker answered that round.
type Observation struct {
	At       time.Time
	Answered bool
	Units    map[string]Unit
}

// ParsePoll reads one line of `bedctl poll`.
func ParsePoll(line string) (Observation, error) {
	f := strings.SplitN(strings.TrimSpace(line), " ", 3)
	if len(f) < 2 {
		return Observation{}, fmt.Errorf("containerbed: poll line %q: want TIME ADDR [BODY]", line)
	}
	ms, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Observation{}, fmt.Errorf("containerbed: poll line %q: time: %w", line, err)
	}
	o := Observation{At: time.UnixMilli(ms)}
	if f[1] == "-" || len(f) < 3 {
		return o, nil
	}
	var body map[string]struct {
		Status struct {
			Connector struct {
				State  string `json:"state"`
				Worker string `json:"worker_id"`
			} `json:"connector"`
			Tasks []struct {
				ID     int    `json:"id"`
				State  string `json:"state"`
				Worker string `json:"worker_id"`
			} `json:"tasks"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(f[2]), &body); err != nil {
		return Observation{}, fmt.Errorf("containerbed: poll line at %d: body: %w", ms, err)
	}
	o.Answered = true
	o.Units = map[string]Unit{}
	for name, c := range body {
		o.Units[name] = Unit{c.Status.Connector.State, c.Status.Connector.Worker}
		for _, t := range c.Status.Tasks {
			o.Units[fmt.Sprintf("%s/%d", name, t.ID)] = Unit{t.State, t.Worker}
		}
	}
	return o, nil
}

// UnitCost is what an update cost one unit between the record's first and
// last observation.
type UnitCost struct {
	ID string
	// Outages is the number of times it left RUNNING; Down their total
	// and MaxDown the longest, each from the first observation not
	// RUNNING to the first RUNNING again (resolution: the poll interval).
	Outages       int
	Down, MaxDown time.Duration
	// Open is true when the record ends with the unit not RUNNING.
	Open bool
	// Moves counts the times it was RUNNING on another worker than the
	// last time it was RUNNING.
	Moves int
}

// Costs measures every unit wanted (ids as in Observation) over obs, in
// time order. Rounds nobody answered carry no information: an outage is
// measured between answered rounds. A unit missing from an answer counts
// as not RUNNING.
func Costs(obs []Observation, ids []string) []UnitCost {
	out := make([]UnitCost, 0, len(ids))
	for _, id := range ids {
		c := UnitCost{ID: id}
		var downSince time.Time
		down := false
		lastWorker := ""
		var last time.Time
		for _, o := range obs {
			if !o.Answered {
				continue
			}
			last = o.At
			u, ok := o.Units[id]
			running := ok && u.State == "RUNNING"
			switch {
			case running && down:
				d := o.At.Sub(downSince)
				c.Down += d
				c.MaxDown = max(c.MaxDown, d)
				down = false
			case !running && !down:
				down, downSince = true, o.At
				c.Outages++
			}
			if running {
				if lastWorker != "" && u.Worker != lastWorker {
					c.Moves++
				}
				lastWorker = u.Worker
			}
		}
		if down {
			d := last.Sub(downSince)
			c.Down += d
			c.MaxDown = max(c.MaxDown, d)
			c.Open = true
		}
		out = append(out, c)
	}
	return out
}

// AllRunning reports whether o answered with every id RUNNING.
func AllRunning(o Observation, ids []string) bool {
	if !o.Answered {
		return false
	}
	for _, id := range ids {
		if u, ok := o.Units[id]; !ok || u.State != "RUNNING" {
			return false
		}
	}
	return true
}

// CostSummary sums UnitCosts up for a table row: the tasks' (not the
// connectors') total, median and worst time not RUNNING, their longest
// single outage, and moves.
type CostSummary struct {
	Tasks                          int
	TaskDown, MedianDown, MaxDown  time.Duration
	LongestOutage                  time.Duration
	Outages, Moves, TasksWithMoves int
	ConnectorDown                  time.Duration
	Open                           int
}

// Summarize sums costs up; a task id has a "/".
func Summarize(costs []UnitCost) CostSummary {
	var s CostSummary
	var downs []time.Duration
	for _, c := range costs {
		if c.Open {
			s.Open++
		}
		if !strings.Contains(c.ID, "/") {
			s.ConnectorDown = max(s.ConnectorDown, c.Down)
			continue
		}
		s.Tasks++
		s.TaskDown += c.Down
		downs = append(downs, c.Down)
		s.MaxDown = max(s.MaxDown, c.Down)
		s.LongestOutage = max(s.LongestOutage, c.MaxDown)
		s.Outages += c.Outages
		s.Moves += c.Moves
		if c.Moves > 0 {
			s.TasksWithMoves++
		}
	}
	if len(downs) > 0 {
		sort.Slice(downs, func(i, j int) bool { return downs[i] < downs[j] })
		s.MedianDown = downs[len(downs)/2]
	}
	return s
}

// MedianDuration is the median of ds (the upper one of an even count), and
// false when ds is empty.
func MedianDuration(ds []time.Duration) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], true
}

// ProfileLines are connect-init's start-up profile lines in a container's
// log (startup.ProfileMessage), each as "where: key ms, …" in the line's
// own key order for text logs and sorted keys for JSON ones: the breakdown
// of where a replaced worker's start went.
func ProfileLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		e, ok := ParseEvent(l)
		if !ok || e["msg"] != "start-up profile" {
			continue
		}
		var keys []string
		for k := range e {
			if strings.HasSuffix(k, "_ms") {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return profileRank(keys[i]) < profileRank(keys[j]) })
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, strings.TrimSuffix(k, "_ms")+" "+e[k])
		}
		out = append(out, e["where"]+": "+strings.Join(parts, ", "))
	}
	return out
}

// profileOrder is the start-up profile's key order (startup.profileOrder,
// then total); an unknown key goes last.
var profileOrder = []string{"settings", "brokers", "topics", "coordinator", "group", "group_window", "plugins", "lock", "lock_wait", "lock_handoff", "peers", "total"}

func profileRank(key string) int {
	k := strings.TrimSuffix(key, "_ms")
	for i, o := range profileOrder {
		if o == k {
			return i
		}
	}
	return len(profileOrder)
}

// WatcherRejoin reads doctor --watch's measured rejoin from its /metrics
// text: the longest recent rejoin's bounds in seconds and the number of
// rejoins counted; ok is false when the watcher has counted none.
func WatcherRejoin(metricsText string) (least, most float64, total int, ok bool) {
	for _, l := range strings.Split(metricsText, "\n") {
		name, rest, found := strings.Cut(l, "{")
		if !found || strings.HasPrefix(l, "#") {
			continue
		}
		labels, val, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		switch {
		case name == "connect_init_group_rejoins_total":
			total = int(v)
		case name == "connect_init_group_rejoin_longest_seconds" && strings.Contains(labels, `bound="at_least"`):
			least = v
		case name == "connect_init_group_rejoin_longest_seconds" && strings.Contains(labels, `bound="at_most"`):
			most = v
		}
	}
	return least, most, total, total > 0
}
