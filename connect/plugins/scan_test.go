package plugins

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// scanCase is one layout of plugin.path and classpath and what the worker
// must (not) load from it.
type scanCase struct {
	name  string
	setup func(t *testing.T, root string) Options
	// want: "class kind found@location-base" entries of Plugins (the
	// location part is optional).
	want []string
	// absent: classes that must not be in Plugins.
	absent []string
	// invisible: "class kind" entries of Invisible.
	invisible []string
	// problems: substrings, each of some Problem's path or detail.
	problems []string
}

func TestScanLayouts(t *testing.T) {
	for _, tc := range scanCases() {
		// No comma in a name: t.TempDir() holds it, and a comma splits plugin.path.
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			opts := tc.setup(t, root)
			opts.WorkDir = root
			inv, err := Scan(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			checkScan(t, tc, inv)
		})
	}
}

// checkScan compares an inventory with a case's expectations.
func checkScan(t *testing.T, tc scanCase, inv *Inventory) {
	t.Helper()
	got := map[string]bool{}
	classes := map[string]bool{}
	for _, p := range inv.Plugins {
		got[p.Class+" "+string(p.Kind)+" "+string(p.Found)] = true
		got[p.Class+" "+string(p.Kind)+" "+string(p.Found)+"@"+filepath.Base(p.Location)] = true
		classes[p.Class] = true
	}
	for _, w := range tc.want {
		if !got[w] {
			t.Errorf("missing plugin %q; got %v", w, describe(inv.Plugins))
		}
	}
	for _, a := range tc.absent {
		if classes[a] {
			t.Errorf("plugin %s found, want absent; got %v", a, describe(inv.Plugins))
		}
	}
	inv2 := map[string]bool{}
	for _, p := range inv.Invisible {
		inv2[p.Class+" "+string(p.Kind)] = true
	}
	for _, w := range tc.invisible {
		if !inv2[w] {
			t.Errorf("missing invisible plugin %q; got %v", w, describe(inv.Invisible))
		}
	}
	for _, w := range tc.problems {
		found := false
		for _, p := range inv.Problems {
			found = found || strings.Contains(p.Path+": "+p.Detail, w)
		}
		if !found {
			t.Errorf("no problem mentions %q; got %v", w, inv.Problems)
		}
	}
	if len(tc.problems) == 0 && len(inv.Problems) > 0 {
		t.Errorf("unexpected problems %v", inv.Problems)
	}
}

func describe(ps []Plugin) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Class+" "+string(p.Kind)+" "+string(p.Found)+"@"+filepath.Base(p.Location))
	}
	return out
}

// scanCases are the plugin.path layouts Connect accepts, and the traps.
func scanCases() []scanCase {
	return slices.Concat(layoutCases(), pathCases(), hierarchyCases(), discoveryCases())
}

