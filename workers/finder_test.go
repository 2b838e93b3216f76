package workers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
)

func TestPeerURL(t *testing.T) {
	for in, want := range map[string]string{
		"connect-1":              "https://connect-1:9443/",
		"connect-1:8083":         "https://connect-1:8083/",
		"http://connect-2:8083/": "http://connect-2:8083/",
		" tasks.connect ":        "https://tasks.connect:9443/",
		"fd00::1":                "https://[fd00::1]:9443/",
	} {
		if got, err := PeerURL(in, "https://me:9443/"); got != want || err != nil {
			t.Errorf("PeerURL(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
}

// TestProveRefusesNonConnectAnswers: a listener that answers 200 on every
// path (connect-init's own pre-exec self-probe does) is not taken for the
// worker; only GET / with Connect's fields and our Kafka cluster id is.
func TestProveRefusesNonConnectAnswers(t *testing.T) {
	var root atomic.Value
	var healthy atomic.Bool
	root.Store("a-token-not-json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			io.WriteString(w, root.Load().(string))
			return
		}
		if r.URL.Path == "/health" && healthy.Load() {
			io.WriteString(w, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
			return
		}
		io.WriteString(w, "a-token-not-json")
	}))
	defer srv.Close()
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{Local: true, Config: &settings.Config{GroupID: "g"}}
	rest := &restclient.Client{}
	why, err := f.prove(context.Background(), rest, tg, "our-cluster", nil)
	if err != nil || !strings.Contains(why, "not as Connect does") {
		t.Errorf("self-probe-like answer: %q, %v", why, err)
	}
	root.Store(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"their-cluster"}`)
	if _, err := f.prove(context.Background(), rest, tg, "our-cluster", nil); err == nil || !strings.Contains(err.Error(), "their-cluster") {
		t.Errorf("another Kafka cluster: %v", err)
	}
	root.Store(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"our-cluster"}`)
	why, err = f.prove(context.Background(), rest, tg, "our-cluster", nil)
	if err != nil || !strings.Contains(why, "without Connect's") {
		t.Errorf("Connect's GET / but a bare 200 on /health: %q, %v (want a reason to wait)", why, err)
	}
	if why, err := ready(context.Background(), rest, tg); why == "" || err != nil {
		t.Error("a bare 200 on /health counts as ready")
	}
	healthy.Store(true)
	if why, err := f.prove(context.Background(), rest, tg, "our-cluster", nil); err != nil || why != "" {
		t.Errorf("Connect's GET / and /health: %q, %v (want ready)", why, err)
	}
}

// The finder is apply's Workers.
var _ apply.Workers = (*Finder)(nil)

// A worker reached by another name is ours when connectors run on our
// members, even while one still names a worker that just left the group;
// it is another cluster's when nothing runs on a member.
func TestRunsOnMembers(t *testing.T) {
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body.Load().(string)) }))
	defer srv.Close()
	tg, _ := restclient.Parse(srv.URL + "/")
	members := map[string]bool{"http://w1:8083": true}
	st := func(id1, id2 string) string {
		return `{"a":{"status":{"connector":{"state":"RUNNING","worker_id":"` + id1 + `"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"` + id2 + `"}]}}}`
	}
	for _, c := range []struct {
		body    string
		ok      bool
		foreign bool
	}{
		{st("w1:8083", "w1:8083"), true, false},
		{st("w1:8083", "gone:8083"), true, false},
		{st("other:8083", "other:8083"), false, true},
		{`{}`, false, false},
	} {
		body.Store(c.body)
		ok, why, err := runsOnMembers(context.Background(), &restclient.Client{}, tg, members)
		var fe *ForeignError
		if ok != c.ok || errors.As(err, &fe) != c.foreign {
			t.Errorf("%s: ok %v, why %q, err %v", c.body, ok, why, err)
		}
	}
}

// TestProveStopsOnRefusal: a worker answering 401 or 403 (a REST API
// behind credentials) is an answer no wait changes: prove returns the
// *restclient.AuthError, which Find returns at once.
func TestProveStopsOnRefusal(t *testing.T) {
	var rootStatus, healthStatus atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.WriteHeader(int(rootStatus.Load()))
			io.WriteString(w, `{"version":"4.3.1","commit":"c","kafka_cluster_id":"our-cluster"}`)
		case "/health":
			w.WriteHeader(int(healthStatus.Load()))
			io.WriteString(w, `{"status":"healthy"}`)
		}
	}))
	defer srv.Close()
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{Local: true, Config: &settings.Config{GroupID: "g"}}
	rest := &restclient.Client{Auth: restclient.Auth{Username: "u", Password: "p"}}
	for _, tc := range []struct{ root, health, want int32 }{{401, 200, 401}, {200, 401, 401}, {200, 403, 403}} {
		rootStatus.Store(tc.root)
		healthStatus.Store(tc.health)
		_, err := f.prove(context.Background(), rest, tg, "our-cluster", nil)
		var ae *restclient.AuthError
		if !errors.As(err, &ae) || ae.Status != int(tc.want) || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("GET / %d, /health %d: %v (want an AuthError %d naming the URL)", tc.root, tc.health, err, tc.want)
		}
	}
	rootStatus.Store(200)
	healthStatus.Store(200)
	if why, err := f.prove(context.Background(), rest, tg, "our-cluster", nil); why != "" || err != nil {
		t.Errorf("both 200: %q %v", why, err)
	}
}
