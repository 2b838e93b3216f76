//go:build integration

package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// newClusterRounds is how many brand-new clusters get eight prepare at
// once: 1 in CI (the budget), more with CITEST_NEWCLUSTER_ROUNDS.
func newClusterRounds(t *testing.T) int {
	v := os.Getenv("CITEST_NEWCLUSTER_ROUNDS")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CITEST_NEWCLUSTER_ROUNDS=%q: want a whole number of rounds, at least 1", v)
	}
	return n
}

// TestBrandNewCluster is issue 33's first deployment: eight workers'
// connect-init prepare started at the same instant on a cluster that has
// never seen a consumer group (no __consumer_offsets), all of which must
// pass; the first of them to ask FindCoordinator makes the cluster create
// __consumer_offsets while the others read its metadata. On a calm machine
// the lag shows in about one round of eight, so the same cluster then
// makes it happen on purpose, through metaProxy: the coordinator and
// topics gates must wait ("look again") while the proxy answers as a
// lagging broker, pass once it tells the truth, and fail at once on a
// final answer.
func TestBrandNewCluster(t *testing.T) {
	rounds := newClusterRounds(t)
	var c *testbed.Cluster
	for round := 1; round <= rounds; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		cl, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, fmt.Sprintf("newcluster-%d", round))})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("round %d: eight prepare at once", round), func(t *testing.T) { eightAtOnce(ctx, t, cl) })
		cancel()
		if round < rounds {
			cl.Close()
		} else {
			c = cl
		}
	}
	defer c.Close()
	var reals []string
	for id := 1; id <= 3; id++ {
		reals = append(reals, c.Addr(id, "PLAINTEXT"))
	}
	proxy := startMetaProxy(t, reals)

	t.Run("coordinator: __consumer_offsets unknown, then known", func(t *testing.T) {
		coordinatorThroughLie(t, proxy, "proxy-unknown", lieUnknownTopic)
	})
	t.Run("coordinator: the group's partition without a leader, then led", func(t *testing.T) {
		coordinatorThroughLie(t, proxy, "proxy-leaderless", lieLeaderNotAvailable)
	})
	t.Run("coordinator: a final answer fails at once", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		proxy.lie(ConsumerOffsetsTopic, lieTopicAuthorization)
		defer proxy.truth()
		clients := proxyClients(t, proxy)
		log, buf := bufferLog()
		g := &CoordinatorGate{Client: clients.Member, Admin: clients.Admin, GroupID: "proxy-final", Log: log, Wait: true}
		_, err := g.Check(ctx)
		if err == nil || !strings.Contains(err.Error(), "not authorized to access this topic") || strings.Contains(err.Error(), "not yet") {
			t.Fatalf("Check = %v, want a final TOPIC_AUTHORIZATION_FAILED\n%s", err, buf)
		}
		if ctx.Err() != nil || strings.Contains(buf.String(), waitLine) {
			t.Fatalf("the gate waited on a final answer (ctx %v):\n%s", ctx.Err(), buf)
		}
	})
	t.Run("topics: a broker that does not know the topics just created", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		compact := map[string]string{"cleanup.policy": "compact"}
		specs := []settings.TopicSpec{
			{Role: settings.RoleConfig, Name: "lag-configs", Partitions: 1, ReplicationFactor: 3, Configs: compact},
			{Role: settings.RoleOffset, Name: "lag-offsets", Partitions: 5, ReplicationFactor: 3, Configs: compact},
			{Role: settings.RoleStatus, Name: "lag-status", Partitions: 2, ReplicationFactor: 3, Configs: compact},
		}
		proxy.lieOn(1, "lag-status", lieUnknownTopic) // broker 2 lags the creation of one topic
		defer proxy.truth()
		clients := proxyClients(t, proxy)
		log, buf := bufferLog()
		g := &TopicGate{Admin: clients.Admin, Config: clients.AdminConfig, Specs: specs, Log: log, Create: true}
		res := make(chan error, 1)
		go func() {
			_, err := g.Ensure(ctx)
			res <- err
		}()
		waitForLog(ctx, t, buf, waitLine, res)
		lied := proxy.lied()
		proxy.truth()
		if err := <-res; err != nil {
			t.Fatalf("Ensure = %v after the lie ended\n%s", err, buf)
		}
		if lied < 2 {
			t.Errorf("the proxy lied %d times before the truth, want at least 2", lied)
		}
		t.Logf("topics gate: waited through %d lagging answers", lied)
	})
}

