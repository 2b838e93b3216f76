package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// fakeConnect answers the REST calls apply makes, for the error paths that
// real workers cannot be made to show on demand (409 during a rebalance, a
// status that never settles). The real behaviour is proven by
// apply_integration_test.go on real workers.
type fakeConnect struct {
	mu        sync.Mutex
	configs   map[string]map[string]string
	status    func(name string) *Status
	conflicts int // PUT config answers 409 this many times first
	puts      int
	// down, once set, makes every request fail as a dead worker's does
	// (the connection is closed without an answer).
	down bool
	// dieAfterPut sets down after the first PUT of a config.
	dieAfterPut bool
	// lost makes a PUT config carry the write out and answer only after
	// the client hung up.
	lost  bool
	lists int
	// lag hides the connectors written last from this many listings after
	// each PUT, as a busy herder does.
	lag, hidden int
	fresh       map[string]bool
	// onRestart is called for every POST .../restart.
	onRestart func(path string)
	// deleted counts DELETEs.
	deleted int
	// version is GET /'s "version" ("" answers 404); created records the
	// initial_state of each POST /connectors.
	version string
	created map[string]string
	// offsets are the connectors' offsets; offsetWrites counts PATCHes
	// and DELETEs of them; states records the state calls in order, and
	// state the last per connector (RUNNING when none).
	offsets      map[string]*Offsets
	offsetWrites int
	states       []string
	state        map[string]string
}

func (f *fakeConnect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		hangUp(w)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/" && f.version != "":
		io.WriteString(w, `{"version":"`+f.version+`","commit":"c","kafka_cluster_id":"k"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/connectors":
		var req struct {
			Name         string            `json:"name"`
			Config       map[string]string `json:"config"`
			InitialState string            `json:"initial_state"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if f.created == nil {
			f.created = map[string]string{}
		}
		f.configs[req.Name], f.created[req.Name] = req.Config, req.InitialState
		if f.state == nil {
			f.state = map[string]string{}
		}
		f.state[req.Name] = req.InitialState
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{}`)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/config"):
		c, ok := f.configs[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/connectors/"), "/config")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		json.NewEncoder(w).Encode(c)
	case r.Method == http.MethodGet && r.URL.Path == "/connectors":
		f.lists++
		out := map[string]any{}
		hide := f.hidden > 0
		if hide {
			f.hidden--
		}
		for n, c := range f.configs {
			if hide && f.fresh[n] {
				continue
			}
			e := map[string]any{"info": map[string]any{"config": c}}
			if st := f.status(n); st != nil {
				e["status"] = st
			}
			out[n] = e
		}
		json.NewEncoder(w).Encode(out)
	case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/config/validate"):
		io.WriteString(w, `{"error_count":0,"configs":[{"definition":{"name":"db.pass","type":"PASSWORD"},"value":{"name":"db.pass","errors":[]}}]}`)
	case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/config"):
		if f.conflicts > 0 {
			f.conflicts--
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration"}`)
			return
		}
		f.puts++
		var cfg map[string]string
		json.NewDecoder(r.Body).Decode(&cfg)
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/connectors/"), "/config")
		f.configs[name] = cfg
		if f.lag > 0 {
			if f.fresh == nil {
				f.fresh = map[string]bool{}
			}
			f.fresh[name], f.hidden = true, f.lag
		}
		f.down = f.dieAfterPut
		if f.lost {
			f.mu.Unlock()
			<-r.Context().Done()
			f.mu.Lock()
			return
		}
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{}`)
	case r.Method == http.MethodPut && (strings.HasSuffix(r.URL.Path, "/stop") || strings.HasSuffix(r.URL.Path, "/pause") || strings.HasSuffix(r.URL.Path, "/resume")):
		parts := strings.Split(r.URL.Path, "/")
		call := parts[len(parts)-1]
		f.states = append(f.states, call)
		if f.state == nil {
			f.state = map[string]string{}
		}
		f.state[parts[2]] = map[string]string{"stop": "STOPPED", "pause": "PAUSED", "resume": "RUNNING"}[call]
		w.WriteHeader(http.StatusAccepted)
	case strings.HasSuffix(r.URL.Path, "/status"):
		name := strings.Split(r.URL.Path, "/")[2]
		st := &Status{}
		st.Connector.State = "RUNNING"
		if v := f.state[name]; v != "" {
			st.Connector.State = v
		}
		json.NewEncoder(w).Encode(st)
	case strings.HasSuffix(r.URL.Path, "/offsets"):
		name := strings.Split(r.URL.Path, "/")[2]
		if f.offsets == nil {
			f.offsets = map[string]*Offsets{}
		}
		if r.Method != http.MethodGet && f.state[name] != "STOPPED" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error_code":400,"message":"Connectors must be in the STOPPED state before their offsets can be modified."}`)
			return
		}
		switch r.Method {
		case http.MethodGet:
			o := f.offsets[name]
			if o == nil {
				o = &Offsets{Offsets: []PartitionOffset{}}
			}
			json.NewEncoder(w).Encode(o)
			return
		case http.MethodPatch:
			b, _ := io.ReadAll(r.Body)
			o, _ := ParseOffsets(b)
			f.offsets[name] = o
		case http.MethodDelete:
			delete(f.offsets, name)
		}
		f.offsetWrites++
		io.WriteString(w, `{"message":"The offsets for this connector have been altered successfully"}`)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/restart"):
		if f.onRestart != nil {
			f.onRestart(r.URL.Path + "?" + r.URL.RawQuery)
		}
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodDelete:
		f.deleted++
		delete(f.configs, strings.TrimPrefix(r.URL.Path, "/connectors/"))
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// hangUp closes the connection without an answer, as a killed worker's
// socket does.
func hangUp(w http.ResponseWriter) {
	if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
		c.Close()
	}
}

