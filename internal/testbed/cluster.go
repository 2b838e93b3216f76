package testbed

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/connect-init/connect-init/workerconfig"
)

// Listener is an extra client listener every broker gets, e.g.
// {Name: "SSL", Protocol: "SSL"} or {Name: "SASL", Protocol: "SASL_SSL"}.
// Listener-scoped broker settings go in ClusterOptions.BrokerProps with
// their full names ("listener.name.ssl.ssl.client.auth").
type Listener struct {
	Name     string
	Protocol string
}

// ClusterOptions describes a test cluster. Zero values give one broker.
type ClusterOptions struct {
	// Brokers is the number of combined broker+controller nodes (1 to 3).
	Brokers int
	// Dir holds storage, configs and logs; required.
	Dir string
	// HeapMB is each broker's heap (default 256).
	HeapMB int
	// BrokerProps are extra server properties for every node.
	BrokerProps map[string]string
	// NodeProps are extra server properties for one node (by node id, 1-based).
	NodeProps map[int]map[string]string
	// Listeners are client listeners besides PLAINTEXT.
	Listeners []Listener
	// JVMOptions are extra JVM flags for every broker, e.g.
	// -Djava.security.krb5.conf for GSSAPI listeners.
	JVMOptions []string
	// AdvertisedOverride replaces the advertised address of a node's client
	// listener: node id -> listener name -> host:port. Brokers then still
	// talk to each other over the internal listener.
	AdvertisedOverride map[int]map[string]string
	// Controllers is how many nodes (the first ones) are KRaft controllers
	// as well as brokers; 0 means all. A cluster with one controller can run
	// with only node 1 up, as incident 2 needs.
	Controllers int
	// StartNodes lists the nodes to start now (default all). The others are
	// formatted and can be started later with Start: "brokers started late".
	StartNodes []int
	// DedicatedController adds one controller-only node, id Brokers+1 (see
	// ControllerID), as the only KRaft voter, started first and never
	// stopped: every broker can then be stopped or killed and the quorum
	// lives on (incident 2 with a killed broker). Controllers is ignored.
	DedicatedController bool
	// ZooKeeper runs the cluster in ZooKeeper mode (Kafka before 4.0, such
	// as 3.4, the Kafka of Confluent Platform 7.4): one ZooKeeper server in
	// its own JVM and Brokers brokers registered in it by broker.id, no
	// KRaft controller. Controllers and DedicatedController must be unset.
	// Mode() tells it from $CITEST_KAFKA_MODE.
	ZooKeeper bool
}

// ControllerID is the id of the dedicated controller node, or 0 without one.
func (c *Cluster) ControllerID() int {
	if c.Opts.DedicatedController {
		return c.Opts.Brokers + 1
	}
	return 0
}

// Cluster is a running KRaft cluster of combined nodes on loopback, or a
// ZooKeeper-mode cluster (ClusterOptions.ZooKeeper).
type Cluster struct {
	Dist *Dist
	Opts ClusterOptions

	mu    sync.Mutex
	nodes map[int]*Node
	zk    *zooKeeper // ZooKeeper mode only
}

// Node is one combined broker+controller.
type Node struct {
	ID    int
	Ports map[string]int // listener name -> port (INTERNAL, CONTROLLER, PLAINTEXT, extras)
	dir   string
	props string
	proc  *Process
	seq   int
}

const log4j2Config = `status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = info
logger.reflections.name = org.reflections
logger.reflections.level = error
logger.jetty.name = org.eclipse.jetty
logger.jetty.level = warn
`

// JVMFlags are the flags every test JVM gets: small heap, fast start.
func JVMFlags(heapMB int, dir string) []string {
	return []string{
		fmt.Sprintf("-Xms%dm", heapMB/2), fmt.Sprintf("-Xmx%dm", heapMB),
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
		"-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(dir, "log4j2.properties"),
	}
}

// StartCluster formats and starts a cluster and waits until every started
// node has logged "Kafka Server started". Ports are picked free a moment
// before the brokers bind them, so another process on a shared machine can
// take one in between: a start that fails on a bind is retried with fresh
// ports, up to three times.
func StartCluster(ctx context.Context, dist *Dist, opts ClusterOptions) (*Cluster, error) {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		var c *Cluster
		if c, err = startCluster(ctx, dist, opts); err == nil {
			return c, nil
		}
		if !errors.Is(err, ErrPortTaken) && !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
		if rmErr := os.RemoveAll(opts.Dir); rmErr != nil {
			return nil, rmErr
		}
	}
	return nil, err
}