func layoutCases() []scanCase {
	return []scanCase{{
		name: "a directory of plugin directories",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/plugins/jdbc/jdbc-10.7.4.jar", jar{
				classes:  []cls{pub("io.jdbc.JdbcSinkConnector", "io.jdbc.Base"), {name: "io.jdbc.Base", super: svcSink, access: accPublic | accAbstract}},
				services: map[string][]string{svcSink: {"io.jdbc.JdbcSinkConnector"}},
			})
			writeJar(t, root+"/plugins/jdbc/lib/postgresql-42.7.3.jar", jar{classes: []cls{pub("org.postgresql.Driver", "java.lang.Object")}})
			writeJar(t, root+"/plugins/smt/smt.jar", jar{classes: []cls{pub("io.smt.Mask", "java.lang.Object", svcTransform)}})
			return Options{PluginPath: root + "/plugins"}
		},
		want:   []string{"io.jdbc.JdbcSinkConnector sink manifest@jdbc", "io.smt.Mask transformation scan@smt"},
		absent: []string{"io.jdbc.Base", "org.postgresql.Driver"},
	}, {
		name: "a directory of jars - each its own location",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/jars/a-1.0.jar", jar{classes: []cls{pub("a.ASourceConnector", svcSource)}})
			writeJar(t, root+"/jars/b-2.0.JAR", jar{classes: []cls{pub("b.BConverter", "java.lang.Object", svcConverter)}})
			writeFile(t, root+"/jars/README.txt", []byte("not a plugin"))
			return Options{PluginPath: "jars"} // relative: the worker's working directory
		},
		want: []string{"a.ASourceConnector source scan@a-1.0.jar", "b.BConverter converter scan@b-2.0.JAR"},
	}, {
		name: "an uber jar as a plugin.path entry - blanks around commas",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/uber.jar", jar{
				classes: []cls{pub("u.USinkConnector", svcSink), pub("u.Router", "java.lang.Object", svcTransform), pub("u.IsX", "java.lang.Object", svcPredicate)},
				services: map[string][]string{
					svcSink: {"u.USinkConnector"}, svcTransform: {"u.Router"}, svcPredicate: {"u.IsX"},
				},
			})
			return Options{PluginPath: " " + root + "/none , " + root + "/uber.jar "}
		},
		want:     []string{"u.USinkConnector sink manifest@uber.jar", "u.Router transformation manifest", "u.IsX predicate manifest"},
		problems: []string{"none: plugin.path entry does not exist"},
	}, {
		name: "class directories - in plugin.path and on the classpath",
		setup: func(t *testing.T, root string) Options {
			writeClassDir(t, root+"/plugins/classes", []cls{pub("c.CSourceConnector", svcSource)}, nil)
			writeClassDir(t, root+"/cpclasses", []cls{pub("d.DConverter", "java.lang.Object", svcConverter)},
				map[string][]string{svcConverter: {"d.DConverter"}})
			return Options{PluginPath: root + "/plugins", Classpath: []string{root + "/cpclasses"}}
		},
		want: []string{"c.CSourceConnector source scan@classes", "d.DConverter converter manifest@classpath"},
	}, {
		name: "classpath wildcards",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/libs/conv.jar", jar{classes: []cls{pub("e.EConverter", "java.lang.Object", svcConverter)}, services: map[string][]string{svcConverter: {"e.EConverter"}}})
			writeJar(t, root+"/libs/nested/deep.jar", jar{classes: []cls{pub("f.FConverter", "java.lang.Object", svcConverter)}, services: map[string][]string{svcConverter: {"f.FConverter"}}})
			writeJar(t, root+"/libs/other.zip", jar{classes: []cls{pub("g.GConverter", "java.lang.Object", svcConverter)}, services: map[string][]string{svcConverter: {"g.GConverter"}}})
			return Options{Classpath: SplitClasspath("libs/*:" + root + "/nowhere/*:" + root + "/missing.jar")}
		},
		want:   []string{"e.EConverter converter manifest@classpath"},
		absent: []string{"f.FConverter", "g.GConverter"}, // not recursive; a wildcard takes .jar only
	}}
}

func pathCases() []scanCase {
	return []scanCase{{
		name: "a missing plugin.path entry is skipped and reported",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/p/x/x.jar", jar{classes: []cls{pub("x.XSinkConnector", svcSink)}, services: map[string][]string{svcSink: {"x.XSinkConnector"}}})
			return Options{PluginPath: root + "/mnt/not-mounted," + root + "/p," + root + "/p/x/x.jar.txt"}
		},
		want:     []string{"x.XSinkConnector sink manifest@x"},
		problems: []string{"not-mounted: plugin.path entry does not exist", "x.jar.txt: plugin.path entry does not exist"},
	}, {
		name: "symbolic links - followed - broken ones and cycles skipped",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/store/real/r.jar", jar{classes: []cls{pub("r.RSinkConnector", svcSink)}, services: map[string][]string{svcSink: {"r.RSinkConnector"}}})
			mustSymlink(t, root+"/store/real", root+"/plugins/linked")
			mustSymlink(t, root+"/store/gone", root+"/plugins/linked2/broken.jar")
			mustSymlink(t, root+"/plugins/linked2", root+"/plugins/linked2/loop")
			writeJar(t, root+"/plugins/linked2/ok.jar", jar{classes: []cls{pub("o.OSinkConnector", svcSink)}, services: map[string][]string{svcSink: {"o.OSinkConnector"}}})
			return Options{PluginPath: root + "/plugins"}
		},
		want:     []string{"r.RSinkConnector sink manifest@linked", "o.OSinkConnector sink manifest@linked2"},
		problems: []string{"broken.jar: cannot resolve symbolic link"},
	}, {
		name: "traps - archives beside class files - an empty location - a corrupt jar",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/plugins/mixed/m.jar", jar{classes: []cls{pub("m.MSinkConnector", svcSink)}, services: map[string][]string{svcSink: {"m.MSinkConnector"}}})
			writeClassDir(t, root+"/plugins/mixed/classes", []cls{pub("m.Ignored", svcSink)}, nil)
			if err := os.MkdirAll(root+"/plugins/empty", 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, root+"/plugins/corrupt/c.jar", []byte("PK not a zip"))
			return Options{PluginPath: root + "/plugins"}
		},
		want:     []string{"m.MSinkConnector sink manifest@mixed"},
		absent:   []string{"m.Ignored"},
		problems: []string{"both archives and class files", "empty: plugin location holds no", "c.jar: cannot read"},
	}}
}

