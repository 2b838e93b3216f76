//go:build integration

package plugins

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/internal/testbed"
)

// kafkaLibs is the directory of the Kafka jars the test bed downloads
// (testbed.Fetch: Maven Central, once per machine, into its CacheDir), of
// the suite's version (CITEST_KAFKA_VERSION, else
// testbed.DefaultVersion). Under the integration tag the real tests never
// skip: a machine without the jars fetches them.
func kafkaLibs(t *testing.T) (dir, version string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		t.Fatal(err)
	}
	return dist.LibDir, dist.Version
}

// TestScanRealKafka scans the real Kafka jars of the test bed as a worker's
// classpath, with the javac-built plugin on plugin.path: it finds
// FileStreamSourceConnector in connect-file-*.jar through its manifest,
// with kafka-clients' version, and on Kafka 4.1.1 exactly the plugins and
// aliases the real worker logged ("Added plugin", "Added alias",
// testdata/real).
func TestScanRealKafka(t *testing.T) {
	libs, version := kafkaLibs(t)
	pp := t.TempDir()
	mustSymlink(t, nomanJarDir(t), filepath.Join(pp, "noman"))
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
	if nm := inv.Lookup("com.example.noman.NoManifestSourceConnector", KindConnector); len(nm) != 1 || nm[0].Found != FoundScan {
		t.Errorf("the plugin without manifests: %+v", nm)
	}
	if version != "4.1.1" {
		t.Logf("Kafka %s: the plugin and alias lists of testdata/real are 4.1.1's; not compared", version)
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

// TestVerdictRealWorkers is the scenario on real data: this worker
// runs the test bed's Kafka jars without connect-file (an empty
// plugin.path), its peer is the real 4.1.1 worker captured in
// testdata/real; the verdict refuses it, naming
// org.apache.kafka.connect.file.FileStreamSourceConnector. On another
// Kafka version RegexRouter, which both load, is the same plugin in two
// versions: a warning naming both, never a refusal.
func TestVerdictRealWorkers(t *testing.T) {
	libs, version := kafkaLibs(t)
	jars, err := os.ReadDir(libs)
	if err != nil {
		t.Fatal(err)
	}
	var cp []string
	for _, j := range jars {
		if strings.HasSuffix(j.Name(), ".jar") && !strings.HasPrefix(j.Name(), "connect-file-") {
			cp = append(cp, libs+"/"+j.Name())
		}
	}
	uses := UsedClasses(map[string]map[string]string{"source": {"connector.class": "FileStreamSource", "transforms": "r", "transforms.r.type": "RegexRouter"}})
	inv, err := Scan(t.Context(), Options{Classpath: cp, Want: Classes(uses)})
	if err != nil {
		t.Fatal(err)
	}
	refuse, fs := CheckFail.Apply(Verdict(Input{Uses: uses, Local: inv, Peers: []Peer{realPeer(t)}}))
	if !refuse || len(fs) == 0 || fs[0].ID != IDPluginMissing || fs[0].Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Fatalf("refuse=%v:\n%s", refuse, render(fs))
	}
	t.Log(fs[0].String())
	want := 1
	if version != "4.1.1" {
		want = 2
		if fs[1].ID != IDPluginVersionDiffers || fs[1].Severity != checks.Warning || !strings.Contains(fs[1].Evidence, version) || !strings.Contains(fs[1].Evidence, "4.1.1") {
			t.Errorf("RegexRouter %s here and 4.1.1 on the peer:\n%s", version, render(fs))
		}
		t.Log(fs[1].String())
	}
	if len(fs) != want {
		t.Errorf("%d findings, want %d:\n%s", len(fs), want, render(fs))
	}
}

// readLines reads the non-blank lines of a testdata file.
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