func startCluster(ctx context.Context, dist *Dist, opts ClusterOptions) (*Cluster, error) {
	if opts.Brokers == 0 {
		opts.Brokers = 1
	}
	if opts.HeapMB == 0 {
		opts.HeapMB = 256
	}
	if opts.Dir == "" {
		return nil, fmt.Errorf("testbed: ClusterOptions.Dir is required")
	}
	if opts.ZooKeeper && (opts.Controllers != 0 || opts.DedicatedController) {
		return nil, fmt.Errorf("testbed: ClusterOptions.ZooKeeper has no KRaft controllers: leave Controllers and DedicatedController unset")
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "log4j2.properties"), []byte(log4j2Config), 0o644); err != nil {
		return nil, err
	}
	c := &Cluster{Dist: dist, Opts: opts, nodes: map[int]*Node{}}
	if opts.ZooKeeper {
		if err := c.startZooKeeper(ctx); err != nil {
			return nil, err
		}
	}
	names := []string{"INTERNAL", "CONTROLLER", "PLAINTEXT"}
	for _, l := range opts.Listeners {
		names = append(names, strings.ToUpper(l.Name))
	}
	nodes := opts.Brokers
	if opts.DedicatedController {
		nodes++
	}
	for id := 1; id <= nodes; id++ {
		n := &Node{ID: id, Ports: map[string]int{}, dir: filepath.Join(opts.Dir, fmt.Sprintf("node-%d", id))}
		for _, name := range names {
			p, err := FreePort()
			if err != nil {
				return nil, err
			}
			n.Ports[name] = p
		}
		c.nodes[id] = n
	}
	clusterID := newClusterID()
	for _, n := range c.nodes {
		if opts.ZooKeeper { // no storage to format: ZooKeeper holds the metadata
			if err := c.writeZooKeeperBrokerConfig(n); err != nil {
				c.Close()
				return nil, err
			}
			continue
		}
		if err := c.writeConfig(n); err != nil {
			return nil, err
		}
		if err := c.format(ctx, n, clusterID); err != nil {
			return nil, err
		}
	}
	start := opts.StartNodes
	if opts.DedicatedController {
		start = append([]int{c.ControllerID()}, start...)
	}
	if opts.StartNodes == nil {
		for id := 1; id <= opts.Brokers; id++ {
			start = append(start, id)
		}
	}
	for _, id := range start {
		if err := c.launch(id); err != nil {
			c.Close()
			return nil, err
		}
	}
	for _, id := range start {
		if err := c.WaitStarted(ctx, id); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func newClusterID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[0] &= 0x7f // keep clear of the reserved all-zero / metadata ids
	b[0] |= 0x10
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c *Cluster) writeConfig(n *Node) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return err
	}
	controllers := c.Opts.Controllers
	if controllers <= 0 || controllers > c.Opts.Brokers {
		controllers = c.Opts.Brokers
	}
	var voters []string
	for id := 1; id <= controllers; id++ {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", id, c.nodes[id].Ports["CONTROLLER"]))
	}
	if ctrl := c.ControllerID(); ctrl > 0 {
		controllers = 0
		voters = []string{fmt.Sprintf("%d@127.0.0.1:%d", ctrl, c.nodes[ctrl].Ports["CONTROLLER"])}
	}
	roles := "broker,controller"
	protoMap := []string{"INTERNAL:PLAINTEXT", "CONTROLLER:PLAINTEXT", "PLAINTEXT:PLAINTEXT"}
	listeners := []string{
		fmt.Sprintf("INTERNAL://127.0.0.1:%d", n.Ports["INTERNAL"]),
		fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", n.Ports["PLAINTEXT"]),
	}
	if n.ID <= controllers {
		listeners = append(listeners, fmt.Sprintf("CONTROLLER://127.0.0.1:%d", n.Ports["CONTROLLER"]))
	} else {
		roles = "broker"
	}
	props := c.brokerProps(n, protoMap, listeners)
	props["process.roles"] = roles
	props["node.id"] = itoa(n.ID)
	props["controller.quorum.voters"] = strings.Join(voters, ",")
	props["controller.listener.names"] = "CONTROLLER"
	if n.ID == c.ControllerID() {
		props["process.roles"] = "controller"
		props["listeners"] = fmt.Sprintf("CONTROLLER://127.0.0.1:%d", n.Ports["CONTROLLER"])
		delete(props, "advertised.listeners")
		delete(props, "inter.broker.listener.name")
	}
	return c.writeNodeProps(n, props)
}

