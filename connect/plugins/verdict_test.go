package plugins

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestUsedClasses(t *testing.T) {
	configs := map[string]map[string]string{
		"files": {
			"connector.class": "FileStreamSource", "tasks.max": "1",
			"transforms": " mask , route,", "transforms.mask.type": "io.smt.Mask$Value", "transforms.mask.plugin.version": "[1.0,2.0)",
			"transforms.route.type": "RegexRouter", "transforms.unlisted.type": "ignored.Transform",
			"predicates": "isTomb", "predicates.isTomb.type": "RecordIsTombstone",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.plugin.version": "4.1.1",
			"header.converter": "SimpleHeaderConverter",
		},
		"jdbc": {
			"connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector", "connector.plugin.version": "10.7.4",
			"key.converter": "StringConverter", "transforms": "noType",
		},
		"empty": {},
	}
	want := []Use{
		{Connector: "files", Key: "connector.class", Kind: KindConnector, Class: "FileStreamSource"},
		{Connector: "files", Key: "value.converter", Kind: KindConverter, Class: "org.apache.kafka.connect.json.JsonConverter", Version: "4.1.1"},
		{Connector: "files", Key: "header.converter", Kind: KindHeaderConverter, Class: "SimpleHeaderConverter"},
		{Connector: "files", Key: "transforms.mask.type", Kind: KindTransformation, Class: "io.smt.Mask$Value", Version: "[1.0,2.0)"},
		{Connector: "files", Key: "transforms.route.type", Kind: KindTransformation, Class: "RegexRouter"},
		{Connector: "files", Key: "predicates.isTomb.type", Kind: KindPredicate, Class: "RecordIsTombstone"},
		{Connector: "jdbc", Key: "connector.class", Kind: KindConnector, Class: "io.confluent.connect.jdbc.JdbcSinkConnector", Version: "10.7.4"},
		{Connector: "jdbc", Key: "key.converter", Kind: KindConverter, Class: "StringConverter"},
	}
	got := UsedClasses(configs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsedClasses:\n got %+v\nwant %+v", got, want)
	}
	if c := Classes(got); len(c) != 8 || c[0] != "FileStreamSource" {
		t.Errorf("Classes = %v", c)
	}
}

