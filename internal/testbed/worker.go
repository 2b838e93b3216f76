package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WorkerSpec is everything needed to start one Connect distributed worker:
// the JVM command line, its properties file and where it will answer.
type WorkerSpec struct {
	Name      string
	Argv      []string
	PropsFile string
	Props     map[string]string
	RESTURL   string // http://127.0.0.1:<port>
	Dir       string
	// NoHealth is set for workers before Kafka 3.9, which have no
	// GET /health: WaitHealthy then asks through the herder's queue.
	NoHealth bool
	// HealthAuth, when set, is the user and password WaitHealthy sends
	// (a worker behind BasicAuthSecurityRestExtension, see BasicAuth).
	HealthAuth *[2]string
	// HealthTLS, when set, is the client TLS WaitHealthy uses (an https
	// listener, client certificates included).
	HealthTLS *tls.Config
}

// WorkerProps returns the properties of a worker on c: bootstrap, JSON
// converters, a free REST port on loopback and fast test timings; extra
// overrides them. Storage topics and group.id must come in extra.
func (c *Cluster) WorkerProps(extra map[string]string) (map[string]string, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	rf := c.Opts.Brokers
	if rf > 3 {
		rf = 3
	}
	props := map[string]string{
		"bootstrap.servers":                       c.Bootstrap(),
		"key.converter":                           "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                         "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":            "false",
		"value.converter.schemas.enable":          "false",
		"listeners":                               fmt.Sprintf("http://127.0.0.1:%d", port),
		"rest.advertised.host.name":               "127.0.0.1",
		"config.storage.replication.factor":       itoa(rf),
		"offset.storage.replication.factor":       itoa(rf),
		"status.storage.replication.factor":       itoa(rf),
		"offset.flush.interval.ms":                "1000",
		"scheduled.rebalance.max.delay.ms":        "10000",
		"plugin.discovery":                        "only_scan",
		"task.shutdown.graceful.timeout.ms":       "2000",
		"offset.storage.partitions":               "5",
		"status.storage.partitions":               "2",
		"worker.sync.timeout.ms":                  "3000",
		"worker.unsync.backoff.ms":                "2000",
		"connector.client.config.override.policy": "All",
	}
	for k, v := range extra {
		props[k] = v
	}
	if c.Dist.Version < "3.6" {
		delete(props, "plugin.discovery")
	}
	return props, nil
}

// NewWorkerSpec writes a worker's properties file under the cluster dir and
// returns the command that runs it. props must be complete (see WorkerProps).
func (c *Cluster) NewWorkerSpec(name string, props map[string]string, heapMB int) (*WorkerSpec, error) {
	if heapMB == 0 {
		heapMB = 256
	}
	dir := filepath.Join(c.Opts.Dir, "worker-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	propsFile := filepath.Join(dir, "worker.properties")
	if err := writeProperties(propsFile, props); err != nil {
		return nil, err
	}
	argv := append([]string{"java"}, JVMFlags(heapMB, c.Opts.Dir)...)
	argv = append(argv, "-cp", c.Dist.Classpath(), "org.apache.kafka.connect.cli.ConnectDistributed", propsFile)
	return &WorkerSpec{
		Name: name, Argv: argv, PropsFile: propsFile, Props: props, Dir: dir,
		RESTURL: restURL(props["listeners"]), NoHealth: c.Dist.Version < "3.9",
	}, nil
}

// AddClasspath puts jars in front of the worker JVM's classpath, for
// instance connect-init's config provider for the in-worker startup lock.
func (s *WorkerSpec) AddClasspath(jars ...string) {
	for i := 0; i+1 < len(s.Argv); i++ {
		if s.Argv[i] == "-cp" {
			s.Argv[i+1] = strings.Join(append(append([]string(nil), jars...), s.Argv[i+1]), string(os.PathListSeparator))
			return
		}
	}
}

func restURL(listeners string) string {
	// The test bed always writes a single http://127.0.0.1:port listener.
	return listeners
}

// Worker is a running Connect worker (or a process that will become one,
// such as connect-init exec'ing into it).
type Worker struct {
	*Process
	Spec *WorkerSpec
}

// StartWorker starts spec's worker directly (no connect-init).
func (c *Cluster) StartWorker(spec *WorkerSpec) (*Worker, error) {
	return c.StartWorkerCommand(spec, spec.Argv, nil)
}

// StartWorkerCommand starts argv (for instance connect-init run -- <spec.Argv>)
// as the worker described by spec, logging to the worker's log file.
func (c *Cluster) StartWorkerCommand(spec *WorkerSpec, argv, env []string) (*Worker, error) {
	p, err := StartProcess("worker-"+spec.Name, argv, env, spec.Dir, filepath.Join(spec.Dir, "worker.log"))
	if err != nil {
		return nil, err
	}
	return &Worker{Process: p, Spec: spec}, nil
}

// WaitHealthy polls GET /health until it answers 200, the worker exits or
// ctx ends. A worker without /health (before Kafka 3.9, Spec.NoHealth) is
// healthy when a request through its herder's queue is answered: GET
// /connectors/<a name that cannot exist> answers 404 "Connector ... not
// found" only once the herder ticks, that is once the worker joined its
// group and read the config topic.
func (w *Worker) WaitHealthy(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	if w.Spec.HealthTLS != nil {
		client.Transport = &http.Transport{TLSClientConfig: w.Spec.HealthTLS}
	}
	for {
		if w.healthy(client) {
			return nil
		}
		select {
		case <-w.Done():
			return fmt.Errorf("testbed: worker %s exited before it was healthy; log tail:\n%s", w.Spec.Name, tail(w.Log(), 4000))
		case <-ctx.Done():
			return fmt.Errorf("testbed: worker %s not healthy: %w; log tail:\n%s", w.Spec.Name, ctx.Err(), tail(w.Log(), 4000))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// noSuchConnector is a connector name no test creates.
const noSuchConnector = "testbed-readiness-probe-no-such-connector"

func (w *Worker) healthy(client *http.Client) bool {
	if !w.Spec.NoHealth {
		req, err := http.NewRequest(http.MethodGet, w.Spec.RESTURL+"/health", nil)
		if err != nil {
			return false
		}
		if a := w.Spec.HealthAuth; a != nil {
			req.SetBasicAuth(a[0], a[1])
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	resp, err := client.Get(w.Spec.RESTURL + "/connectors/" + noSuchConnector)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode == http.StatusNotFound && strings.Contains(string(body), "Connector "+noSuchConnector+" not found")
}
