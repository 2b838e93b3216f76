package plugins

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
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

// kafkaLibs finds the Kafka jars the repository's test bed downloads
// (internal/testbed: <repo>/.cache/kafka-<version>/libs, or under
// $CONNECT_INIT_CACHE), preferring 4.1.1, which testdata/real was captured
// with. Empty when none is there.
func kafkaLibs(t *testing.T) (dir, version string) {
	t.Helper()
	var caches []string
	if c := os.Getenv("CONNECT_INIT_CACHE"); c != "" {
		caches = append(caches, c)
	}
	caches = append(caches, filepath.Join("..", "..", ".cache"))
	for _, c := range caches {
		if _, err := os.Stat(filepath.Join(c, "kafka-4.1.1", "libs", ".complete")); err == nil {
			return filepath.Join(c, "kafka-4.1.1", "libs"), "4.1.1"
		}
		found, _ := filepath.Glob(filepath.Join(c, "kafka-*", "libs", ".complete"))
		sort.Strings(found)
		if len(found) > 0 {
			libs := filepath.Dir(found[len(found)-1])
			return libs, strings.TrimPrefix(filepath.Base(filepath.Dir(libs)), "kafka-")
		}
	}
	return "", ""
}

// TestScanRealKafka scans the real Kafka jars of the test bed as a worker's
// classpath, with the javac-built plugin on plugin.path: it finds
// FileStreamSourceConnector in connect-file-*.jar through its manifest,
// with kafka-clients' version, and on Kafka 4.1.1 exactly the plugins and
// aliases the real worker logged ("Added plugin", "Added alias",
// testdata/real).
func TestScanRealKafka(t *testing.T) {
	libs, version := kafkaLibs(t)
	if libs == "" {
		t.Skip("no Kafka jars in the test bed's cache (.cache/ or $CONNECT_INIT_CACHE): run an integration test once to fetch them")
	}
	pp := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join("testdata", "noman"))
	mustSymlink(t, abs, filepath.Join(pp, "noman"))
	inv, err := Scan(context.Background(), Options{PluginPath: pp, Classpath: []string{libs + "/*"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Kafka %s: %+v", version, inv.Stats)
	fs := inv.Lookup("FileStreamSource", KindConnector)
	if len(fs) != 1 || fs[0].Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" ||
		fs[0].Found != FoundManifest || !strings.HasPrefix(filepath.Base(fs[0].File), "connect-file-") ||
		fs[0].Version != version || fs[0].VersionFrom != VersionKafka {
		t.Fatalf("FileStreamSource resolves to %+v", fs)
	}
	if version != "4.1.1" {
		return
	}
	var classes []string
	for _, p := range inv.Plugins {
		if len(classes) == 0 || classes[len(classes)-1] != p.Class {
			classes = append(classes, p.Class)
		}
	}
	if want := readLines(t, "testdata/real/kafka-4.1.1-plugins.txt"); strings.Join(classes, "\n") != strings.Join(want, "\n") {
		t.Errorf("plugins differ from the real worker's:\n got %v\nwant %v", classes, want)
	}
	var aliases []string
	for a, c := range computeAliases(inv.Plugins) {
		aliases = append(aliases, a+" "+c)
	}
	sort.Strings(aliases)
	if want := readLines(t, "testdata/real/kafka-4.1.1-aliases.txt"); strings.Join(aliases, "\n") != strings.Join(want, "\n") {
		t.Errorf("aliases differ from the real worker's:\n got %v\nwant %v", aliases, want)
	}
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
