//go:build integration

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/gate/peers/peerstest"
	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/restclient"
)

// healthcheckResult is one run of `connect-init healthcheck`.
type healthcheckResult struct {
	code int
	out  string
	took time.Duration
}

// runHealthcheck runs the real binary against the worker props describe,
// configured as in the image: CONNECT_* variables.
func runHealthcheck(ctx context.Context, t *testing.T, props map[string]string, extra ...string) healthcheckResult {
	t.Helper()
	env := append(append(baseEnv(), envFromProps(props)...), extra...)
	start := time.Now()
	code, out, err := testbed.Run(ctx, binary, []string{"healthcheck"}, env)
	if err != nil {
		t.Fatalf("connect-init healthcheck: %v\n%s", err, out)
	}
	return healthcheckResult{code: code, out: strings.TrimSpace(out), took: time.Since(start)}
}

// restGet returns the status of GET base+path, 0 when it does not answer.
func restGet(base, path string) int {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(strings.TrimSuffix(base, "/") + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHealthcheckRealWorker follows one real worker through its life:
// launched (not healthy), joined (healthy), frozen with SIGSTOP (not
// healthy, within the short timeout), thawed (healthy again). It also
// checks that a bad listener setting is exit 2.
func TestHealthcheckRealWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	props, err := cluster.WorkerProps(uniqueGroup(t, "hc"))
	if err != nil {
		t.Fatal(err)
	}
	w := startTestWorker(t, props["group.id"], props)

	// Right after launch: the JVM has not even bound its port.
	r := runHealthcheck(ctx, t, props)
	if r.code != exitcode.Failed || !strings.HasPrefix(r.out, "not healthy:") || strings.Count(r.out, "\n") != 0 {
		t.Fatalf("just launched: exit %d, %q", r.code, r.out)
	}
	t.Logf("just launched: exit %d in %s: %s", r.code, r.took.Round(time.Millisecond), r.out)

	// While it starts: never 0 before GET /health is 200; note what the
	// operator sees, and whether GET / answered while the worker was not
	// ready yet (it is no readiness signal).
	reasons := map[string]bool{}
	rootAnsweredEarly := false
	for {
		r = runHealthcheck(ctx, t, props)
		if r.code == exitcode.OK {
			break
		}
		if r.code != exitcode.Failed {
			t.Fatalf("while starting: exit %d, %q", r.code, r.out)
		}
		reasons[probeNameRE.ReplaceAllString(r.out, restclient.ProbeConnectorPrefix+"*")] = true
		if restGet(w.Spec.RESTURL, "/") == 200 && restGet(w.Spec.RESTURL, "/health") != 200 {
			rootAnsweredEarly = true
		}
		select {
		case <-ctx.Done():
			t.Fatalf("worker never became healthy; last: %q; log tail:\n%s", r.out, logTail(w.Log(), 4000))
		case <-w.Done():
			t.Fatalf("worker exited; log tail:\n%s", logTail(w.Log(), 4000))
		case <-time.After(100 * time.Millisecond):
		}
	}
	for reason := range reasons {
		t.Logf("while starting: %s", reason)
	}
	t.Logf("GET / answered 200 while /health did not: %v", rootAnsweredEarly)
	if !strings.HasPrefix(r.out, "healthy: GET /health answered 200") {
		t.Errorf("ready: %q", r.out)
	}
	if got := restGet(w.Spec.RESTURL, "/health"); got != 200 {
		t.Errorf("healthcheck passed but GET /health = %d", got)
	}

	// Frozen: the port accepts connections (the kernel does), nothing
	// answers. A smaller CONNECT_INIT_TIMEOUT shortens the wait.
	if err := w.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r = runHealthcheck(ctx, t, props, "CONNECT_INIT_TIMEOUT=2s")
	if err := w.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r.code != exitcode.Failed || !strings.Contains(r.out, "no answer within the timeout") {
		t.Errorf("stopped worker: exit %d, %q", r.code, r.out)
	}
	if r.took < 1500*time.Millisecond || r.took > 4*time.Second {
		t.Errorf("stopped worker: healthcheck took %s, want about 2s", r.took)
	}
	// A larger timeout does not lengthen the default 5s bound; checked on a
	// stopped worker again.
	if err := w.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r = runHealthcheck(ctx, t, props, "CONNECT_INIT_TIMEOUT=10m")
	_ = w.Signal(syscall.SIGCONT)
	if r.code != exitcode.Failed || r.took > 8*time.Second {
		t.Errorf("stopped worker, CONNECT_INIT_TIMEOUT=10m: exit %d after %s, %q", r.code, r.took, r.out)
	}

	// Thawed: healthy again (after a rebalance if its session expired).
	deadline := time.Now().Add(90 * time.Second)
	for {
		r = runHealthcheck(ctx, t, props)
		if r.code == exitcode.OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thawed worker not healthy after 90s: %q", r.out)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// Bad configuration is exit 1, "unhealthy" with the setting named:
	// Docker's HEALTHCHECK reserves 2.
	// (The worker settings are read as run reads them, so they are whole
	// but for the listener.)
	bad := maps.Clone(props)
	bad["listeners"] = "http://127.0.0.1:0"
	if r = runHealthcheck(ctx, t, bad); r.code != exitcode.Unhealthy || !strings.Contains(r.out, "listeners") {
		t.Errorf("port 0: exit %d, %q", r.code, r.out)
	}
	if r = runHealthcheck(ctx, t, props, "CONNECT_INIT_WORKER_CONFIG=/nonexistent/worker.properties"); r.code != exitcode.Unhealthy {
		t.Errorf("missing worker file: exit %d, %q", r.code, r.out)
	}
}

var probeNameRE = regexp.MustCompile(regexp.QuoteMeta(restclient.ProbeConnectorPrefix) + `[0-9a-f]+`)

// TestHealthcheckLoopingWorker: a worker that shares group.id with another
// Connect cluster but reads a different config topic never reaches the
// group's assignment offset and loops on "Forcing rebalance" (incident 1).
// Its REST server answers GET / all along, so only a readiness check that
// goes through the herder tells the truth: healthcheck must say 1.
func TestHealthcheckLoopingWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "hcloop")
	topics := func(cl string) map[string]string {
		id := g["group.id"]
		return map[string]string{"group.id": id,
			"config.storage.topic": id + "-" + cl + "-configs",
			"offset.storage.topic": id + "-" + cl + "-offsets",
			"status.storage.topic": id + "-" + cl + "-status"}
	}
	bProps, err := cluster.WorkerProps(topics("b"))
	if err != nil {
		t.Fatal(err)
	}
	b := startTestWorker(t, g["group.id"]+"-b", bProps)
	if err := b.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if r := runHealthcheck(ctx, t, bProps); r.code != exitcode.OK {
		t.Fatalf("first cluster's worker: exit %d, %q", r.code, r.out)
	}

	aProps, err := cluster.WorkerProps(topics("a"))
	if err != nil {
		t.Fatal(err)
	}
	a := startTestWorker(t, g["group.id"]+"-a", aProps)
	waitCtx, waitCancel := context.WithTimeout(ctx, 90*time.Second)
	defer waitCancel()
	if err := a.WaitForLog(waitCtx, "Forcing rebalance"); err != nil {
		t.Fatalf("the second cluster's worker did not loop: %v; log tail:\n%s", err, logTail(a.Log(), 4000))
	}
	// Several looks while it loops: never healthy, while GET / answers.
	rootOK := 0
	for i := 0; i < 3; i++ {
		r := runHealthcheck(ctx, t, aProps)
		if r.code != exitcode.Failed || !strings.HasPrefix(r.out, "not healthy:") {
			t.Fatalf("looping worker, look %d: exit %d, %q", i, r.code, r.out)
		}
		t.Logf("looping worker, look %d (%d \"Forcing rebalance\" so far): %s", i, a.CountInLog("Forcing rebalance"), r.out)
		if restGet(a.Spec.RESTURL, "/") == 200 {
			rootOK++
		}
	}
	if rootOK == 0 {
		t.Errorf("GET / never answered on the looping worker; the test no longer shows why GET / is not readiness")
	}
}