// realPeer is a real Kafka 4.1.1 worker's GET
// /connector-plugins?connectorsOnly=false (testdata/real).
func realPeer(t *testing.T) Peer {
	t.Helper()
	f, err := os.Open("testdata/real/kafka-4.1.1-connector-plugins.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	list, err := DecodeConnectorPlugins(f)
	if err != nil {
		t.Fatal(err)
	}
	return Peer{Member: "http://w1:8083", Plugins: list}
}

func TestDecodeConnectorPlugins(t *testing.T) {
	p := realPeer(t)
	if len(p.Plugins) != 53 {
		t.Errorf("%d entries, want 53", len(p.Plugins))
	}
	kinds := map[Kind]int{}
	for _, rp := range p.Plugins {
		kinds[rp.Type]++
	}
	want := map[Kind]int{KindSource: 2, KindSink: 1, KindTransformation: 28, KindPredicate: 3, KindConverter: 9, KindHeaderConverter: 10}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("types %v, want %v", kinds, want)
	}
	first := RemotePlugin{Class: "org.apache.kafka.connect.file.FileStreamSinkConnector", Type: KindSink, Version: "4.1.1"}
	if p.Plugins[0] != first {
		t.Errorf("first entry %+v", p.Plugins[0])
	}
	noVersion, err := DecodeConnectorPlugins(strings.NewReader(`[{"class":"a.B","type":"converter","extra":1},{"class":"c.D","type":"sink","version":"undefined"}]`))
	if err != nil || noVersion[0].Version != "" || noVersion[1].Version != "" {
		t.Errorf("versionless entries: %+v, %v", noVersion, err)
	}
	for _, bad := range []string{`{"class":"a"}`, `[{"type":"sink"}]`, `[`, ``} {
		if _, err := DecodeConnectorPlugins(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// local builds this worker's inventory from plugins, with one plugin.path
// entry.
func local(ps ...Plugin) *Inventory {
	return &Inventory{Discovery: HybridWarn, Plugins: ps, PluginPath: []PathEntry{{Path: "/usr/share/java", Locations: 2}}, ClasspathFiles: 90}
}

// kafkaBuiltins are the classpath plugins of a Kafka 4.1.1 worker that the
// cases use.
func kafkaBuiltins() []Plugin {
	mk := func(class string, k Kind) Plugin {
		return Plugin{Class: class, Kind: k, Version: "4.1.1", VersionFrom: VersionKafka, Location: ClasspathLocation, Found: FoundManifest}
	}
	return []Plugin{
		mk("org.apache.kafka.connect.json.JsonConverter", KindConverter),
		mk("org.apache.kafka.connect.transforms.RegexRouter", KindTransformation),
		mk("org.apache.kafka.connect.transforms.predicates.RecordIsTombstone", KindPredicate),
	}
}

// verdictCase is one situation of this worker and its peers and the
// findings it must give.
type verdictCase struct {
	name  string
	in    func(t *testing.T) Input
	want  []string // "id severity" in order
	check func(t *testing.T, fs []Finding)
}

// The uses and the plugin the verdict cases share.
func fileSourceUse() Use {
	return Use{Connector: "files", Key: "connector.class", Kind: KindConnector, Class: "FileStreamSource"}
}

func nomanUse() Use {
	return Use{Connector: "nm", Key: "connector.class", Kind: KindConnector, Class: "NoManifestSource"}
}

func nomanPlugin() Plugin {
	return Plugin{Class: "com.example.noman.NoManifestSourceConnector", Kind: KindSource, Version: "2.5.0", VersionFrom: VersionManifest, Location: "/usr/share/java/noman", Found: FoundManifest}
}

func withVersion(p Plugin, v string, from VersionSource) Plugin {
	p.Version, p.VersionFrom = v, from
	return p
}

func TestVerdict(t *testing.T) {
	for _, tc := range slices.Concat(missingCases(), versionCases(), manifestAndPathCases()) {
		t.Run(tc.name, func(t *testing.T) {
			fs := Verdict(tc.in(t))
			var got []string
			for _, f := range fs {
				got = append(got, f.ID+" "+string(f.Severity))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("findings %v, want %v:\n%s", got, tc.want, render(fs))
			}
			if tc.check != nil {
				tc.check(t, fs)
			}
			for _, f := range fs {
				if f.Summary == "" || f.Fix == "" || strings.Contains(f.String(), "\n") {
					t.Errorf("finding not one complete line: %q", f.String())
				}
			}
		})
	}
}

// missingCases: the class is missing here, or everywhere.
func missingCases() []verdictCase {
	fileSource := fileSourceUse()
	mask := Use{Connector: "files", Key: "transforms.mask.type", Kind: KindTransformation, Class: "com.example.noman.Upper$Value"}
	return []verdictCase{{
		name: "the odd one out: a short alias the peer loads and this worker does not",
		in: func(t *testing.T) Input {
			return Input{Uses: []Use{fileSource}, Local: local(kafkaBuiltins()...), Peers: []Peer{realPeer(t)}}
		},
		want: []string{"plugin-missing error"},
		check: func(t *testing.T, fs []Finding) {
			f := fs[0]
			for _, s := range []string{`connector "files"`, "org.apache.kafka.connect.file.FileStreamSourceConnector", "peer http://w1:8083"} {
				if !strings.Contains(f.Summary, s) {
					t.Errorf("summary lacks %q: %s", s, f.Summary)
				}
			}
			for _, s := range []string{"connector.class=FileStreamSource", "http://w1:8083 has version 4.1.1", "looked in plugin.path /usr/share/java (2 plugin locations), the classpath (90 jars and directories)"} {
				if !strings.Contains(f.Evidence, s) {
					t.Errorf("evidence lacks %q: %s", s, f.Evidence)
				}
			}
			if !strings.Contains(f.Fix, "install the plugin that provides org.apache.kafka.connect.file.FileStreamSourceConnector version 4.1.1") {
				t.Errorf("fix: %s", f.Fix)
			}
			if f.Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" || !reflect.DeepEqual(f.Peers, []string{"http://w1:8083"}) {
				t.Errorf("facts: %+v", f)
			}
		},
	}, {
		name: "a missing transformation",
		in: func(t *testing.T) Input {
			return Input{Uses: []Use{mask}, Local: local(kafkaBuiltins()...), Peers: []Peer{realPeer(t)}}
		},
		want: []string{"plugin-missing error"},
		check: func(t *testing.T, fs []Finding) {
			if fs[0].Key != "transforms.mask.type" || !strings.Contains(fs[0].Summary, "the transformation com.example.noman.Upper$Value") {
				t.Errorf("%+v", fs[0])
			}
		},
	}, {
		name: "a class nobody has: a warning only",
		in: func(t *testing.T) Input {
			u := Use{Connector: "typo", Key: "connector.class", Kind: KindConnector, Class: "io.nowhere.NoSuchConnector"}
			return Input{Uses: []Use{u, fileSource}, Local: local(append(kafkaBuiltins(), Plugin{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Kind: KindSource, Version: "4.1.1", VersionFrom: VersionKafka})...), Peers: []Peer{realPeer(t)}}
		},
		want: []string{"plugin-missing-everywhere warning"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Summary, "no member can load (this worker and 1 peers that answered)") {
				t.Errorf("%s", fs[0].Summary)
			}
		},
	}, {
		name: "alone: without peers a missing class is broken everywhere",
		in:   func(t *testing.T) Input { return Input{Uses: []Use{fileSource}, Local: local()} },
		want: []string{"plugin-missing-everywhere warning"},
	}}
}

// versionCases: the same plugin in other versions, pinned or not.
func versionCases() []verdictCase {
	noman, nomanUse := nomanPlugin(), nomanUse()
	return []verdictCase{{
		name: "two versions of the same plugin",
		in: func(t *testing.T) Input {
			return Input{Uses: []Use{nomanUse}, Local: local(noman), Peers: []Peer{
				{Member: "http://w1:8083", Plugins: []RemotePlugin{{Class: noman.Class, Type: KindSource, Version: "2.6.0"}}},
				{Member: "http://w3:8083", Plugins: []RemotePlugin{{Class: noman.Class, Type: KindSource, Version: "2.5"}}},
			}}
		},
		want: []string{"plugin-version-differs warning"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Evidence, "this worker has version 2.5.0 (from manifest); http://w1:8083 has version 2.6.0") ||
				!reflect.DeepEqual(fs[0].Peers, []string{"http://w1:8083"}) || !strings.Contains(fs[0].Fix, "connector.plugin.version") {
				t.Errorf("%+v", fs[0])
			}
		},
	}, {
		name: "a pinned version this worker lacks, its jar says so",
		in: func(t *testing.T) Input {
			u := nomanUse
			u.Version = "2.6.0"
			return Input{Uses: []Use{u}, Local: local(noman), Peers: []Peer{{Member: "http://w1:8083", Plugins: []RemotePlugin{{Class: noman.Class, Type: KindSource, Version: "2.6.0"}}}}}
		},
		want: []string{"plugin-missing error"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Evidence, "connector.plugin.version=2.6.0") || !strings.Contains(fs[0].Evidence, "this worker has version 2.5.0 (from manifest)") ||
				!strings.Contains(fs[0].Fix, "install com.example.noman.NoManifestSourceConnector version 2.6.0") {
				t.Errorf("%+v", fs[0])
			}
		},
	}, {
		name: "a pinned version and only the file name to tell: never refused",
		in: func(t *testing.T) Input {
			u := nomanUse
			u.Version = "[2.6,3)"
			return Input{Uses: []Use{u}, Local: local(withVersion(noman, "2.5.0", VersionFileName)), Peers: []Peer{{Member: "http://w1:8083", Plugins: []RemotePlugin{{Class: noman.Class, Type: KindSource, Version: "2.6.0"}}}}}
		},
		want: []string{"plugin-version-differs warning", "plugin-version-unverified info"},
	}}
}