// brokerProps are the broker settings every node of the test bed shares,
// KRaft or ZooKeeper: the listeners given on loopback followed by the
// options' extra ones, advertised as configured, and the small-cluster
// settings (few threads, small buffers, replication factors of at most 3).
func (c *Cluster) brokerProps(n *Node, protoMap, listeners []string) map[string]string {
	advertised := []string{
		fmt.Sprintf("INTERNAL://127.0.0.1:%d", n.Ports["INTERNAL"]),
		"PLAINTEXT://" + c.advertisedAddr(n, "PLAINTEXT"),
	}
	for _, l := range c.Opts.Listeners {
		name := strings.ToUpper(l.Name)
		protoMap = append(protoMap, name+":"+strings.ToUpper(l.Protocol))
		listeners = append(listeners, fmt.Sprintf("%s://127.0.0.1:%d", name, n.Ports[name]))
		advertised = append(advertised, name+"://"+c.advertisedAddr(n, name))
	}
	rf := min(c.Opts.Brokers, 3)
	return map[string]string{
		"inter.broker.listener.name":               "INTERNAL",
		"listeners":                                strings.Join(listeners, ","),
		"advertised.listeners":                     strings.Join(advertised, ","),
		"listener.security.protocol.map":           strings.Join(protoMap, ","),
		"log.dirs":                                 filepath.Join(n.dir, "data"),
		"offsets.topic.replication.factor":         itoa(rf),
		"transaction.state.log.replication.factor": itoa(rf),
		"transaction.state.log.min.isr":            "1",
		"group.initial.rebalance.delay.ms":         "0",
		"num.network.threads":                      "2",
		"num.io.threads":                           "2",
		"num.recovery.threads.per.data.dir":        "1",
		"log.cleaner.threads":                      "1",
		"log.cleaner.dedupe.buffer.size":           "2097152",
		"socket.send.buffer.bytes":                 "-1",
		"socket.receive.buffer.bytes":              "-1",
	}
}

// writeNodeProps applies the options' broker and per-node overrides to
// props and writes the node's server.properties.
func (c *Cluster) writeNodeProps(n *Node, props map[string]string) error {
	for k, v := range c.Opts.BrokerProps {
		props[k] = v
	}
	for k, v := range c.Opts.NodeProps[n.ID] {
		props[k] = v
	}
	n.props = filepath.Join(n.dir, "server.properties")
	return writeProperties(n.props, props)
}

func (c *Cluster) advertisedAddr(n *Node, listener string) string {
	if a, ok := c.Opts.AdvertisedOverride[n.ID][listener]; ok {
		return a
	}
	return fmt.Sprintf("127.0.0.1:%d", n.Ports[listener])
}

func (c *Cluster) format(ctx context.Context, n *Node, clusterID string) error {
	argv := append([]string{"java"}, JVMFlags(128, c.Opts.Dir)...)
	argv = append(argv, "-cp", c.Dist.Classpath(), "kafka.tools.StorageTool", "format", "-t", clusterID, "-c", n.props)
	logPath := filepath.Join(n.dir, "format.log")
	p, err := StartProcess(fmt.Sprintf("format-%d", n.ID), argv, nil, n.dir, logPath)
	if err != nil {
		return err
	}
	code, err := p.ExitCode(ctx)
	if err != nil || code != 0 {
		return fmt.Errorf("testbed: format node %d: exit %d %v\n%s", n.ID, code, err, tail(p.Log(), 3000))
	}
	return nil
}

func (c *Cluster) launch(id int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[id]
	if n == nil {
		return fmt.Errorf("testbed: no node %d", id)
	}
	if n.proc != nil && !n.proc.Exited() {
		return fmt.Errorf("testbed: node %d is running", id)
	}
	n.seq++
	argv := append([]string{"java"}, JVMFlags(c.Opts.HeapMB, c.Opts.Dir)...)
	argv = append(argv, c.Opts.JVMOptions...)
	argv = append(argv, "-cp", c.Dist.Classpath(), "kafka.Kafka", n.props)
	logPath := filepath.Join(n.dir, fmt.Sprintf("broker-%d.log", n.seq))
	p, err := StartProcess(fmt.Sprintf("broker-%d", id), argv, nil, n.dir, logPath)
	if err != nil {
		return err
	}
	n.proc = p
	return nil
}