// TestPeerNamesRealWorkers is issue 7 part 7: real workers advertise their
// own host names, which a DNS server run by the test (on 127.0.0.1, asked
// through an injected resolver) resolves or not; /etc/hosts is untouched
// and this machine's real interface addresses are used. The member URLs
// come from the real group (DescribeGroups, decoded, leader first), as run
// will get them.
func TestPeerNamesRealWorkers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dns, err := peerstest.StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	defer dns.Close()

	g := uniqueGroup(t, "names")
	domain := g["group.id"] + ".connect-init.test"
	nameA, nameB := "worker-a."+domain, "worker-b."+domain
	dns.Set(nameA, "127.0.0.1")
	// worker-b has no record yet: its name does not resolve from here.

	start := func(name, host string) (*testbed.Worker, map[string]string) {
		extra := map[string]string{"rest.advertised.host.name": host}
		for k, v := range g {
			extra[k] = v
		}
		props, err := cluster.WorkerProps(extra)
		if err != nil {
			t.Fatal(err)
		}
		w := startTestWorker(t, g["group.id"]+"-"+name, props)
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		return w, props
	}
	a, _ := start("a", nameA) // first: the leader
	b, _ := start("b", nameB)
	urlA := "http://" + nameA + ":" + portOf(t, a.Spec.RESTURL) + "/"
	urlB := "http://" + nameB + ":" + portOf(t, b.Spec.RESTURL) + "/"

	leader, members := groupURLs(ctx, t, g["group.id"], 2)
	t.Logf("group %s: leader %s, members %v", g["group.id"], leader, members)
	if leader != urlA || len(members) != 2 || members[0] != urlA || members[1] != urlB {
		t.Fatalf("group URLs: leader %s, members %v; want leader %s, members [%s %s]", leader, members, urlA, urlA, urlB)
	}

	// The self-probe binds the own URL's port on 127.0.0.1 (listen), as
	// a worker about to start would: a fresh port for a worker that is
	// not running yet, a running worker's port to see it taken.
	gate := func(t *testing.T, policy, listen string) peers.Gate {
		return peers.Gate{
			Policy:        policy,
			Resolver:      dns.Resolver(),
			Self:          peers.SelfProbe{Listen: listen},
			Log:           hcTestLogger(t),
			WarnWait:      time.Second,
			ProbeTimeout:  2 * time.Second,
			RetryInterval: 200 * time.Millisecond,
		}
	}
	freeListen := func(t *testing.T) (listen, port string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		_, port, _ = net.SplitHostPort(l.Addr().String())
		return l.Addr().String(), port
	}
	checkAt := func(t *testing.T, policy, own, listen string, d time.Duration, lock ...string) (*peers.Report, error) {
		cctx, ccancel := context.WithTimeout(ctx, d)
		defer ccancel()
		return gate(t, policy, listen).Check(cctx, own, leader, members, lock)
	}
	// check: own is name's URL on a fresh port (a worker about to start).
	check := func(t *testing.T, policy, name string, d time.Duration, lock ...string) (*peers.Report, string, error) {
		listen, port := freeListen(t)
		own := "http://" + name + ":" + port + "/"
		rep, err := checkAt(t, policy, own, listen, d, lock...)
		return rep, own, err
	}
	result := func(rep *peers.Report, u string) peers.PeerResult {
		for _, r := range rep.Peers {
			if r.URL == u {
				return r
			}
		}
		t.Fatalf("no result for %s: %+v", u, rep.Peers)
		return peers.PeerResult{}
	}

	t.Run("own name resolves to us, member name missing", func(t *testing.T) {
		// As a restarted worker A sees it: its own name leads to its own
		// listener; B, an ordinary member, does not resolve.
		rep, own, err := check(t, "", nameA, 3*time.Second)
		if err != nil {
			t.Fatalf("default policy: %v", err)
		}
		if r := result(rep, own); r.Source != peers.SourceOwn || r.Status != peers.StatusSelf {
			t.Errorf("own: %+v", r)
		}
		if r := result(rep, urlB); r.Source != peers.SourceMember || r.Status != peers.StatusUnresolved || r.Severity != peers.SeverityWarn {
			t.Errorf("member B: %+v", r)
		}
		if _, _, err := check(t, "warn", nameA, 3*time.Second); err != nil {
			t.Errorf("warn policy: %v", err)
		}
		rep, _, err = check(t, "fail", nameA, 2*time.Second)
		var ge *peers.GateError
		if !asGate(err, &ge) || !strings.Contains(ge.Error(), nameB) {
			t.Errorf("fail policy: %v", err)
		}
		if r := result(rep, urlB); r.Severity != peers.SeverityFail {
			t.Errorf("fail policy, member B: %+v", r)
		}
		rep, _, err = check(t, "off", nameA, time.Second)
		if err != nil || !rep.Skipped {
			t.Errorf("off: %v %+v", err, rep)
		}
	})

	t.Run("own port taken by the running worker", func(t *testing.T) {
		// A second worker started with A's URL in A's network namespace:
		// A's JVM holds the port, and the message says so.
		rep, err := checkAt(t, "", urlA, "127.0.0.1:"+portOf(t, a.Spec.RESTURL), 2*time.Second)
		var ge *peers.GateError
		if !asGate(err, &ge) {
			t.Fatalf("err = %v", err)
		}
		own := result(rep, urlA)
		if own.Status != peers.StatusPortTaken || !strings.Contains(own.Error, "port "+portOf(t, a.Spec.RESTURL)) || !strings.Contains(own.Error, "(java)") {
			t.Errorf("own: %+v", own)
		}
	})

	t.Run("own name missing", func(t *testing.T) {
		// As a worker about to start as B sees it: its own name does not
		// resolve (fail, with the fix), while the leader A resolves and
		// answers GET / for real.
		rep, own, err := check(t, "", nameB, 2*time.Second)
		var ge *peers.GateError
		if !asGate(err, &ge) {
			t.Fatalf("err = %v", err)
		}
		r := result(rep, own)
		if r.Status != peers.StatusUnresolved || !strings.Contains(r.Fix, "CONNECT_REST_ADVERTISED_HOST_NAME") || !strings.Contains(r.Error, "127.0.0.1") {
			t.Errorf("own: %+v", r)
		}
		if r := result(rep, urlA); r.Source != peers.SourceLeader || r.Status != peers.StatusOK || r.HTTPStatus != 200 {
			t.Errorf("leader A: %+v", r)
		}
	})

	t.Run("own name leads to another worker", func(t *testing.T) {
		// B's name resolves to 127.0.0.1, and B's advertised port is A's:
		// every request is answered by the real worker A, without our
		// token, while our listener waits on 127.0.0.2.
		dns.Set(nameB, "127.0.0.1")
		defer dns.Delete(nameB)
		own := "http://" + nameB + ":" + portOf(t, a.Spec.RESTURL) + "/"
		rep, err := checkAt(t, "", own, "127.0.0.2:"+portOf(t, a.Spec.RESTURL), 2*time.Second)
		var ge *peers.GateError
		if !asGate(err, &ge) {
			t.Fatalf("err = %v", err)
		}
		r := result(rep, own)
		if r.Status != peers.StatusOtherHost || !strings.Contains(r.Error, "0 of 8") || !strings.Contains(r.Error, "without our token") {
			t.Errorf("own: %+v", r)
		}
	})

	t.Run("member name appears late", func(t *testing.T) {
		// Overlay DNS lag: B's record appears while the check runs; with
		// policy fail the check waits for it and then probes B for real.
		go func() {
			time.Sleep(time.Second)
			dns.Set(nameB, "127.0.0.1")
		}()
		defer dns.Delete(nameB)
		rep, _, err := check(t, "fail", nameA, 30*time.Second, urlB)
		if err != nil {
			t.Fatal(err)
		}
		if r := result(rep, urlB); r.Status != peers.StatusOK || r.HTTPStatus != 200 || r.Source != peers.SourceMember {
			t.Errorf("member B: %+v", r)
		}
	})
}