func runFake(t *testing.T, f *fakeConnect, desired []Connector, wait time.Duration) (Result, string, *clock.Stepping) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewStepping(time.Unix(0, 0))
	var out bytes.Buffer
	res := Run(context.Background(), &API{REST: &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}, Target: tg, Clock: clk}, desired,
		Options{Out: &out, Clock: clk, Wait: wait})
	return res, out.String(), clk
}

func running(name string) *Status {
	st := &Status{Tasks: []TaskStatus{{ID: 0, State: "RUNNING", WorkerID: "w:8083"}}}
	st.Connector.State = "RUNNING"
	return st
}

func TestRunRetriesConflictsOnTheClock(t *testing.T) {
	f := &fakeConnect{configs: map[string]map[string]string{}, status: running, conflicts: 2}
	res, out, clk := runFake(t, f, []Connector{conn("a", "", "connector.class", "C", "db.pass", "s3cret")}, time.Minute)
	if res.Code != exitcode.OK || f.puts != 1 || !strings.Contains(out, "created a") {
		t.Fatalf("code %d, %d puts\n%s", res.Code, f.puts, out)
	}
	if strings.Contains(out, "s3cret") || !strings.Contains(out, "db.pass = [hidden]") {
		t.Errorf("a PASSWORD-typed value was printed:\n%s", out)
	}
	// Two 409 pauses (187.5 ms and 375 ms with the fixed jitter), then the
	// settle window of polls.
	if clk.Waited() < 562500*time.Microsecond+DefaultSettle {
		t.Errorf("waited %v on the clock", clk.Waited())
	}
}

func TestRunReportsFailedTaskTrace(t *testing.T) {
	trace := "org.apache.kafka.connect.errors.ConnectException: boom s3cret\n\tat a\n\tat b\n\tat c\n\tat d\n\tat e\n\tat f\n\tat g\n"
	failed := func(string) *Status {
		st := running("a")
		st.Tasks[0].State, st.Tasks[0].Trace = "FAILED", trace
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{}, status: failed}
	res, out, _ := runFake(t, f, []Connector{conn("a", "", "connector.class", "C", "db.password", "s3cret")}, time.Minute)
	if res.Code != exitcode.Failed || !strings.Contains(out, "a: FAILED: task 0 FAILED") || !strings.Contains(out, "ConnectException: boom [hidden]") ||
		!strings.Contains(out, "... 2 more lines") || strings.Contains(out, "s3cret") {
		t.Fatalf("code %d\n%s", res.Code, out)
	}
}

func TestRunTimesOut(t *testing.T) {
	pending := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "UNASSIGNED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{}, status: pending}
	res, out, clk := runFake(t, f, []Connector{conn("a", "", "connector.class", "C")}, 30*time.Second)
	if res.Code != exitcode.Failed || !strings.Contains(out, "a: not RUNNING after 30s: connector RUNNING, 0/1 tasks RUNNING") {
		t.Fatalf("code %d\n%s", res.Code, out)
	}
	if clk.Waited() < 30*time.Second || clk.Waited() > 32*time.Second {
		t.Errorf("waited %v on the clock for a 30s wait", clk.Waited())
	}
}
