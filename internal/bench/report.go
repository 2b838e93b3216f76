package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// row is one line of the results table.
type row struct {
	id      string
	what    string
	unit    string // "ms", "s", "MiB", "", "×"
	samples []float64
	note    string
}

// report collects the rows of one run and the machine they ran on.
type report struct {
	started  time.Time
	machine  []string
	opts     options
	rows     []row
	problems []string
}

func (r *report) add(id, what, unit string, samples []float64, note string) {
	r.rows = append(r.rows, row{id: id, what: what, unit: unit, samples: samples, note: note})
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMax(xs []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func format(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	var s string
	switch {
	case unit == "" && v == math.Trunc(v):
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// markdown renders the machine header and the table.
func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString("# connect-init benchmarks\n\n")
	b.WriteString("Produced by `make bench` (`go run ./internal/bench`). Timings are medians of repeated runs measured in one session, the compared commands alternating; the machine may have been shared, so read ratios rather than absolute values.\n\n")
	for _, m := range r.machine {
		b.WriteString("- " + m + "\n")
	}
	fmt.Fprintf(&b, "- run: %s, took %s; flags: -runs %d, reaction %d, bring-up %d per scenario, %d lock contenders\n\n",
		r.started.UTC().Format("2006-01-02 15:04 MST"), time.Since(r.started).Round(time.Second), r.opts.runs, r.opts.reactRuns, r.opts.bringupRuns, r.opts.contenders)
	b.WriteString("| # | measurement | n | median | min | max | notes |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	rows := append([]row(nil), r.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].id[0] < rows[j].id[0] }) // by row number, in run order within
	for _, x := range rows {
		lo, hi := minMax(x.samples)
		med := median(x.samples)
		minS, maxS := format(lo, x.unit), format(hi, x.unit)
		if len(x.samples) == 1 {
			minS, maxS = "", ""
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s |\n", x.id, x.what, len(x.samples), format(med, x.unit), minS, maxS, x.note)
	}
	if len(r.problems) > 0 {
		b.WriteString("\nNot measured in this run:\n\n")
		for _, p := range r.problems {
			b.WriteString("- " + p + "\n")
		}
	}
	return b.String()
}

// describeMachine names the machine: CPUs, CPU model, memory, load, and the
// Go, Java and Kafka versions.
func describeMachine(ctx context.Context, b *bed) []string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown"
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
						mem = fmt.Sprintf("%.1f GiB", kb/1024/1024)
					}
				}
			}
		}
	}
	load := ""
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(data))
		if len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	java := "unknown"
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil {
		java = strings.TrimSpace(firstLineOf(string(out)))
	}
	host, _ := os.Hostname()
	return []string{
		fmt.Sprintf("machine: %s, %d CPUs (nproc), %s, %s RAM, load average at start %s", host, runtime.NumCPU(), cpu, mem, load),
		fmt.Sprintf("software: %s %s/%s, %s, Apache Kafka %s (KRaft, 3 combined broker+controller nodes on loopback, 256 MB heaps)", runtime.Version(), runtime.GOOS, runtime.GOARCH, java, b.dist.Version),
	}
}