// eightAtOnce starts eight prepare of one Connect cluster at the same
// instant and wants every one to pass.
func eightAtOnce(ctx context.Context, t *testing.T, c *testbed.Cluster) {
	const n = 8
	procs := make([]*testbed.Process, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		env := gateEnv(c, "first-deployment", "CONNECT_INIT_TIMEOUT=2m", fmt.Sprintf("CONNECT_REST_ADVERTISED_HOST_NAME=worker-%d", i))
		p, err := testbed.StartProcess(fmt.Sprintf("prepare-%d", i), []string{binary, "prepare"}, env, workDir,
			filepath.Join(c.Opts.Dir, fmt.Sprintf("prepare-%d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Kill()
		procs[i] = p
	}
	codes := make([]int, n)
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := p.ExitCode(ctx)
			if err != nil {
				code = -1
			}
			codes[i] = code
		}()
	}
	wg.Wait()
	waited := 0
	what := map[string]int{}
	for i, p := range procs {
		if codes[i] != 0 {
			t.Errorf("prepare %d: exit %d\n%s", i, codes[i], p.Log())
		}
		if strings.Contains(p.Log(), "waiting for the cluster to finish creating or moving") {
			waited++
		}
		for _, line := range strings.Split(p.Log(), "\n") {
			if i := strings.Index(line, "waiting_for="); i >= 0 && strings.Contains(line, "finish creating or moving") {
				what[strings.SplitN(line[i:], " answer=", 2)[0]]++
			}
		}
	}
	t.Logf("eight prepare at once on a brand-new cluster: all done in %s; %d of them logged a look again on a cluster at work: %v",
		time.Since(start).Round(time.Millisecond), waited, what)
}

// coordinatorThroughLie runs the coordinator gate through the proxy while
// it answers code for __consumer_offsets, until the gate's wait line
// shows; then the proxy tells the truth and the gate must pass.
func coordinatorThroughLie(t *testing.T, proxy *metaProxy, group string, code int16) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	proxy.lie(ConsumerOffsetsTopic, code)
	defer proxy.truth()
	clients := proxyClients(t, proxy)
	log, buf := bufferLog()
	g := &CoordinatorGate{Client: clients.Member, Admin: clients.Admin, GroupID: group, Log: log, Wait: true}
	type answer struct {
		rep *CoordinatorReport
		err error
	}
	res := make(chan answer, 1)
	errs := make(chan error, 1)
	go func() {
		rep, err := g.Check(ctx)
		res <- answer{rep, err}
		errs <- err
	}()
	waitForLog(ctx, t, buf, waitLine, errs)
	lied := proxy.lied()
	proxy.truth()
	a := <-res
	if a.err != nil {
		t.Fatalf("Check = %v after the lie ended\n%s", a.err, buf)
	}
	if a.rep.Partitions != 50 || a.rep.Leader < 0 || len(a.rep.Replicas) == 0 {
		t.Fatalf("report %+v, want the group's partition of 50 with its leader and replicas", a.rep)
	}
	if !strings.Contains(buf.String(), `waiting_for="__consumer_offsets in the metadata`) {
		t.Errorf("the wait line does not say what it waits for:\n%s", buf)
	}
	t.Logf("coordinator gate: waited through %d lying answers (code %d), then passed", lied, code)
}

// waitForLog waits until buf holds want, failing the test when the gate
// returns first (done) or ctx ends.
func waitForLog(ctx context.Context, t *testing.T, buf *syncBuffer, want string, done <-chan error) {
	t.Helper()
	for !strings.Contains(buf.String(), want) {
		select {
		case err := <-done:
			t.Fatalf("the gate returned (%v) before waiting:\n%s", err, buf)
		case <-ctx.Done():
			t.Fatalf("no %s within the gate's timeout:\n%s", want, buf)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// proxyClients are the gates' clients, as kafka.NewClients builds them,
// bootstrapped at the proxies.
func proxyClients(t *testing.T, proxy *metaProxy) *kafka.Clients {
	props := workerconfig.Properties{"bootstrap.servers": strings.Join(proxy.bootstrap(), ",")}
	member, err := kafka.SaramaConfig(props, workerconfig.ClientMember)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kafka.SaramaConfig(props, workerconfig.ClientAdmin)
	if err != nil {
		t.Fatal(err)
	}
	clients := &kafka.Clients{MemberConfig: member, AdminConfig: admin}
	// Seeded with a topic nobody creates: the lies are about
	// __consumer_offsets, and the gates' own reads must meet them.
	if err := clients.Connect(proxy.bootstrap(), []string{"connect-init-no-such-topic"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(clients.Close)
	return clients
}
