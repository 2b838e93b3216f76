package plugins

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestScanJavacPlugin scans testdata/noman/noman-2.5.0.jar, a plugin
// compiled by javac 17 without manifests (testdata/noman-src), and expects
// exactly the plugins a real Kafka 4.1.1 worker listed for it as "missing
// ServiceLoader manifests" under plugin.discovery=hybrid_warn: the
// connector behind an abstract base, the public nested transformations;
// not the abstract, package-private or helper classes.
func TestScanJavacPlugin(t *testing.T) {
	pp := t.TempDir()
	abs, err := filepath.Abs(filepath.Join("testdata", "noman"))
	if err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, abs, filepath.Join(pp, "noman"))
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
