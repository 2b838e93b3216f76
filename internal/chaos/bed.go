//go:build integration

package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/IBM/sarama"
	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/connect-init/connect-init/internal/testbed"
)

// Bed is a 3-broker KRaft cluster, the binaries a round runs and one
// toxiproxy per broker.
//
// Why proxies this way: a Kafka client connects to the bootstrap address
// and then to each broker's advertised address, so a proxy only in front of
// the bootstrap address would be bypassed after the first metadata answer.
// Every broker therefore gets an extra listener, CHAOS, whose advertised
// address is its proxy's; the proxied contender is given the proxies as
// bootstrap.servers and so reaches every broker only through them, while
// the other contenders and the brokers themselves (INTERNAL listener) are
// untouched. Network namespaces would need root; this needs nothing.
type Bed struct {
	Dir     string
	Cluster *testbed.Cluster
	// Binary is connect-init; Mutant the same with -tags lockmutant
	// (claims are never validated); Standin the stand-in worker.
	Binary, Mutant, Standin string
	Proxies                 map[int]*toxiproxy.Proxy
	ProxyBootstrap          string
}

// NewBed starts a brand-new cluster (no consumer group ever used, so no
// __consumer_offsets) and builds the binaries.
func NewBed(ctx context.Context, dir string) (*Bed, error) {
	b := &Bed{Dir: dir, Proxies: map[int]*toxiproxy.Proxy{}}
	root, err := testbed.RepoRoot()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		out, pkg string
		tags     string
	}{{"connect-init", "./cmd/connect-init", ""}, {"connect-init-mutant", "./cmd/connect-init", "lockmutant"}, {"standin", "./internal/bench/standin", ""}} {
		args := []string{"build", "-o", filepath.Join(bin, x.out)}
		if x.tags != "" {
			args = append(args, "-tags", x.tags)
		}
		cmd := exec.Command("go", append(args, x.pkg)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("chaos: go build %s: %w\n%s", x.pkg, err, out)
		}
	}
	b.Binary, b.Mutant, b.Standin = filepath.Join(bin, "connect-init"), filepath.Join(bin, "connect-init-mutant"), filepath.Join(bin, "standin")

	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		return nil, err
	}
	proxyPorts := map[int]int{}
	override := map[int]map[string]string{}
	var boot []string
	for id := 1; id <= 3; id++ {
		p, err := testbed.FreePort()
		if err != nil {
			return nil, err
		}
		proxyPorts[id] = p
		override[id] = map[string]string{"CHAOS": fmt.Sprintf("127.0.0.1:%d", p)}
		boot = append(boot, fmt.Sprintf("127.0.0.1:%d", p))
	}
	b.ProxyBootstrap = strings.Join(boot, ",")
	b.Cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{
		Brokers: 3, Dir: filepath.Join(dir, "cluster"), HeapMB: 384,
		Listeners:          []testbed.Listener{{Name: "CHAOS", Protocol: "PLAINTEXT"}},
		AdvertisedOverride: override,
	})
	if err != nil {
		return nil, err
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for id := 1; id <= 3; id++ {
		p := toxiproxy.NewProxy(srv, fmt.Sprintf("broker-%d", id), fmt.Sprintf("127.0.0.1:%d", proxyPorts[id]), b.Cluster.Addr(id, "CHAOS"))
		if err := p.Start(); err != nil {
			b.Close()
			return nil, fmt.Errorf("chaos: proxy for broker %d: %w", id, err)
		}
		b.Proxies[id] = p
	}
	return b, nil
}

// Close stops the proxies and the cluster.
func (b *Bed) Close() {
	for _, p := range b.Proxies {
		p.Stop()
	}
	if b.Cluster != nil {
		b.Cluster.Close()
	}
}

// client is a fresh sarama client on the brokers' PLAINTEXT listeners.
func (b *Bed) client() (sarama.Client, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.Retry.Backoff = 100 * time.Millisecond
	cfg.Net.DialTimeout = 2 * time.Second
	cfg.Consumer.Return.Errors = true
	var addrs []string
	for id := 1; id <= 3; id++ {
		if b.Cluster.Running(id) {
			addrs = append(addrs, b.Cluster.Addr(id, "PLAINTEXT"))
		}
	}
	return sarama.NewClient(addrs, cfg)
}

// leader returns the broker leading partition 0 of topic, -1 if none.
func (b *Bed) leader(topic string) int {
	c, err := b.client()
	if err != nil {
		return -1
	}
	defer c.Close()
	if err := c.RefreshMetadata(topic); err != nil {
		return -1
	}
	l, err := c.Leader(topic, 0)
	if err != nil {
		return -1
	}
	return int(l.ID())
}

// coordinator returns the broker coordinating group, -1 if none.
func (b *Bed) coordinator(group string) int {
	c, err := b.client()
	if err != nil {
		return -1
	}
	defer c.Close()
	co, err := c.Coordinator(group)
	if err != nil {
		return -1
	}
	return int(co.ID())
}

// moveLeader makes another replica of topic's partition 0 its preferred
// leader (a reassignment that only reorders the replicas) and elects it:
// the controlled leader move of an operator's rebalance.
func (b *Bed) moveLeader(topic string) (from, to int, err error) {
	c, err := b.client()
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	if err := c.RefreshMetadata(topic); err != nil {
		return 0, 0, err
	}
	l, err := c.Leader(topic, 0)
	if err != nil {
		return 0, 0, err
	}
	reps, err := c.Replicas(topic, 0)
	if err != nil {
		return 0, 0, err
	}
	from = int(l.ID())
	var order []int32
	for _, r := range reps {
		if int(r) != from && b.Cluster.Running(int(r)) && len(order) == 0 {
			order = append(order, r)
		}
	}
	if len(order) == 0 {
		return from, from, fmt.Errorf("chaos: no other live replica of %s", topic)
	}
	for _, r := range reps {
		if r != order[0] {
			order = append(order, r)
		}
	}
	admin, err := sarama.NewClusterAdminFromClient(c)
	if err != nil {
		return 0, 0, err
	}
	if err := admin.AlterPartitionReassignments(topic, [][]int32{order}); err != nil {
		return 0, 0, fmt.Errorf("chaos: reorder replicas of %s: %w", topic, err)
	}
	time.Sleep(500 * time.Millisecond) // let the reassignment (no data moves) complete
	if _, err := admin.ElectLeaders(sarama.PreferredElection, map[string][]int32{topic: {0}}); err != nil {
		return from, int(order[0]), fmt.Errorf("chaos: preferred election of %s: %w", topic, err)
	}
	return from, int(order[0]), nil
}

// readTopic returns every record of the lock topic, decoded.
func (b *Bed) readTopic(ctx context.Context, topic string) ([]Record, error) {
	c, err := b.client()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	newest, err := c.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		return nil, err
	}
	if newest == 0 {
		return nil, nil
	}
	cons, err := sarama.NewConsumerFromClient(c)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, err
	}
	defer pc.AsyncClose()
	var out []Record
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		select {
		case m := <-pc.Messages():
			out = append(out, decode(m.Offset, m.Timestamp, m.Key, m.Value))
			if m.Offset+1 >= newest {
				return out, nil
			}
		case err := <-pc.Errors():
			return out, err
		case <-ctx.Done():
			return out, fmt.Errorf("chaos: reading %s: %w", topic, ctx.Err())
		}
	}
}