// manifestAndPathCases: manifests, plugin.path problems, and parity.
func manifestAndPathCases() []verdictCase {
	fileSource, noman, nomanUse := fileSourceUse(), nomanPlugin(), nomanUse()
	return []verdictCase{{
		name: "service_load ignores the plugin's location: the fix is sync-manifests",
		in: func(t *testing.T) Input {
			inv := local()
			inv.Discovery = ServiceLoad
			inv.Invisible = []Plugin{withVersion(noman, "2.5.0", VersionManifest)}
			inv.Invisible[0].Found = FoundScan
			return Input{Uses: []Use{nomanUse}, Local: inv, Peers: []Peer{realPeer(t)}}
		},
		want: []string{"plugin-missing error", "plugin-no-manifest info"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Fix, "connect-plugin-path.sh sync-manifests --plugin-location /usr/share/java/noman") ||
				!strings.Contains(fs[1].Summary, "service_load ignores them") {
				t.Errorf("%s\n%s", fs[0], fs[1])
			}
		},
	}, {
		name: "plugins without manifests: info; under hybrid_fail a warning",
		in: func(t *testing.T) Input {
			scanned := noman
			scanned.Found = FoundScan
			inv := local(scanned, Plugin{Class: "a.Other", Kind: KindSink, Location: "/usr/share/java/noman", Found: FoundScan})
			inv.Discovery = HybridFail
			return Input{Uses: []Use{nomanUse}, Local: inv, Peers: []Peer{{Member: "http://w1:8083", Plugins: []RemotePlugin{{Class: noman.Class, Type: KindSource, Version: "2.5.0"}}}}}
		},
		want: []string{"plugin-no-manifest warning"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Summary, "2 plugins in /usr/share/java/noman") || !strings.Contains(fs[0].Evidence, "a.Other (sink)") ||
				!strings.Contains(fs[0].Fix, "sync-manifests --plugin-location /usr/share/java/noman") {
				t.Errorf("%s", fs[0])
			}
		},
	}, {
		name: "a missing plugin.path entry is reported, and named in the fix",
		in: func(t *testing.T) Input {
			inv := local(kafkaBuiltins()...)
			inv.PluginPath = append(inv.PluginPath, PathEntry{Path: "/mnt/plugins", Problem: "plugin.path entry does not exist: Connect skips it"})
			inv.Problems = []Problem{{Path: "/mnt/plugins", Detail: "plugin.path entry does not exist: Connect skips it"}}
			return Input{Uses: []Use{fileSource}, Local: inv, Peers: []Peer{realPeer(t)}}
		},
		want: []string{"plugin-missing error", "plugin-path-problem warning"},
		check: func(t *testing.T, fs []Finding) {
			if !strings.Contains(fs[0].Fix, "plugin.path entry /mnt/plugins: plugin.path entry does not exist") {
				t.Errorf("fix: %s", fs[0].Fix)
			}
		},
	}, {
		name: "parity: nothing to say",
		in: func(t *testing.T) Input {
			builtins := kafkaBuiltins()
			uses := []Use{
				{Connector: "c", Key: "value.converter", Kind: KindConverter, Class: "JsonConverter", Version: "4.1.1"},
				{Connector: "c", Key: "transforms.r.type", Kind: KindTransformation, Class: "RegexRouter"},
				{Connector: "c", Key: "predicates.t.type", Kind: KindPredicate, Class: "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"},
			}
			return Input{Uses: uses, Local: local(builtins...), Peers: []Peer{realPeer(t)}}
		},
		want: nil,
	}}
}

func render(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.ID + ": " + f.String() + "\n")
	}
	return b.String()
}
