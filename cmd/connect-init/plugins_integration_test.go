//go:build integration

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/internal/testbed"
)

// The plugins step (issue 24) on real workers of the shared cluster. The
// test bed's classpath holds every Kafka jar, connect-file included, so
// these workers get a classpath without it (pluginLibs) and, when they
// should have FileStream*, connect-file as a plugin directory on
// plugin.path (pluginPath).

const fileSourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"

var (
	pluginBedOnce sync.Once
	pluginLibs    string // Kafka's jars but connect-file, as links
	pluginPath    string // a plugin.path holding connect-file/
	pluginBedErr  error
)

// pluginBed makes the classpath without connect-file and the plugin.path
// with it, once per package.
func pluginBed(t *testing.T) (libs, path string) {
	t.Helper()
	pluginBedOnce.Do(func() {
		pluginLibs, pluginPath = filepath.Join(workDir, "plugins-libs"), filepath.Join(workDir, "plugins-path")
		pluginBedErr = splitConnectFile(cluster.Dist.LibDir, pluginLibs, filepath.Join(pluginPath, "connect-file"))
	})
	if pluginBedErr != nil {
		t.Fatal(pluginBedErr)
	}
	return pluginLibs, pluginPath
}

// splitConnectFile links every jar of libDir into libs but connect-file's,
// which is copied into plugin, a plugin directory of its own.
func splitConnectFile(libDir, libs, plugin string) error {
	jars, err := filepath.Glob(filepath.Join(libDir, "*.jar"))
	if err != nil || len(jars) == 0 {
		return fmt.Errorf("no jars in %s: %v", libDir, err)
	}
	for _, d := range []string{libs, plugin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	found := false
	for _, j := range jars {
		if strings.HasPrefix(filepath.Base(j), "connect-file-") {
			data, err := os.ReadFile(j)
			if err != nil {
				return err
			}
			found = true
			if err := os.WriteFile(filepath.Join(plugin, filepath.Base(j)), data, 0o644); err != nil {
				return err
			}
			continue
		}
		if err := os.Symlink(j, filepath.Join(libs, filepath.Base(j))); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no connect-file jar in %s", libDir)
	}
	return nil
}

// pluginWorker is the spec of a worker of group whose classpath lacks
// connect-file and whose plugin.path is path ("" for none).
func pluginWorker(t *testing.T, group map[string]string, name, path string) *testbed.WorkerSpec {
	t.Helper()
	libs, _ := pluginBed(t)
	extra := map[string]string{}
	for k, v := range group {
		extra[k] = v
	}
	if path != "" {
		extra["plugin.path"] = path
	}
	props, err := cluster.WorkerProps(extra)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(group["group.id"]+"-"+name, props, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range spec.Argv {
		if a == cluster.Dist.Classpath() {
			spec.Argv[i] = filepath.Join(libs, "*")
		}
	}
	return spec
}

// startPluginWorker starts spec directly (no connect-init) and waits until
// it is healthy.
func startPluginWorker(ctx context.Context, t *testing.T, spec *testbed.WorkerSpec) *testbed.Worker {
	t.Helper()
	w, err := cluster.StartWorker(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(20 * time.Second) })
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// runPluginWorker starts spec through `connect-init run`; the caller waits
// for its exit or its health.
func runPluginWorker(t *testing.T, spec *testbed.WorkerSpec, env ...string) *testbed.Worker {
	t.Helper()
	argv := append([]string{binary, "run", "--"}, spec.Argv...)
	w, err := cluster.StartWorkerCommand(spec, argv, connectInitEnv(spec.Props, env...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(20 * time.Second) })
	return w
}

// assertPluginRefusal checks that w exited 1 before the exec, with one
// plugins-gate line naming each want.
func assertPluginRefusal(ctx context.Context, t *testing.T, w *testbed.Worker, wants ...string) string {
	t.Helper()
	code, err := w.ExitCode(ctx)
	if err != nil {
		t.Fatalf("connect-init did not exit: %v; log:\n%s", err, logTail(w.Log(), 4000))
	}
	log := w.Log()
	if code != 1 {
		t.Fatalf("connect-init exited %d, want 1; log:\n%s", code, logTail(log, 4000))
	}
	for _, never := range []string{"starting the worker", "Kafka Connect worker initializ", "Kafka version"} {
		if strings.Contains(log, never) {
			t.Errorf("the worker started (log has %q)", never)
		}
	}
	line := firstLine(log, "plugins gate:")
	if !strings.Contains(line, `msg="gate failed"`) || !strings.Contains(line, "gate=plugins") {
		t.Errorf("no plugins gate failure line:\n%s", logTail(log, 4000))
	}
	for _, want := range wants {
		if !strings.Contains(line, want) {
			t.Errorf("the refusal lacks %q: %s", want, line)
		}
	}
	return line
}

// deleteConnector deletes a connector through the REST API.
func deleteConnector(ctx context.Context, t *testing.T, base, name string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/connectors/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE connector %s: HTTP %d", name, resp.StatusCode)
	}
}

// TestPluginsOddWorkerRefused is issue 24's scenario: w1 has connect-file
// on its plugin.path and runs a FileStreamSource connector; w2, started
// through `connect-init run` with no plugin.path, is refused naming the
// class and never joins. Then the same connector defined by its short
// alias; then w3, which has connect-file like w1, passes and joins.
func TestPluginsOddWorkerRefused(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "plugins")
	_, path := pluginBed(t)
	w1 := startPluginWorker(ctx, t, pluginWorker(t, group, "w1", path))
	input := filepath.Join(w1.Spec.Dir, "input.txt")
	if err := os.WriteFile(input, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	putConnector(ctx, t, w1.Spec.RESTURL, "file-source", map[string]string{"connector.class": fileSourceClass, "tasks.max": "1", "file": input, "topic": group["group.id"] + "-lines"})
	waitConnectorRunning(ctx, t, w1.Spec.RESTURL, "file-source")
	t.Logf("w1 runs file-source after %s", time.Since(start).Round(time.Millisecond))

	t.Run("full class name", func(t *testing.T) {
		began := time.Now()
		w2 := runPluginWorker(t, pluginWorker(t, group, "w2", ""))
		line := assertPluginRefusal(ctx, t, w2, fileSourceClass, `connector \"file-source\"`, "connector.class="+fileSourceClass,
			w1.Spec.RESTURL, "version "+cluster.Dist.Version, "this worker looked in", "fix: install the plugin")
		t.Logf("refused after %s: %s", time.Since(began).Round(time.Millisecond), line)
		if _, urls := groupURLs(ctx, t, group["group.id"], 1); !slices.Equal(urls, []string{w1.Spec.RESTURL + "/"}) && !slices.Equal(urls, []string{w1.Spec.RESTURL}) {
			t.Errorf("group members %v, want only w1", urls)
		}
	})

	deleteConnector(ctx, t, w1.Spec.RESTURL, "file-source")
	putConnector(ctx, t, w1.Spec.RESTURL, "alias-source", map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": input, "topic": group["group.id"] + "-lines"})
	waitConnectorRunning(ctx, t, w1.Spec.RESTURL, "alias-source")

	t.Run("short alias", func(t *testing.T) {
		began := time.Now()
		w2 := runPluginWorker(t, pluginWorker(t, group, "w2-alias", ""))
		line := assertPluginRefusal(ctx, t, w2, fileSourceClass, `connector \"alias-source\"`, "connector.class=FileStreamSource")
		t.Logf("refused after %s: %s", time.Since(began).Round(time.Millisecond), line)
	})

	t.Run("alias resolves here", func(t *testing.T) {
		began := time.Now()
		w3 := runPluginWorker(t, pluginWorker(t, group, "w3", path))
		if err := w3.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		log := w3.Log()
		checked := firstLine(log, `msg="plugins checked"`)
		if !strings.Contains(checked, "peers_answered=1") || strings.Contains(log, "plugins gate:") || strings.Contains(log, "plugin-missing") {
			t.Errorf("w3's plugins step: %s\n%s", checked, logTail(log, 3000))
		}
		groupURLs(ctx, t, group["group.id"], 2)
		t.Logf("w3 joined after %s: %s", time.Since(began).Round(time.Millisecond), checked)
	})
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// writeConnectorRecord writes a connector's configuration into a config
// topic as Connect does (key connector-<name>, {"properties":{...}}): the
// only way to define a connector whose class no worker can load, since
// Connect's REST API validates the class first.
func writeConnectorRecord(t *testing.T, topic, name, class string) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	p, err := sarama.NewSyncProducer(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	value := fmt.Sprintf(`{"properties":{"connector.class":%q,"name":%q,"tasks.max":"1"}}`, class, name)
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.StringEncoder("connector-" + name), Value: sarama.StringEncoder(value)}); err != nil {
		t.Fatal(err)
	}
}

// TestPluginsMissingEverywhereWarns: a connector whose class no member can
// load is broken everywhere: the worker started through connect-init logs
// the warning and starts. Then doctor, asked from the new worker's
// configuration, lists the gap per member once w1 runs a connector the
// new worker lacks, and the plugin without manifests on a plugin.path.
func TestPluginsMissingEverywhereWarns(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "plugins-ghost")
	_, path := pluginBed(t)
	w1 := startPluginWorker(ctx, t, pluginWorker(t, group, "w1", path))
	const ghost = "com.example.missing.GhostSourceConnector"
	writeConnectorRecord(t, group["config.storage.topic"], "ghost", ghost)
	t.Logf("w1 up and ghost written after %s", time.Since(start).Round(time.Millisecond))

	began := time.Now()
	spec := pluginWorker(t, group, "w2", "")
	w2 := runPluginWorker(t, spec)
	if err := w2.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	log := w2.Log()
	warn := firstLine(log, "id="+plugins.IDPluginMissingEverywhere)
	if !strings.Contains(warn, "level=WARN") || !strings.Contains(warn, ghost) || !strings.Contains(warn, `connector \"ghost\"`) {
		t.Errorf("no missing-everywhere warning for ghost:\n%s", logTail(log, 4000))
	}
	if strings.Contains(log, "plugins gate:") {
		t.Errorf("w2 was refused for a class nobody loads")
	}
	groupURLs(ctx, t, group["group.id"], 2)
	t.Logf("w2 started and joined after %s: %s", time.Since(began).Round(time.Millisecond), warn)

	t.Run("doctor", func(t *testing.T) { doctorPluginParity(ctx, t, w1, w2, ghost) })
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// doctorPluginParity: w1 runs a FileStreamSource connector, which w2
// cannot load; doctor from w2's configuration (with a plugin.path holding
// the javac-built plugin without manifests) names w2 as lacking it, ghost
// as broken everywhere, and the slow-scan plugin.
func doctorPluginParity(ctx context.Context, t *testing.T, w1, w2 *testbed.Worker, ghost string) {
	input := filepath.Join(w1.Spec.Dir, "input.txt")
	if err := os.WriteFile(input, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	putConnector(ctx, t, w1.Spec.RESTURL, "file-source", map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": input, "topic": w1.Spec.Props["group.id"] + "-lines"})
	noman, err := testbed.NoManifestPlugin(cluster.Dist)
	if err != nil {
		t.Fatal(err)
	}
	pp := t.TempDir()
	if err := os.Symlink(noman, filepath.Join(pp, "noman")); err != nil {
		t.Fatal(err)
	}
	env := append(connectInitEnv(w2.Spec.Props), "CONNECT_PLUGIN_PATH="+pp)
	began := time.Now()
	res, doc := doctorJSON(ctx, t, env)
	byID := findingsByID(doc)
	missing := byID[plugins.IDPluginMissing]
	if len(missing) != 1 || !strings.Contains(missing[0].Subject, w2.Spec.RESTURL) || !strings.Contains(missing[0].Summary, fileSourceClass) ||
		!strings.Contains(missing[0].Summary, `"file-source"`) || res.code != 1 {
		t.Errorf("doctor exit %d, plugin-missing %+v\n%s", res.code, missing, res.stdout)
	}
	if e := byID[plugins.IDPluginMissingEverywhere]; len(e) != 1 || !strings.Contains(e[0].Summary, ghost) {
		t.Errorf("plugin-missing-everywhere %+v", e)
	}
	if nm := byID[plugins.IDPluginNoManifest]; len(nm) != 1 || !strings.Contains(nm[0].Evidence, "NoManifestSourceConnector") || !strings.Contains(nm[0].Fix, "sync-manifests") {
		t.Errorf("plugin-no-manifest %+v", nm)
	}
	t.Logf("doctor took %s: %d findings", time.Since(began).Round(time.Millisecond), len(doc.Findings))
	for _, f := range doc.Findings {
		if strings.HasPrefix(f.ID, "plugin-") {
			t.Logf("[%s] %s %s: %s", f.Severity, f.ID, f.Subject, f.Summary)
		}
	}
}

// pluginDir makes a plugin.path of links named as the keys, to the values.
func pluginDir(t *testing.T, links map[string]string) string {
	t.Helper()
	pp := t.TempDir()
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(pp, name)); err != nil {
			t.Fatal(err)
		}
	}
	return pp
}

// TestPluginsMissingTransformRefused: w1 has connect-file and the
// javac-built noman plugin (its transformation Upper$Value, found by the
// reflective scan) and runs a FileStreamSource connector with that
// transformation; w2 has connect-file only and is refused naming the
// transformation class and the connector.
func TestPluginsMissingTransformRefused(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "plugins-smt")
	_, path := pluginBed(t)
	noman, err := testbed.NoManifestPlugin(cluster.Dist)
	if err != nil {
		t.Fatal(err)
	}
	const smt = "com.example.noman.Upper$Value"
	pp1 := pluginDir(t, map[string]string{"connect-file": filepath.Join(path, "connect-file"), "noman": noman})
	w1 := startPluginWorker(ctx, t, pluginWorker(t, group, "w1", pp1))
	input := filepath.Join(w1.Spec.Dir, "input.txt")
	if err := os.WriteFile(input, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	putConnector(ctx, t, w1.Spec.RESTURL, "smt-source", map[string]string{"connector.class": fileSourceClass, "tasks.max": "1", "file": input,
		"topic": group["group.id"] + "-lines", "transforms": "t", "transforms.t.type": smt})
	waitConnectorRunning(ctx, t, w1.Spec.RESTURL, "smt-source")
	t.Logf("w1 runs smt-source after %s", time.Since(start).Round(time.Millisecond))

	began := time.Now()
	w2 := runPluginWorker(t, pluginWorker(t, group, "w2", path))
	line := assertPluginRefusal(ctx, t, w2, smt, `connector \"smt-source\"`, "transformation", w1.Spec.RESTURL)
	if strings.Contains(line, "connector class "+fileSourceClass) {
		t.Errorf("w2 has connect-file, yet the refusal names the connector class: %s", line)
	}
	t.Logf("refused after %s: %s", time.Since(began).Round(time.Millisecond), line)
	if _, urls := groupURLs(ctx, t, group["group.id"], 1); len(urls) != 1 {
		t.Errorf("group members %v, want only w1", urls)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// TestPluginsOlderConnectFileJarJoins: w1 has 4.3.1's connect-file, w2 the
// connect-file jar of another Kafka release (3.4.1, from the test bed's
// cache) on a 4.3.1 classpath; w2 starts and joins. Kafka's own plugins
// report kafka-clients' version (AppInfoParser, loaded from the parent
// class loader), so a real w2 lists 4.3.1 too; the test logs which
// versions the step saw and any plugin-version-differs line.
func TestPluginsOlderConnectFileJarJoins(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "plugins-ver")
	_, path := pluginBed(t)
	old, err := testbed.Fetch(ctx, "3.4.1")
	if err != nil {
		t.Fatal(err)
	}
	oldLibs, oldPath := t.TempDir(), t.TempDir()
	if err := splitConnectFile(old.LibDir, oldLibs, filepath.Join(oldPath, "connect-file")); err != nil {
		t.Fatal(err)
	}
	w1 := startPluginWorker(ctx, t, pluginWorker(t, group, "w1", path))
	input := filepath.Join(w1.Spec.Dir, "input.txt")
	if err := os.WriteFile(input, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	putConnector(ctx, t, w1.Spec.RESTURL, "file-source", map[string]string{"connector.class": fileSourceClass, "tasks.max": "1", "file": input, "topic": group["group.id"] + "-lines"})
	waitConnectorRunning(ctx, t, w1.Spec.RESTURL, "file-source")

	began := time.Now()
	w2 := runPluginWorker(t, pluginWorker(t, group, "w2", oldPath))
	if err := w2.WaitHealthy(ctx); err != nil {
		t.Fatalf("w2 did not start: %v\n%s", err, logTail(w2.Log(), 4000))
	}
	log := w2.Log()
	if strings.Contains(log, "plugins gate:") {
		t.Errorf("w2 was refused:\n%s", logTail(log, 4000))
	}
	groupURLs(ctx, t, group["group.id"], 2)
	t.Logf("w2 joined after %s: %s", time.Since(began).Round(time.Millisecond), firstLine(log, `msg="plugins checked"`))
	if resp, err := http.Get(w2.Spec.RESTURL + "/connector-plugins"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("w2 (connect-file %s) lists: %s", old.Version, body)
	}
	if d := firstLine(log, "id="+plugins.IDPluginVersionDiffers); d != "" {
		t.Logf("version warning: %s", d)
		if !strings.Contains(d, "level=WARN") || !strings.Contains(d, cluster.Dist.Version) || !strings.Contains(d, old.Version) {
			t.Errorf("the version warning does not name both %s and %s: %s", cluster.Dist.Version, old.Version, d)
		}
	} else {
		t.Logf("no %s line: the step takes Kafka's own plugins at kafka-clients' version, as the worker reports them", plugins.IDPluginVersionDiffers)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// treeListing lists root's entries with mode, size and mtime.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %s\n", p, fi.Mode(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPluginsReadOnlyPluginDir: w2's plugin.path is a copy of the
// connect-file plugin directory, directories 0555 and files 0444, as a
// read-only mount; the step passes, w2 joins, and nothing under it
// changed (the machine runs as root: the bits do not stop writes, the
// listing shows none happened).
func TestPluginsReadOnlyPluginDir(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "plugins-ro")
	_, path := pluginBed(t)
	ro := filepath.Join(t.TempDir(), "ro-plugins")
	jars, _ := filepath.Glob(filepath.Join(path, "connect-file", "*.jar"))
	if len(jars) == 0 {
		t.Fatal("no connect-file jar")
	}
	if err := os.MkdirAll(filepath.Join(ro, "connect-file"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, j := range jars {
		data, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ro, "connect-file", filepath.Base(j)), data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(ro, "connect-file"), ro} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755); os.Chmod(filepath.Join(ro, "connect-file"), 0o755) })
	before := treeListing(t, ro)

	w1 := startPluginWorker(ctx, t, pluginWorker(t, group, "w1", path))
	input := filepath.Join(w1.Spec.Dir, "input.txt")
	if err := os.WriteFile(input, []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	putConnector(ctx, t, w1.Spec.RESTURL, "file-source", map[string]string{"connector.class": fileSourceClass, "tasks.max": "1", "file": input, "topic": group["group.id"] + "-lines"})
	waitConnectorRunning(ctx, t, w1.Spec.RESTURL, "file-source")

	began := time.Now()
	w2 := runPluginWorker(t, pluginWorker(t, group, "w2", ro))
	if err := w2.WaitHealthy(ctx); err != nil {
		t.Fatalf("w2 did not start: %v\n%s", err, logTail(w2.Log(), 4000))
	}
	log := w2.Log()
	checked := firstLine(log, `msg="plugins checked"`)
	if !strings.Contains(checked, "peers_answered=1") || strings.Contains(log, "plugins gate:") || strings.Contains(log, "id="+plugins.IDPluginMissing) {
		t.Errorf("w2's plugins step: %s\n%s", checked, logTail(log, 3000))
	}
	groupURLs(ctx, t, group["group.id"], 2)
	if after := treeListing(t, ro); after != before {
		t.Errorf("the read-only plugin directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("w2 joined after %s: %s\n%s", time.Since(began).Round(time.Millisecond), checked, before)
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}