func asGate(err error, ge **peers.GateError) bool {
	return errors.As(err, ge) && strings.HasPrefix((*ge).Error(), "peers gate: ")
}

// hcTestLogger sends a gate's log to t.Log.
func hcTestLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(hcLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type hcLogWriter struct{ t *testing.T }

func (w hcLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func portOf(t *testing.T, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// groupURLs waits until the group shows want members with decoded metadata
// and returns the leader's URL and all URLs, leader first, exactly as
// DescribeGroups gives them.
func groupURLs(ctx context.Context, t *testing.T, groupID string, want int) (string, []string) {
	t.Helper()
	admin := newAdmin(t)
	var last string
	for ctx.Err() == nil {
		descs, err := admin.DescribeConsumerGroups([]string{groupID})
		if err == nil && len(descs) == 1 && descs[0].State == "Stable" {
			d := descs[0]
			var ms []proto.Member
			for id, m := range d.Members {
				cm := proto.Member{MemberID: id, ClientID: m.ClientId, ClientHost: m.ClientHost, ProtocolType: d.ProtocolType, Protocol: d.Protocol}
				cm.Decode(m.MemberMetadata, m.MemberAssignment)
				ms = append(ms, cm)
			}
			urls := proto.LeaderFirstURLs(ms)
			leader := ""
			for _, m := range ms {
				if m.Assignment != nil {
					leader = m.Assignment.LeaderURL
					break
				}
			}
			if len(urls) == want && leader != "" {
				return leader, urls
			}
			last = fmt.Sprintf("%d members, URLs %v", len(d.Members), urls)
		} else if err == nil && len(descs) == 1 {
			last = "state " + descs[0].State
		} else {
			last = fmt.Sprint(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("group %s never showed %d members: %s", groupID, want, last)
	return "", nil
}
