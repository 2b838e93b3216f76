package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "fill the README's bench markers from bench/results.md")

// TestReadmeFigures: the README quotes the figures of bench/results.md,
// the latest make bench run; -update fills them in.
func TestReadmeFigures(t *testing.T) {
	const results, readme = "../../bench/results.md", "../../README.md"
	if *update {
		if err := updateReadme(results, readme); err != nil {
			t.Fatal(err)
		}
	}
	md, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	figs, err := parseResults(string(md)).figures()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	want, err := fillMarkers(string(doc), figs)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(doc) {
		t.Errorf("README.md's figures differ from bench/results.md; run go test ./internal/bench -run TestReadmeFigures -update")
	}
}

const sampleResults = `# connect-init benchmarks

- machine: vm, 2 CPUs (nproc), AMD EPYC, 23.5 GiB RAM, load average at start 3.19 2.02 3.22
- run: 2026-12-04 15:41 UTC, took 20m; flags: -runs 10

| # | measurement | n | median | min | max | notes |
|---|---|---:|---:|---:|---:|---|
| 1a | prepare: wall time | 10 | 40.0 ms | 30.0 ms | 90.0 ms |  |
| 1b | api-versions | 10 | 1000 ms | 900 ms | 1100 ms |  |
| 1d | version | 10 | 5.00 ms | 4.00 ms | 6.00 ms |  |
| 1e | ratio | 1 | 25.0 × |  |  | the JVM tool only lists API versions |
| 1a-prof | profile | 10 | 35.0 ms | 30.0 ms | 80.0 ms | brokers 10.0 ms, topics 5.00 ms |
| 1a-rss | rss | 10 | 11.0 MiB | 10.9 MiB | 11.3 MiB | rusage maxrss |
| 1b-rss | rss | 10 | 92.1 MiB | 89.8 MiB | 104 MiB | rusage maxrss |
| 3a | bare | 2 | 15.0 s | 14.0 s | 16.0 s |  |
| 3a-gen | gen | 2 | 2 | 2 | 2 |  |
| 3a-h1 | h1 | 2 | 14.0 s | 13.0 s | 15.0 s |  |
| 3d | in-worker | 2 | 19.5 s | 19.0 s | 20.0 s |  |
| 3d-gen | gen | 2 | 4 | 4 | 4 |  |
| 3d-h1 | h1 | 2 | 13.0 s | 13.0 s | 13.0 s |  |
| 3a.8 | bare 8 | 2 | 30.0 s | 29.0 s | 31.0 s |  |
| 3a.8-gen | gen | 2 | 3 | 3 | 3 |  |
| 3d.8 | default 8 | 2 | 33.0 s | 32.0 s | 34.0 s |  |
| 3d.8-gen | gen | 2 | 3 | 3 | 3 |  |
| 4a | binary | 1 | 10.6 MiB |  |  | statically linked, stripped |
`

func TestFiguresFromResults(t *testing.T) {
	figs, err := parseResults(sampleResults).figures()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"run":     "2026-12-04 15:41 UTC (load average 3.19 at its start)",
		"prepare": "40.0 ms median (30.0 ms–90.0 ms; starting any process: 5.00 ms), 25.0 × faster",
		"bringup": "the others once the group is open) 19.5 s, 1.30× bare (4 generations",
		"binary":  "10.6 MiB",
	} {
		if !strings.Contains(figs[name], want) {
			t.Errorf("%s: %q lacks %q", name, figs[name], want)
		}
	}
	if !strings.Contains(figs["prepare"], "brokers 10.0 ms, topics 5.00 ms") {
		t.Errorf("prepare lacks its breakdown: %q", figs["prepare"])
	}
	if !strings.Contains(figs["bringup"], "8 workers: bare 30.0 s (3 generations); the shipped default") || !strings.Contains(figs["bringup"], "33.0 s, 1.10× bare (3 generations).") {
		t.Errorf("bring-up lacks the 8-worker sentence with bare beside: %q", figs["bringup"])
	}
	if strings.Contains(figs["bringup"], "before the exec") {
		t.Errorf("bring-up quotes a scenario the results lack: %q", figs["bringup"])
	}
	if _, err := parseResults(strings.Replace(sampleResults, "| 3a |", "| 3x |", 1)).figures(); err == nil {
		t.Error("figures without the bare row: no error")
	}
	doc := "a <!-- bench:binary -->old<!-- /bench:binary --> b"
	if _, err := fillMarkers(doc, figs); err != nil {
		t.Log(err) // the other figures have no marker here
	}
	got, err := fillMarkers(doc, map[string]string{"binary": figs["binary"]})
	if err != nil || got != "a <!-- bench:binary -->"+figs["binary"]+"<!-- /bench:binary --> b" {
		t.Errorf("fill: %q, %v", got, err)
	}
	if _, err := fillMarkers(doc+" <!-- bench:other --><!-- /bench:other -->", map[string]string{"binary": "x"}); err == nil {
		t.Error("a marker without a figure: no error")
	}
}
