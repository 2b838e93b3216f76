package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// directFake serves f behind Direct: a worker that answers GET / and is
// healthy, reached through --url alone (not proven ours).
func directFake(t *testing.T, f *fakeConnect) *API {
	t.Helper()
	f.version = "4.1.1"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			io.WriteString(w, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
			return
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	clk := clock.NewStepping(time.Unix(0, 0))
	api, _, err := Direct(context.Background(), &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}, srv.URL+"/")
	if err != nil {
		t.Fatalf("Direct: %v", err)
	}
	api.Clock = clk
	return api
}

// A plan is what the apply would do (issue 48): through --url alone, on a
// cluster that holds none of the directory's connectors, the dry run of
// --prune refuses as the apply does (exit 2, the JSON document carrying
// the refusal, nothing deleted), where it planned "delete":1 and exited 3.
func TestDryRunRunsThePruneGuard(t *testing.T) {
	a := conn("a", "", "connector.class", "C", "topic", "t")
	for _, dry := range []bool{true, false} {
		f := &fakeConnect{configs: map[string]map[string]string{"theirs": {"name": "theirs", "connector.class": "C"}}, status: running}
		api := directFake(t, f)
		var out bytes.Buffer
		res := Run(context.Background(), api, []Connector{a}, Options{Out: &out, Clock: api.Clock, Prune: true, DryRun: dry, JSON: dry, DetailedExitCode: dry})
		if res.Code != exitcode.Config {
			t.Errorf("dry run %v: exit %d, want %d (refused):\n%s", dry, res.Code, exitcode.Config, out.String())
		}
		if f.deleted != 0 || f.configs["a"] != nil {
			t.Errorf("dry run %v: %d deletes, configs %v: something was written", dry, f.deleted, f.configs)
		}
		if !dry {
			continue
		}
		var doc struct {
			Planned bool   `json:"planned"`
			Error   string `json:"error"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("the dry run's document: %v\n%s", err, out.String())
		}
		if doc.Planned || !strings.Contains(doc.Error, "refusing to prune through") {
			t.Errorf("the dry run's document %+v, want not planned with the refusal", doc)
		}
	}
}

// Without --prune, the dry run of the same cluster does not promise that
// --prune deletes the connectors it keeps: --prune would refuse.
func TestDryRunKeptSaysWhatPruneWouldDo(t *testing.T) {
	a := conn("a", "", "connector.class", "C", "topic", "t")
	f := &fakeConnect{configs: map[string]map[string]string{"theirs": {"name": "theirs", "connector.class": "C"}}, status: running}
	api := directFake(t, f)
	var out bytes.Buffer
	res := Run(context.Background(), api, []Connector{a}, Options{Out: &out, Clock: api.Clock, DryRun: true})
	if res.Code != exitcode.OK {
		t.Fatalf("exit %d:\n%s", res.Code, out.String())
	}
	if strings.Contains(out.String(), "kept (--prune deletes them)") || !strings.Contains(out.String(), "--prune would refuse to delete them") {
		t.Errorf("the plan promises a prune the apply refuses:\n%s", out.String())
	}
	// A cluster that holds one of the directory's connectors is evidence:
	// there --prune deletes them, and the plan says so.
	f2 := &fakeConnect{configs: map[string]map[string]string{"theirs": {"name": "theirs", "connector.class": "C"}, "a": a.Config}, status: running}
	api2 := directFake(t, f2)
	out.Reset()
	Run(context.Background(), api2, []Connector{a}, Options{Out: &out, Clock: api2.Clock, DryRun: true})
	if !strings.Contains(out.String(), "kept (--prune deletes them): theirs") {
		t.Errorf("with evidence, the plan does not say --prune deletes them:\n%s", out.String())
	}
}
