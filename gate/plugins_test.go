package gate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/connect/store"
)

// realPluginList is the GET /connector-plugins?connectorsOnly=false body of
// a real Kafka 4.1.1 worker with connect-file on its classpath.
func realPluginList(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../connect/plugins/testdata/real/kafka-4.1.1-connector-plugins.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pluginPeer serves body (with status) as a member's REST API; it counts
// the requests.
func pluginPeer(t *testing.T, status int, body []byte) (string, *int) {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if r.URL.Path != "/connector-plugins" || r.URL.Query().Get("connectorsOnly") != "false" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/", &n
}

func checkPlugins(t *testing.T, mode plugins.CheckMode, configs map[string]map[string]string, members ...string) (*PluginReport, string, error) {
	t.Helper()
	var buf bytes.Buffer
	g := &PluginGate{Mode: mode, Scan: plugins.Options{PluginPath: t.TempDir()}, Configs: configs, Members: members,
		Log: slog.New(slog.NewTextHandler(&buf, nil))}
	rep, err := g.Check(context.Background())
	return rep, buf.String(), err
}

var fileSource = map[string]map[string]string{"file-source": {"connector.class": "FileStreamSource", "topic": "t"}}

// The scenario on the gate: a member loads FileStreamSource (by its
// alias), this worker has nothing: refused, naming the resolved class, the
// peer's version and the fix.
func TestPluginGateRefusesTheOddWorker(t *testing.T) {
	peer, _ := pluginPeer(t, http.StatusOK, realPluginList(t))
	rep, log, err := checkPlugins(t, plugins.CheckFail, fileSource, peer)
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != "plugins" || !rep.Refused {
		t.Fatalf("err %v, refused %v", err, rep.Refused)
	}
	for _, want := range []string{"org.apache.kafka.connect.file.FileStreamSourceConnector", `connector "file-source"`, "4.1.1", peer, "this worker looked in", "CONNECT_INIT_PLUGIN_CHECK=warn"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %s", want, err)
		}
	}
	t.Log(err)
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal is not one line: %q", err)
	}
	if !strings.Contains(log, `msg="plugins checked"`) || !strings.Contains(log, "peers_answered=1") {
		t.Errorf("log:\n%s", log)
	}
}

// Under warn the same verdict is a warning and the worker starts.
func TestPluginGateWarnMode(t *testing.T) {
	peer, _ := pluginPeer(t, http.StatusOK, realPluginList(t))
	rep, log, err := checkPlugins(t, plugins.CheckWarn, fileSource, peer)
	if err != nil || rep.Refused || len(rep.Findings) == 0 || rep.Findings[0].Severity != checks.Warning {
		t.Fatalf("err %v, findings %+v", err, rep.Findings)
	}
	if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "id="+plugins.IDPluginMissing) {
		t.Errorf("no warning logged:\n%s", log)
	}
}

// A member that does not answer proves nothing: it is reported and left
// out, so a class nobody else is known to load is a warning, never a
// refusal.
func TestPluginGateUnansweredPeerIsNotEvidence(t *testing.T) {
	down, n := pluginPeer(t, http.StatusInternalServerError, []byte("boom"))
	rep, log, err := checkPlugins(t, plugins.CheckFail, fileSource, down)
	if err != nil || rep.Refused {
		t.Fatalf("refused on an unanswered peer: %v", err)
	}
	if len(rep.Unanswered) != 1 || rep.Unanswered[0].URL != down || *n != 2 {
		t.Errorf("unanswered %+v after %d requests (want one retry)", rep.Unanswered, *n)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].ID != plugins.IDPluginMissingEverywhere {
		t.Errorf("findings %+v", rep.Findings)
	}
	if !strings.Contains(log, "did not list its plugins") {
		t.Errorf("log:\n%s", log)
	}
}

// No connector: nothing to judge, and no member is asked.
func TestPluginGateNoConnectors(t *testing.T) {
	peer, n := pluginPeer(t, http.StatusOK, realPluginList(t))
	rep, _, err := checkPlugins(t, plugins.CheckFail, nil, peer)
	if err != nil || rep.Refused || *n != 0 {
		t.Fatalf("err %v, %d requests", err, *n)
	}
}

// The definitions of CONNECT_INIT_CONNECTORS_DIR replace the config
// topic's configuration of the same connector.
func TestPluginConfigs(t *testing.T) {
	log := &store.ConfigLog{Configs: map[string]map[string]string{"a": {"connector.class": "A"}, "b": {"connector.class": "B"}}}
	got := PluginConfigs(log, map[string]map[string]string{"b": {"connector.class": "B2"}, "c": {"connector.class": "C"}})
	if len(got) != 3 || got["a"]["connector.class"] != "A" || got["b"]["connector.class"] != "B2" || got["c"]["connector.class"] != "C" {
		t.Errorf("%v", got)
	}
	if len(PluginConfigs(nil, nil)) != 0 {
		t.Error("nothing read: no configs")
	}
}