// WaitStarted waits until node id has logged that it started and its
// client port accepts connections.
func (c *Cluster) WaitStarted(ctx context.Context, id int) error {
	c.mu.Lock()
	n := c.nodes[id]
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	started := "Kafka Server started"
	if c.Opts.ZooKeeper {
		started = zkBrokerStarted
	}
	if err := n.proc.WaitForLog(ctx, started); err != nil {
		return err
	}
	if id == c.ControllerID() {
		return WaitForPort(ctx, fmt.Sprintf("127.0.0.1:%d", n.Ports["CONTROLLER"]))
	}
	return WaitForPort(ctx, fmt.Sprintf("127.0.0.1:%d", n.Ports["PLAINTEXT"]))
}

// Start starts a node that was never started or was stopped/killed, without
// waiting for it (use WaitStarted).
func (c *Cluster) Start(id int) error { return c.launch(id) }

// Stop stops node id gracefully.
func (c *Cluster) Stop(id int) {
	if p := c.proc(id); p != nil {
		p.Stop(30 * time.Second)
	}
}

// Kill kills node id with SIGKILL.
func (c *Cluster) Kill(id int) {
	if p := c.proc(id); p != nil {
		p.Kill()
	}
}

// Running reports whether node id's process is alive.
func (c *Cluster) Running(id int) bool {
	p := c.proc(id)
	return p != nil && !p.Exited()
}

func (c *Cluster) proc(id int) *Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.nodes[id]; n != nil {
		return n.proc
	}
	return nil
}

// BrokerLog returns the current log of node id.
func (c *Cluster) BrokerLog(id int) string {
	if p := c.proc(id); p != nil {
		return p.Log()
	}
	return ""
}

// Addr returns node id's address on listener (e.g. "PLAINTEXT").
func (c *Cluster) Addr(id int, listener string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("127.0.0.1:%d", c.nodes[id].Ports[strings.ToUpper(listener)])
}

// Bootstrap returns the PLAINTEXT bootstrap.servers string of all nodes.
func (c *Cluster) Bootstrap() string { return c.BootstrapFor("PLAINTEXT") }

// BootstrapFor returns the bootstrap.servers string of all nodes on listener.
func (c *Cluster) BootstrapFor(listener string) string {
	var addrs []string
	for id := 1; id <= c.Opts.Brokers; id++ {
		addrs = append(addrs, c.Addr(id, listener))
	}
	return strings.Join(addrs, ",")
}

// Close kills every node.
func (c *Cluster) Close() {
	for id := 1; id <= c.Opts.Brokers; id++ {
		c.Kill(id)
	}
	if ctrl := c.ControllerID(); ctrl > 0 {
		c.Kill(ctrl)
	}
	if c.zk != nil {
		c.zk.proc.Kill()
	}
}

func writeProperties(path string, props map[string]string) error {
	return os.WriteFile(path, workerconfig.Format(props), 0o644)
}

// Unregister removes node id's broker registration from the KRaft
// controller (kafka-cluster unregister), as an operator does for a broker
// that is gone for good. The node must be stopped. A ZooKeeper-mode
// cluster has no such command: its brokers leave the registrations when
// their ZooKeeper session ends.
func (c *Cluster) Unregister(ctx context.Context, id int) error {
	if c.Opts.ZooKeeper {
		return fmt.Errorf("testbed: unregister broker %d: a ZooKeeper-mode cluster has no broker registrations to remove", id)
	}
	argv := append([]string{"java"}, JVMFlags(128, c.Opts.Dir)...)
	argv = append(argv, "-cp", c.Dist.Classpath(), "org.apache.kafka.tools.ClusterTool", "unregister",
		"--bootstrap-server", c.Bootstrap(), "--id", itoa(id))
	logPath := filepath.Join(c.Opts.Dir, fmt.Sprintf("unregister-%d-%d.log", id, time.Now().UnixNano()))
	p, err := StartProcess(fmt.Sprintf("unregister-%d", id), argv, nil, c.Opts.Dir, logPath)
	if err != nil {
		return err
	}
	code, err := p.ExitCode(ctx)
	if err != nil || code != 0 {
		return fmt.Errorf("testbed: unregister broker %d: exit %d %v\n%s", id, code, err, tail(p.Log(), 3000))
	}
	return nil
}
