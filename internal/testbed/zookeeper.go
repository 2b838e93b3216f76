package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ZooKeeperVersion is the Kafka version the ZooKeeper-mode smoke test runs
// on: 3.4, the Kafka of Confluent Platform 7.4 (incident 1's), whose
// runtime dependencies include ZooKeeper's server (3.6.4).
const ZooKeeperVersion = "3.4.1"

// zkBrokerStarted is what a ZooKeeper-mode broker (kafka.server.KafkaServer)
// logs once it serves: "[KafkaServer id=1] started (kafka.server.KafkaServer)".
const zkBrokerStarted = "] started (kafka.server.KafkaServer)"

// zooKeeper is the cluster's one ZooKeeper server.
type zooKeeper struct {
	port int
	proc *Process
}

// ZooKeeperConnect is the brokers' zookeeper.connect ("127.0.0.1:port"),
// "" for a KRaft cluster.
func (c *Cluster) ZooKeeperConnect() string {
	if c.zk == nil {
		return ""
	}
	return fmt.Sprintf("127.0.0.1:%d", c.zk.port)
}

// startZooKeeper starts one standalone ZooKeeper server (QuorumPeerMain
// with a one-server config, as Kafka's zookeeper-server-start.sh runs it)
// on a loopback port, with a fast tick so that test brokers may use short
// sessions (2 to 20 ticks), and waits until it accepts connections.
func (c *Cluster) startZooKeeper(ctx context.Context) error {
	dir := filepath.Join(c.Opts.Dir, "zookeeper")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	cfg := filepath.Join(dir, "zookeeper.properties")
	if err := writeProperties(cfg, map[string]string{
		"tickTime":           "500",
		"initLimit":          "10",
		"syncLimit":          "5",
		"dataDir":            filepath.Join(dir, "data"),
		"clientPort":         itoa(port),
		"clientPortAddress":  "127.0.0.1",
		"maxClientCnxns":     "0",
		"admin.enableServer": "false", // its Jetty would bind 8080
	}); err != nil {
		return err
	}
	argv := append([]string{"java"}, JVMFlags(128, c.Opts.Dir)...)
	argv = append(argv, "-cp", c.Dist.Classpath(), "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	p, err := StartProcess("zookeeper", argv, nil, dir, filepath.Join(dir, "zookeeper.log"))
	if err != nil {
		return err
	}
	c.zk = &zooKeeper{port: port, proc: p}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := WaitForPort(wctx, c.ZooKeeperConnect()); err != nil {
		p.Kill()
		return fmt.Errorf("%w; ZooKeeper log tail:\n%s", err, tail(p.Log(), 3000))
	}
	return nil
}

// writeZooKeeperBrokerConfig writes a ZooKeeper-mode broker's properties:
// broker.id, zookeeper.connect, the INTERNAL and PLAINTEXT listeners (and
// the extra ones) on loopback, and the same small-cluster settings as the
// KRaft nodes.
func (c *Cluster) writeZooKeeperBrokerConfig(n *Node) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return err
	}
	protoMap := []string{"INTERNAL:PLAINTEXT", "PLAINTEXT:PLAINTEXT"}
	listeners := []string{
		fmt.Sprintf("INTERNAL://127.0.0.1:%d", n.Ports["INTERNAL"]),
		fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", n.Ports["PLAINTEXT"]),
	}
	props := c.brokerProps(n, protoMap, listeners)
	props["broker.id"] = itoa(n.ID)
	props["zookeeper.connect"] = c.ZooKeeperConnect()
	return c.writeNodeProps(n, props)
}

// ZooKeeperLog returns everything the ZooKeeper server has logged so far
// ("" for a KRaft cluster): its own account of sessions, such as
// "Expiring session 0x..., timeout of 6000ms exceeded".
func (c *Cluster) ZooKeeperLog() string {
	if c.zk == nil {
		return ""
	}
	return c.zk.proc.Log()
}
