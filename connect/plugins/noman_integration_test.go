//go:build integration

package plugins

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// nomanJarDir is the plugin directory of the real plugin without
// ServiceLoader manifests, built from testdata/noman-src against the test
// bed's Kafka jars (testbed.NoManifestPlugin).
func nomanJarDir(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := testbed.NoManifestPlugin(dist)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScanJavacPlugin scans noman-2.5.0.jar, a plugin compiled by javac
// without manifests (nomanJarDir), and expects exactly the plugins a real
// Kafka 4.1.1 worker listed for it as "missing ServiceLoader manifests"
// under plugin.discovery=hybrid_warn: the connector behind an abstract
// base, the public nested transformations; not the abstract,
// package-private or helper classes.
func TestScanJavacPlugin(t *testing.T) {
	pp := t.TempDir()
	mustSymlink(t, nomanJarDir(t), filepath.Join(pp, "noman"))
	inv, err := Scan(context.Background(), Options{PluginPath: pp})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range inv.Plugins {
		got = append(got, p.Class+" "+string(p.Kind)+" "+p.Version+" "+string(p.VersionFrom)+" "+string(p.Found))
	}
	want := []string{
		"com.example.noman.NoManifestSourceConnector source 2.5.0 manifest scan",
		"com.example.noman.Upper$Key transformation 2.5.0 manifest scan",
		"com.example.noman.Upper$Value transformation 2.5.0 manifest scan",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plugins:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(inv.Problems) > 0 {
		t.Errorf("problems: %v", inv.Problems)
	}
}
