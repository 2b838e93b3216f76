package apply

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// Waiting costs nothing (issue 48): apply's wait for connectors that never
// run, over two hours of injected time (--wait=2h), reads their status at
// most once per Poll (1 s) and logs its wait line once every 5 s.
func TestWaitPace(t *testing.T) {
	pending := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "UNASSIGNED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{}, status: pending}
	srv := httptest.NewServer(f)
	defer srv.Close()
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	const horizon = 2 * time.Hour
	clk := clock.NewStepping(time.Unix(0, 0))
	var out, logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	res := Run(context.Background(), &API{REST: &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}, Target: tg, Clock: clk},
		[]Connector{conn("a", "", "connector.class", "C")}, Options{Out: &out, Log: log, Clock: clk, Wait: horizon})
	if res.Code != exitcode.Failed {
		t.Fatalf("exit %d, want 1 (not running after the wait)\n%s", res.Code, out.String())
	}
	if w := clk.Waited(); w < horizon || w > horizon+time.Minute {
		t.Fatalf("waited %v of injected time, want %v", w, horizon)
	}
	f.mu.Lock()
	lists := f.lists
	f.mu.Unlock()
	if most := int(horizon/DefaultPoll) + 5; lists > most {
		t.Errorf("%d status reads in %v, want at most %d (one a second)", lists, horizon, most)
	}
	if n, most := strings.Count(logs.String(), "waiting for the connectors"), int(horizon/(5*time.Second))+2; n > most || n == 0 {
		t.Errorf("%d wait lines in %v, want between 1 and %d (one every 5 s)", n, horizon, most)
	}
}