func hierarchyCases() []scanCase {
	return []scanCase{{
		name: "the type hierarchy - followed as the reflective scan does",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/plugins/h/api.jar", jar{classes: []cls{
				{name: "h.Base", super: svcSource, access: accPublic | accAbstract},
				{name: "h.MyTransform", super: "java.lang.Object", ifaces: []string{svcTransform}, access: accPublic | accInterface | accAbstract},
				{name: "h.Outer", super: "java.lang.Object", access: accPublic | accAbstract},
			}})
			writeJar(t, root+"/plugins/h/impl.jar", jar{classes: []cls{
				pub("h.DeepSourceConnector", "h.Base"),
				pub("h.Outer$Key", "h.Outer", "h.MyTransform"),
				pub("h.Outer$Value", "h.Outer", "h.MyTransform"),
				{name: "h.Outer$Hidden", super: "h.Outer", ifaces: []string{"h.MyTransform"}}, // not public
				{name: "h.Kind", super: "java.lang.Enum", ifaces: []string{svcTransform}, access: accPublic | accEnum},
				pub("h.Both", "java.lang.Object", svcConverter, svcHeader),
				pub("h.FromClasspathConnector", "cp.AbstractSink"),
				pub("h.Unrelated", "java.lang.Object", "java.io.Serializable"),
				pub("h.MissingParent", "not.on.the.Classpath"),
				pub("org.apache.kafka.connect.runtime.Sneaky", svcSink), // left to the classpath
				pub("org.apache.kafka.connect.file.FileStreamSourceConnector", svcSource),
			}})
			writeJar(t, root+"/cp/cp.jar", jar{classes: []cls{{name: "cp.AbstractSink", super: svcSink, access: accPublic | accAbstract}}})
			return Options{PluginPath: root + "/plugins", Classpath: []string{root + "/cp/*"}}
		},
		want: []string{
			"h.DeepSourceConnector source scan@h", "h.Outer$Key transformation scan", "h.Outer$Value transformation scan",
			"h.Both converter scan", "h.Both header_converter scan", "h.FromClasspathConnector sink scan",
			"org.apache.kafka.connect.file.FileStreamSourceConnector source scan@h",
		},
		absent: []string{"h.Base", "h.MyTransform", "h.Outer", "h.Outer$Hidden", "h.Kind", "h.Unrelated", "h.MissingParent", "org.apache.kafka.connect.runtime.Sneaky"},
	}, {
		name: "manifests - broken entries - the classpath's classes - Connector's manifest",
		setup: func(t *testing.T, root string) Options {
			writeJar(t, root+"/plugins/bad/bad.jar", jar{
				classes: []cls{pub("bad.GoodSinkConnector", svcSink), pub("bad.OnlyConnectorManifest", svcSource)},
				services: map[string][]string{
					svcSink:       {"bad.GoodSinkConnector", "bad.Gone"},
					svcConverter:  {"org.apache.kafka.connect.storage.StringConverter"},
					connectorBase: {"bad.OnlyConnectorManifest"},
					svcProvider:   {"bad.NoSuchProvider"},
				},
			})
			kafkaAPIJar(t, root+"/cp/kafka-clients-4.1.1.jar", "4.1.1")
			return Options{PluginPath: root + "/plugins", Classpath: []string{root + "/cp/*"}, Want: []string{"bad.OnlyConnectorManifest"}}
		},
		want:     []string{"bad.GoodSinkConnector sink manifest@bad", "bad.OnlyConnectorManifest source scan@bad", "org.apache.kafka.connect.storage.StringConverter converter manifest@classpath"},
		problems: []string{"lists bad.Gone, which is not there", "META-INF/services/" + connectorBase + ", which Connect does not read", "lists bad.NoSuchProvider"},
	}}
}

