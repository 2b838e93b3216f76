package doctor

import (
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/gate"
)

// pluginsSnapshot: three members; w1 and w2 load FileStreamSource (w2 in
// another version), w3 nothing; connectors a and b use it, ghost a class
// nobody loads.
func pluginsSnapshot(mode plugins.CheckMode) *Snapshot {
	s := healthy()
	fs := func(v string) []plugins.RemotePlugin {
		return []plugins.RemotePlugin{{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Type: plugins.KindSource, Version: v}}
	}
	s.Plugins = &PluginsLook{Mode: mode,
		Uses: plugins.UsedClasses(map[string]map[string]string{
			"a": {"connector.class": "FileStreamSource"}, "b": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector"},
			"ghost": {"connector.class": "com.example.Ghost"}}),
		Members:    []plugins.Peer{{Member: "http://w1:8083/", Plugins: fs("4.3.1")}, {Member: "http://w2:8083/", Plugins: fs("4.1.1")}, {Member: "http://w3:8083/"}},
		Unanswered: []gate.PluginPeerError{{URL: "http://w4:8083/", Error: "connection refused"}},
	}
	return s
}

func TestDiagnosePluginParity(t *testing.T) {
	fs := Diagnose(pluginsSnapshot(plugins.CheckFail))
	by := map[string][]checks.Result{}
	for _, f := range fs {
		by[f.ID] = append(by[f.ID], f)
	}
	missing := by[plugins.IDPluginMissing]
	if len(missing) != 1 || missing[0].Subject != "http://w3:8083/" || missing[0].Severity != checks.Error ||
		!strings.Contains(missing[0].Summary, `"a", "b"`) || !strings.Contains(missing[0].Summary, "http://w1:8083/, http://w2:8083/") {
		t.Errorf("plugin-missing: %+v", missing)
	}
	if e := by[plugins.IDPluginMissingEverywhere]; len(e) != 1 || !strings.Contains(e[0].Summary, "com.example.Ghost") || e[0].Severity != checks.Warning {
		t.Errorf("missing everywhere, once: %+v", e)
	}
	if v := by[plugins.IDPluginVersionDiffers]; len(v) != 2 || !strings.Contains(v[0].Evidence, "http://w1:8083/ 4.3.1, http://w2:8083/ 4.1.1") {
		t.Errorf("version differs, once per connector: %+v", v)
	}
	if c := by[IDCheckFailed]; len(c) != 1 || c[0].Subject != "http://w4:8083/" {
		t.Errorf("unanswered member: %+v", c)
	}
	// Under warn the gap is a warning, as run would start the worker.
	for _, f := range Diagnose(pluginsSnapshot(plugins.CheckWarn)) {
		if f.ID == plugins.IDPluginMissing && f.Severity != checks.Warning {
			t.Errorf("warn mode: %+v", f)
		}
	}
}

// This worker's scan, when doctor ran in its container: its plugins
// without manifests and its skipped entries, as plugins.Verdict gives
// them.
func TestDiagnosePluginsHere(t *testing.T) {
	s := healthy()
	s.Plugins = &PluginsLook{Mode: plugins.CheckFail, Members: []plugins.Peer{}, Local: &plugins.Inventory{
		Discovery: plugins.HybridWarn,
		Plugins:   []plugins.Plugin{{Class: "com.example.NoMan", Kind: plugins.KindSource, Location: "/p/noman", File: "/p/noman/n.jar", Found: plugins.FoundScan}},
		Problems:  []plugins.Problem{{Path: "/p/typo", Detail: "does not exist", Fix: "correct plugin.path"}},
	}}
	got := ids(Diagnose(s))
	if got[plugins.IDPluginNoManifest] == "" || got[plugins.IDPluginPathProblem] == "" {
		t.Errorf("findings %v", got)
	}
	doc := NewDocument(s, Diagnose(s), "v", time.Now())
	if doc.Cluster.Plugins == nil || doc.Cluster.Plugins.Local == nil {
		t.Error("the document lacks the plugins look")
	}
}

// A member that answers 401 or 403 is not "did not answer": it is an
// error finding of its own whose fix names the credential settings.
func TestDiagnoseRESTRefused(t *testing.T) {
	s := pluginsSnapshot(plugins.CheckFail)
	s.Plugins.Unanswered = append(s.Plugins.Unanswered, gate.PluginPeerError{URL: "http://w5:8083/",
		Error:   "GET /connector-plugins at http://w5:8083/ answered 401 Unauthorized: the worker's REST API requires credentials and none were given",
		Refused: true, Fix: "set CONNECT_INIT_REST_USERNAME and CONNECT_INIT_REST_PASSWORD"})
	var got []checks.Result
	for _, f := range Diagnose(s) {
		if f.ID == IDRESTCredentialsRefused {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Subject != "http://w5:8083/" || got[0].Severity != checks.Error || !strings.Contains(got[0].Fix, "CONNECT_INIT_REST_USERNAME") {
		t.Errorf("rest-credentials-refused: %+v", got)
	}
}
