package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseProfiles(t *testing.T) {
	log := strings.Join([]string{
		`time=2026-12-04T15:26:11.239Z level=INFO msg="connect-init starting" version=dev`,
		`time=2026-12-04T15:26:11.239Z level=INFO msg="start-up profile" where=exec settings_ms=2 brokers_ms=30.5 group_ms=120 group_window_ms=100 lock_wait_ms=2500 total_ms=3.603227e+06`,
		`[2026-12-04 15:26:12,000] INFO Herder started`,
		`time=2026-12-04T15:26:13Z level=INFO msg="start-up profile" where="in-worker lock" brokers_ms=3 lock_ms=10 total_ms=14`,
	}, "\n")
	ps := parseProfiles(log)
	if len(ps) != 2 {
		t.Fatalf("%d lines, want 2: %+v", len(ps), ps)
	}
	if ps[0].where != "exec" || ps[0].ms["brokers"] != 30.5 || ps[0].ms["total"] != 3603227 || strings.Join(ps[0].keys, ",") != "settings,brokers,group,group_window,lock_wait,total" {
		t.Errorf("first line %+v", ps[0])
	}
	if ps[1].where != "in-worker lock" || ps[1].ms["lock"] != 10 {
		t.Errorf("second line %+v", ps[1])
	}
	set := profiles{}
	set.add(log)
	set.add(log)
	if got := set["exec"].breakdown(); got != "settings 2.00 ms, brokers 30.5 ms, group 120 ms, group_window 100 ms, lock_wait 2500 ms" {
		t.Errorf("breakdown %q", got)
	}
	var rep report
	set.addRows(&rep, "3d", "in-worker")
	if len(rep.rows) != 2 || rep.rows[0].id != "3d-prof1" || len(rep.rows[1].samples) != 2 {
		t.Errorf("rows %+v", rep.rows)
	}
}

func TestPickScenarios(t *testing.T) {
	scs := []*scenario{{id: "3a"}, {id: "3b"}, {id: "3d"}}
	if got := (options{}).pickScenarios(scs); len(got) != 3 {
		t.Errorf("default kept %d", len(got))
	}
	got := (options{scenarios: "3d, 3a"}).pickScenarios(scs)
	if len(got) != 2 || got[0].id != "3a" || got[1].id != "3d" {
		t.Errorf("picked %v", got)
	}
}

// -bringup-scenarios takes names too; -bringup-workers makes one scenario
// per size, keeping the ids of 4 and suffixing the others.
func TestBringupSizesAndNames(t *testing.T) {
	scs := []*scenario{{id: "3a", name: "bare", what: "bare: N × java"}, {id: "3d", name: "default", what: "N × run"}, {id: "3h", name: "each", what: "N × run each"}}
	picked := (options{scenarios: "bare,each"}).pickScenarios(scs)
	sizes, err := (options{workers: "4, 8"}).bringupSizes()
	if err != nil {
		t.Fatal(err)
	}
	got := sized(picked, sizes)
	var ids []string
	for _, sc := range got {
		ids = append(ids, fmt.Sprintf("%s/%d/%s", sc.id, sc.workers, sc.what))
	}
	want := []string{"3a/4/bare: 4 × java", "3h/4/4 × run each", "3a.8/8/bare: 8 × java", "3h.8/8/8 × run each"}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("sized = %v, want %v", ids, want)
	}
	for _, bad := range []string{"four", "1", "4,x"} {
		if _, err := (options{workers: bad}).bringupSizes(); err == nil || !strings.Contains(err.Error(), "-bringup-workers") {
			t.Errorf("-bringup-workers %q: %v", bad, err)
		}
	}
}

// A key only some lines have says how many.
func TestBreakdownCountsPartialKeys(t *testing.T) {
	s := &profileSet{}
	s.add(profile{ms: map[string]float64{"lock_wait": 10, "total": 1}, keys: []string{"lock_wait", "total"}})
	s.add(profile{ms: map[string]float64{"lock_open": 3, "total": 1}, keys: []string{"lock_open", "total"}})
	if got := s.breakdown(); got != "lock_wait 10.0 ms (1 of 2), lock_open 3.00 ms (1 of 2)" {
		t.Errorf("breakdown %q", got)
	}
}
