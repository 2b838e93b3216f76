package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/internal/testbed"
)

// pluginCopies is how many plugin directories holding every Kafka jar the
// large layout of row 7 gets: with the classpath, some 370 jars and 88,000
// classes, the size of an image with a few dozen connector plugins.
const pluginCopies = 3

// benchPlugins is row 7: the plugins step's scan (plugins.Scan, no JVM) on
// the test bed's real Kafka jars as the worker's classpath, (a) with
// connect-file as the only plugin directory, as on apache/kafka with one
// plugin; (b) with pluginCopies more plugin directories of every Kafka jar
// and the javac-built plugin without manifests, which the scan reads in
// full; (c) doctor's complete scan (FullScan) of (b). Wall time and the
// process's CPU time per scan; the target is well under a second.
func benchPlugins(_ context.Context, b *bed, o options, rep *report) error {
	small, large, err := pluginLayouts(b)
	if err != nil {
		return err
	}
	want := []string{"FileStreamSource", "org.apache.kafka.connect.transforms.RegexRouter", "JsonConverter"}
	cases := []struct {
		id, what string
		opts     plugins.Options
	}{
		{"7a", "plugin scan (the plugins step): Kafka's jars on the classpath, connect-file as the plugin directory", plugins.Options{PluginPath: small, Want: want}},
		{"7b", fmt.Sprintf("plugin scan (the plugins step): the same plus %d plugin directories of every Kafka jar and one without manifests", pluginCopies), plugins.Options{PluginPath: small + "," + large, Want: want}},
		{"7c", "doctor's complete plugin scan (every class header) of 7b's layout", plugins.Options{PluginPath: small + "," + large, Want: want, FullScan: true}},
	}
	for _, c := range cases {
		c.opts.Classpath = []string{b.dist.Classpath()}
		var wall, cpu []float64
		var inv *plugins.Inventory
		for range max(o.runs, 3) {
			cpu0 := processCPU()
			start := time.Now()
			if inv, err = plugins.Scan(context.Background(), c.opts); err != nil {
				return err
			}
			wall = append(wall, ms(time.Since(start)))
			cpu = append(cpu, ms(processCPU()-cpu0))
		}
		note := fmt.Sprintf("%d jars, %d classes indexed, %d class headers read, %d plugins", inv.Stats.Files, inv.Stats.Classes, inv.Stats.HeadersRead, len(inv.Plugins))
		rep.add(c.id, c.what+": wall time", "ms", wall, note)
		rep.add(c.id+"-cpu", c.what+": CPU time (user+system)", "ms", cpu, "")
		progress("%s: median %.0f ms (%s)", c.id, median(wall), note)
	}
	return nil
}

// pluginLayouts makes row 7's plugin.path entries under the bench's work
// directory: small holds connect-file/, large holds pluginCopies
// directories of every Kafka jar (hard links where possible) and the
// javac-built plugin without manifests (testbed.NoManifestPlugin).
func pluginLayouts(b *bed) (small, large string, err error) {
	jars, err := filepath.Glob(filepath.Join(b.dist.LibDir, "*.jar"))
	if err != nil || len(jars) == 0 {
		return "", "", fmt.Errorf("plugin layouts: no jars in %s (%v)", b.dist.LibDir, err)
	}
	small, large = filepath.Join(b.dir, "plugins-small"), filepath.Join(b.dir, "plugins-large")
	for _, j := range jars {
		if strings.HasPrefix(filepath.Base(j), "connect-file-") {
			if err := linkInto(j, filepath.Join(small, "connect-file")); err != nil {
				return "", "", err
			}
		}
		for i := 1; i <= pluginCopies; i++ {
			if err := linkInto(j, filepath.Join(large, fmt.Sprintf("bulky-%d", i))); err != nil {
				return "", "", err
			}
		}
	}
	nomanDir, err := testbed.NoManifestPlugin(b.dist)
	if err != nil {
		return "", "", err
	}
	if err := linkInto(filepath.Join(nomanDir, "noman-2.5.0.jar"), filepath.Join(large, "noman")); err != nil {
		return "", "", err
	}
	return small, large, nil
}

// linkInto links (or copies) file into dir, creating dir.
func linkInto(file, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return linkOrCopy(file, filepath.Join(dir, filepath.Base(file)))
}

// processCPU is this process's user and system CPU time so far: on a
// shared machine the wall time counts the other tenants too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