func discoveryCases() []scanCase {
	layout := func(mode DiscoveryMode, want ...string) func(t *testing.T, root string) Options {
		return func(t *testing.T, root string) Options {
			writeJar(t, root+"/plugins/new/new-3.0.jar", jar{
				classes:  []cls{pub("n.NewSourceConnector", svcSource), pub("n.Unlisted", "java.lang.Object", svcTransform), pub("n.Provider", "java.lang.Object", svcProvider)},
				services: map[string][]string{svcSource: {"n.NewSourceConnector"}, svcProvider: {"n.Provider"}},
			})
			writeJar(t, root+"/plugins/old/old-1.0.jar", jar{classes: []cls{pub("o.OldSinkConnector", svcSink), pub("o.UnlistedProvider", "java.lang.Object", svcProvider)}})
			writeJar(t, root+"/cp/lib.jar", jar{classes: []cls{pub("l.CpConverter", "java.lang.Object", svcConverter), pub("l.NotAPlugin", "java.lang.Object")}})
			return Options{PluginPath: root + "/plugins", Classpath: []string{root + "/cp/lib.jar"}, Discovery: mode, Want: want}
		}
	}
	return []scanCase{{
		name:   "hybrid_warn (the default) - manifests - then the scan of the manifest-less location",
		setup:  layout(""),
		want:   []string{"n.NewSourceConnector source manifest@new", "n.Provider configprovider manifest", "o.OldSinkConnector sink scan@old"},
		absent: []string{"n.Unlisted", "o.UnlistedProvider", "l.CpConverter"}, // not read: wanted by nobody
	}, {
		name:   "only_scan - wanted classes are read where the scan did not read everything",
		setup:  layout(OnlyScan, "n.Unlisted", "CpConverter", "l.NotAPlugin"),
		want:   []string{"n.Unlisted transformation scan@new", "l.CpConverter converter scan@classpath", "o.OldSinkConnector sink scan"},
		absent: []string{"o.UnlistedProvider", "l.NotAPlugin"}, // config providers are service-loaded in every mode
	}, {
		name:      "service_load - only manifests count; the classpath loads by full name",
		setup:     layout(ServiceLoad, "n.Unlisted", "l.CpConverter", "OldSink"),
		want:      []string{"n.NewSourceConnector source manifest", "n.Provider configprovider manifest", "l.CpConverter converter classpath@classpath"},
		absent:    []string{"n.Unlisted", "o.OldSinkConnector"},
		invisible: []string{"n.Unlisted transformation", "o.OldSinkConnector sink"},
	}}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestScanReadOnly scans a plugin directory mounted read-only (0555
// directories, 0444 jars) and checks that nothing under it changed: the
// scan never writes (root ignores the mode bits, so the tree's snapshot is
// the proof).
func TestScanReadOnly(t *testing.T) {
	root := t.TempDir()
	writeJar(t, root+"/ro/p/p.jar", jar{classes: []cls{pub("p.PSinkConnector", svcSink), pub("p.NoManifest", "java.lang.Object", svcTransform)},
		services: map[string][]string{svcSink: {"p.PSinkConnector"}}})
	writeJar(t, root+"/ro/q/q.jar", jar{classes: []cls{pub("q.QSourceConnector", svcSource)}})
	chmodTree(t, root+"/ro", 0o555, 0o444)
	t.Cleanup(func() { chmodTree(t, root+"/ro", 0o755, 0o644) })
	before := snapshot(t, root)
	inv, err := Scan(context.Background(), Options{PluginPath: root + "/ro", FullScan: true, Want: []string{"p.NoManifest"}})
	if err != nil {
		t.Fatal(err)
	}
	got := byClass(inv.Plugins)
	for _, w := range []string{"p.PSinkConnector/sink", "p.NoManifest/transformation", "q.QSourceConnector/source"} {
		if _, ok := got[w]; !ok {
			t.Errorf("missing %s in %v", w, describe(inv.Plugins))
		}
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("the scan changed the tree:\nbefore %s\nafter  %s", before, after)
	}
}

func chmodTree(t *testing.T, dir string, dirMode, fileMode os.FileMode) {
	t.Helper()
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- { // children before their directory
		st, err := os.Stat(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		mode := fileMode
		if st.IsDir() {
			mode = dirMode
		}
		if err := os.Chmod(paths[i], mode); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot lists every path under dir with its size, mode and mtime.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String() + " " + info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestScanVersions: the same plugin in two versions, each version from
// where its jar says it, and Kafka's own plugins with kafka-clients'.
func TestScanVersions(t *testing.T) {
	root := t.TempDir()
	sink := "io.confluent.connect.jdbc.JdbcSinkConnector"
	writeJar(t, root+"/plugins/jdbc-old/kafka-connect-jdbc-10.7.4.jar", jar{classes: []cls{pub(sink, svcSink)}, services: map[string][]string{svcSink: {sink}}, version: "10.7.4"})
	writeJar(t, root+"/plugins/jdbc-new/kafka-connect-jdbc-10.8.0.jar", jar{classes: []cls{pub(sink, svcSink)}, services: map[string][]string{svcSink: {sink}}})
	writeJar(t, root+"/plugins/file/connect-file-3.9.0.jar", jar{classes: []cls{pub("org.apache.kafka.connect.file.FileStreamSinkConnector", svcSink)}})
	writeClassDir(t, root+"/plugins/classes", []cls{pub("x.XSinkConnector", svcSink)}, nil)
	kafkaAPIJar(t, root+"/libs/kafka-clients-4.1.1.jar", "4.1.1")
	inv, err := Scan(context.Background(), Options{PluginPath: root + "/plugins", Classpath: []string{root + "/libs/*"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range inv.Lookup("JdbcSink", KindConnector) {
		got = append(got, filepath.Base(p.Location)+" "+p.Version+" "+string(p.VersionFrom))
	}
	if want := []string{"jdbc-new 10.8.0 file-name", "jdbc-old 10.7.4 manifest"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("two versions: %v, want %v", got, want)
	}
	fs := inv.Lookup("FileStreamSink", KindConnector)
	if len(fs) != 1 || fs[0].Version != "4.1.1" || fs[0].VersionFrom != VersionKafka {
		t.Errorf("Kafka's own plugin reports the classpath's kafka-clients version: %+v", fs)
	}
	x := inv.Lookup("x.XSinkConnector", KindSink)
	if len(x) != 1 || x[0].Version != "" || x[0].VersionFrom != VersionUnknown {
		t.Errorf("a class directory states no version: %+v", x)
	}
	if w := inv.Where(); w != "plugin.path "+root+"/plugins (4 plugin locations), the classpath (1 jar or directory)" {
		t.Errorf("Where() = %q", w)
	}
	if inv.Stats.Locations != 4 || inv.Stats.Files != 5 || inv.Stats.HeadersRead == 0 {
		t.Errorf("stats %+v", inv.Stats)
	}
}

func TestScanOptions(t *testing.T) {
	if _, err := Scan(context.Background(), Options{Discovery: "fast"}); err == nil || !strings.Contains(err.Error(), "invalid plugin.discovery") {
		t.Errorf("bad discovery: %v", err)
	}
	root := t.TempDir()
	writeJar(t, root+"/p/a.jar", jar{classes: []cls{pub("a.ASinkConnector", svcSink)}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, Options{PluginPath: root + "/p"}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("cancelled scan: %v", err)
	}
	inv, err := Scan(context.Background(), Options{})
	if err != nil || len(inv.Plugins) != 0 || inv.Where() != "no plugin.path, the classpath (0 jars and directories)" {
		t.Errorf("nothing to scan: %+v, %v", inv, err)
	}
}
