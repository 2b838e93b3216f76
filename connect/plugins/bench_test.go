package plugins

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchLayout generates a worker's plugin directories and classpath into
// dir: plugins plugin directories of jarsPer jars of classesPer classes
// each (every other directory without manifests, so the scan reads all its
// class headers), and a classpath of cpJars jars of cpClasses classes with
// manifests (Kafka's libs hold some 100 jars and 22,000 classes). Classes
// have realistic sizes (a few KB, most of it past the header).
func benchLayout(b *testing.B, dir string, plugins, jarsPer, classesPer, cpJars, cpClasses int) Options {
	b.Helper()
	for p := range plugins {
		for j := range jarsPer {
			pkg := fmt.Sprintf("vendor%d.lib%d", p, j)
			var classes []cls
			for c := range classesPer {
				classes = append(classes, cls{name: fmt.Sprintf("%s.C%d", pkg, c), super: "java.lang.Object", access: accPublic, pad: 40})
			}
			jr := jar{classes: classes, version: "1.0"}
			if j == 0 {
				jr.classes = append(jr.classes, pub(pkg+".MySourceConnector", svcSource), pub(pkg+".MyTransform", "java.lang.Object", svcTransform))
				if p%2 == 0 {
					jr.services = map[string][]string{svcSource: {pkg + ".MySourceConnector"}, svcTransform: {pkg + ".MyTransform"}}
				}
			}
			writeJar(b, filepath.Join(dir, "plugins", fmt.Sprintf("plugin%d", p), fmt.Sprintf("lib%d-1.%d.jar", j, j)), jr)
		}
	}
	for j := range cpJars {
		var classes []cls
		for c := range cpClasses {
			classes = append(classes, cls{name: fmt.Sprintf("cp%d.C%d", j, c), super: "java.lang.Object", access: accPublic, pad: 40})
		}
		conv := fmt.Sprintf("cp%d.MyConverter", j)
		classes = append(classes, pub(conv, "java.lang.Object", svcConverter))
		writeJar(b, filepath.Join(dir, "libs", fmt.Sprintf("cp%d-4.1.1.jar", j)), jar{classes: classes, services: map[string][]string{svcConverter: {conv}}})
	}
	return Options{PluginPath: filepath.Join(dir, "plugins"), Classpath: []string{filepath.Join(dir, "libs", "*")}, Want: []string{"vendor1.lib3.C7", "MySource"}}
}

// BenchmarkScan is the startup check's scan: 300 plugin jars in 30 plugin
// directories (half without manifests, read in full), plus a classpath of
// 100 jars and 20,000 classes indexed by name. Target: well under a
// second.
func BenchmarkScan(b *testing.B) {
	opts := benchLayout(b, b.TempDir(), 30, 10, 40, 100, 200)
	benchScan(b, opts)
}

// BenchmarkScanFull is doctor's complete scan (Options.FullScan) of the
// same layout: every class header of every jar, as Connect's reflective
// scan loads every class.
func BenchmarkScanFull(b *testing.B) {
	opts := benchLayout(b, b.TempDir(), 30, 10, 40, 100, 200)
	opts.FullScan = true
	benchScan(b, opts)
}

func benchScan(b *testing.B, opts Options) {
	b.Helper()
	var inv *Inventory
	cpu0 := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		var err error
		if inv, err = Scan(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// On a shared machine the wall time counts the other tenants too; the
	// process's CPU time per scan is the cost of the scan itself.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	if len(inv.Problems) > 0 || len(inv.Plugins) < 30+15+100 {
		b.Fatalf("%d plugins, problems %v", len(inv.Plugins), inv.Problems)
	}
	b.ReportMetric(float64(inv.Stats.Files), "jars")
	b.ReportMetric(float64(inv.Stats.Classes), "classes")
	b.ReportMetric(float64(inv.Stats.HeadersRead), "headers")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
