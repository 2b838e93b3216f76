package main

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The start-up profile lines (startup.ProfileMessage): every figure of a
// connect-init start comes with where its time went.

var (
	profileLineRe = regexp.MustCompile(`msg="start-up profile" (.*)`)
	profileKVRe   = regexp.MustCompile(`(\w+)=("[^"]*"|\S+)`)
)

// profile is one start-up profile line: where it was logged ("exec",
// "in-worker lock", "prepare"), and each step's milliseconds by key
// without the _ms suffix.
type profile struct {
	where string
	ms    map[string]float64
	keys  []string // in the line's order
}

// parseProfiles returns the profile lines of a log, in order.
func parseProfiles(log string) []profile {
	var out []profile
	for _, l := range strings.Split(log, "\n") {
		m := profileLineRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		p := profile{ms: map[string]float64{}}
		for _, kv := range profileKVRe.FindAllStringSubmatch(m[1], -1) {
			k, v := kv[1], strings.Trim(kv[2], `"`)
			if k == "where" {
				p.where = v
				continue
			}
			name, ok := strings.CutSuffix(k, "_ms")
			if !ok {
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			p.ms[name] = f
			p.keys = append(p.keys, name)
		}
		out = append(out, p)
	}
	return out
}

// profileSet gathers the profile lines of one kind (one where) over runs.
type profileSet struct {
	keys    []string
	samples map[string][]float64
	n       int
}

func (s *profileSet) add(p profile) {
	if s.samples == nil {
		s.samples = map[string][]float64{}
	}
	s.n++
	for _, k := range p.keys {
		if _, ok := s.samples[k]; !ok {
			s.keys = append(s.keys, k)
		}
		s.samples[k] = append(s.samples[k], p.ms[k])
	}
}

// breakdown is the medians of every key but the total, in the lines'
// order: "brokers 31 ms, topics 7.0 ms, ...".
func (s *profileSet) breakdown() string {
	var parts []string
	for _, k := range s.keys {
		if k == "total" {
			continue
		}
		part := fmt.Sprintf("%s %s", k, format(median(s.samples[k]), "ms"))
		if n := len(s.samples[k]); n < s.n {
			// A key only some starts log (lock_open and lock_wait
			// under CONNECT_INIT_LOCK_JOINS=first): say how many.
			part += fmt.Sprintf(" (%d of %d)", n, s.n)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// profiles groups lines by where, wheres sorted.
type profiles map[string]*profileSet

func (ps profiles) add(log string) {
	for _, p := range parseProfiles(log) {
		s := ps[p.where]
		if s == nil {
			s = &profileSet{}
			ps[p.where] = s
		}
		s.add(p)
	}
}

func (ps profiles) wheres() []string {
	var ws []string
	for w := range ps {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	return ws
}

// addRows adds one row per kind of line: the total as the samples, the
// median breakdown as the note.
func (ps profiles) addRows(rep *report, id, what string) {
	for i, w := range ps.wheres() {
		s := ps[w]
		rid := id + "-prof"
		if len(ps) > 1 {
			rid += strconv.Itoa(i + 1)
		}
		rep.add(rid, what+": start-up profile logged at "+w+" (total; medians of each step in the note)", "ms", s.samples["total"], s.breakdown())
	}
}
