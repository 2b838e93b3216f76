package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// The README's figures are generated from bench/results.md, so that what
// the front door quotes is the latest run's, with bare beside each, and
// never a number typed by hand that the next run contradicts: `make bench`
// fills the README's markers after it writes the results, and
// TestReadmeFigures fails when they differ (go test ./internal/bench -run
// TestReadmeFigures -update fills them from the file as it is).
//
// A marker is a pair of HTML comments around the generated text:
//
//	<!-- bench:prepare -->...<!-- /bench:prepare -->

// resultRow is one row of the results table, its cells as written.
type resultRow struct {
	id, what, n, median, min, max, note string
}

// results is a parsed bench/results.md.
type results struct {
	run  string // the "- run: ..." line's date, e.g. "2026-12-04 15:41 UTC"
	load string // the load average at the run's start (1 min), "" if unknown
	rows map[string]resultRow
}

var (
	runLineRe = regexp.MustCompile(`(?m)^- run: ([^,]+),`)
	loadRe    = regexp.MustCompile(`load average at start ([0-9.]+)`)
)

func parseResults(md string) results {
	r := results{rows: map[string]resultRow{}}
	if m := runLineRe.FindStringSubmatch(md); m != nil {
		r.run = m[1]
	}
	if m := loadRe.FindStringSubmatch(md); m != nil {
		r.load = m[1]
	}
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if len(cells) < 7 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "#" || strings.HasPrefix(cells[0], "-") {
			continue
		}
		r.rows[cells[0]] = resultRow{id: cells[0], what: cells[1], n: cells[2], median: cells[3], min: cells[4], max: cells[5], note: cells[6]}
	}
	return r
}

// value is a row's median as a number (its unit dropped).
func (r results) value(id string) (float64, bool) {
	row, ok := r.rows[id]
	if !ok {
		return 0, false
	}
	f := strings.Fields(row.median)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// ratio is a/b of two rows' medians, as "1.27×".
func (r results) ratio(a, b string) string {
	x, ok1 := r.value(a)
	y, ok2 := r.value(b)
	if !ok1 || !ok2 || y == 0 {
		return "?"
	}
	return strconv.FormatFloat(x/y, 'f', 2, 64) + "×"
}

// figures are the README's generated texts, by marker name. A row the
// text needs that the results lack is an error: the README would quote a
// figure no run measured.
func (r results) figures() (map[string]string, error) {
	need := func(ids ...string) error {
		for _, id := range ids {
			if _, ok := r.rows[id]; !ok {
				return fmt.Errorf("bench/results.md has no row %s (run make bench with it)", id)
			}
		}
		return nil
	}
	out := map[string]string{}
	if err := need("1a", "1b", "1d", "1e", "1a-rss", "1b-rss", "3a", "3a-gen", "3a-h1", "4a"); err != nil {
		return nil, err
	}
	row := r.rows
	out["run"] = fmt.Sprintf("the `make bench` run of %s", r.run)
	if r.load != "" {
		out["run"] += fmt.Sprintf(" (load average %s at its start)", r.load)
	}
	prep := fmt.Sprintf("`connect-init prepare`, all cluster gates on a healthy 3-broker cluster: %s median (%s–%s; starting any process: %s), %s faster than `kafka-broker-api-versions` alone (%s), which only lists API versions; %s peak memory against the JVM tool's %s.",
		row["1a"].median, row["1a"].min, row["1a"].max, row["1d"].median, row["1e"].median, row["1b"].median, row["1a-rss"].median, row["1b-rss"].median)
	if p, ok := row["1a-prof"]; ok && p.note != "" {
		prep += " Where its time goes (medians): " + p.note + "."
	}
	out["prepare"] = prep
	bring := fmt.Sprintf("4 workers of a new Connect cluster started at once: bare, one Stable generation of 4 after %s (%s generations joined; first worker serving after %s)",
		row["3a"].median, row["3a-gen"].median, row["3a-h1"].median)
	variants := []struct{ id, name string }{
		{"3d", "the shipped default (the in-worker startup lock, the first worker alone, the others once the group is open)"},
		{"3h", "the in-worker lock with `CONNECT_INIT_LOCK_JOINS=each` (one join at a time)"},
		{"3b", "with the startup lock before the exec"},
		{"3c", "with `CONNECT_INIT_LOCK_PERMITS=4`"},
	}
	for _, v := range variants {
		if _, ok := row[v.id]; !ok {
			continue
		}
		bring += fmt.Sprintf("; %s %s, %s bare (%s generations; first worker serving after %s)", v.name, row[v.id].median, r.ratio(v.id, "3a"), row[v.id+"-gen"].median, row[v.id+"-h1"].median)
		if ho, ok := row[v.id+"-ho"]; ok {
			bring += fmt.Sprintf(", the lock handing over in %s median", ho.median)
		}
	}
	bring += "."
	// Larger groups (-bringup-workers 4,8) have rows 3a.8, 3d.8, ...: the
	// same sentence per size, bare first, so no figure stands without it.
	for _, n := range []int{8, 16} {
		bare := fmt.Sprintf("3a.%d", n)
		if _, ok := row[bare]; !ok {
			continue
		}
		bring += fmt.Sprintf(" %d workers: bare %s (%s generations)", n, row[bare].median, row[bare+"-gen"].median)
		for _, v := range variants {
			id := fmt.Sprintf("%s.%d", v.id, n)
			if _, ok := row[id]; !ok {
				continue
			}
			bring += fmt.Sprintf("; %s %s, %s bare (%s generations)", v.name, row[id].median, r.ratio(id, bare), row[id+"-gen"].median)
		}
		bring += "."
	}
	out["bringup"] = bring
	out["binary"] = fmt.Sprintf("Binary: %s (%s).", row["4a"].median, row["4a"].note)
	return out, nil
}

// fillMarkers replaces the text between each marker pair of doc with its
// figure; a marker without a figure, or a figure without a marker, is an
// error.
func fillMarkers(doc string, figs map[string]string) (string, error) {
	for name, text := range figs {
		open, closing := "<!-- bench:"+name+" -->", "<!-- /bench:"+name+" -->"
		i := strings.Index(doc, open)
		j := strings.Index(doc, closing)
		if i < 0 || j < i {
			return "", fmt.Errorf("no marker pair %s ... %s", open, closing)
		}
		doc = doc[:i+len(open)] + text + doc[j:]
	}
	if m := regexp.MustCompile(`<!-- bench:(\w+) -->`).FindAllStringSubmatch(doc, -1); m != nil {
		for _, x := range m {
			if _, ok := figs[x[1]]; !ok {
				return "", fmt.Errorf("marker bench:%s has no figure", x[1])
			}
		}
	}
	return doc, nil
}

// updateReadme fills readme's markers from the results file.
func updateReadme(resultsPath, readmePath string) error {
	md, err := os.ReadFile(resultsPath)
	if err != nil {
		return err
	}
	figs, err := parseResults(string(md)).figures()
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	out, err := fillMarkers(string(doc), figs)
	if err != nil {
		return fmt.Errorf("%s: %w", readmePath, err)
	}
	return os.WriteFile(readmePath, []byte(out), 0o644)
}
