package containerbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/connect-init/connect-init/security/securitytest"
)

// Network is the overlay network of the broker stack; examples/swarm
// expects it under this name (external: true).
const Network = "kafka"

// Brokers is the started broker stack: services kafka-1..3 on Network.
type Brokers struct {
	// Image is the image every service of the bed runs.
	Image string
	// PKI holds the TLS material: the brokers' SSL listener (9093) serves
	// PKI.Server (named kafka-1..3), workers trust PKI.CA.
	PKI *securitytest.PKI
	// Bootstrap is the PLAINTEXT bootstrap list.
	Bootstrap string
	// SSLBootstrap is the SSL bootstrap list.
	SSLBootstrap string
}

// ServiceArgs are the `docker service create` flags every service of the
// bed gets: the label (on the service and its containers) and the
// network.
func ServiceArgs(name string) []string {
	return []string{"service", "create", "--detach", "--name", name, "--label", Label, "--container-label", Label}
}

// CreateSecret creates a labelled Swarm secret from data.
func CreateSecret(ctx context.Context, name string, data []byte) error {
	_, err := DockerIn(ctx, data, "secret", "create", "--label", Label, name, "-")
	return err
}

// StartBrokers creates Network and starts a 3-node KRaft cluster as three
// one-replica services with endpoint_mode dnsrr (each name resolves to its
// task's own address), and waits until every broker logged that it
// started.
func StartBrokers(ctx context.Context, dir, image string) (*Brokers, error) {
	if err := os.MkdirAll(filepath.Join(dir, "pki"), 0o755); err != nil {
		return nil, err
	}
	pki, err := securitytest.NewPKI(filepath.Join(dir, "pki"), securitytest.WithHosts("kafka-1", "kafka-2", "kafka-3"))
	if err != nil {
		return nil, err
	}
	if _, err := Docker(ctx, "network", "create", "--driver", "overlay", "--attachable", "--label", Label, Network); err != nil {
		return nil, err
	}
	for name, path := range map[string]string{"kafka.keystore.p12": pki.Server.PKCS12, "kafka.truststore.p12": pki.TrustPKCS12} {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := CreateSecret(ctx, name, data); err != nil {
			return nil, err
		}
	}
	clusterID := "Y29ubmVjdC1pbml0LWJlZA" // 16 bytes, base64url: "connect-init-bed"
	for n := 1; n <= 3; n++ {
		args := ServiceArgs(fmt.Sprintf("kafka-%d", n))
		args = append(args, "--network", Network, "--endpoint-mode", "dnsrr", "--restart-condition", "on-failure", "--restart-delay", "2s",
			"--secret", "kafka.keystore.p12", "--secret", "kafka.truststore.p12",
			"--env", fmt.Sprintf("NODE_ID=%d", n), "--env", "CLUSTER_ID="+clusterID, "--env", "STORE_PASSWORD="+pki.StorePassword,
			"--entrypoint", "kafka-node", image)
		if _, err := Docker(ctx, args...); err != nil {
			return nil, err
		}
	}
	for n := 1; n <= 3; n++ {
		if _, err := WaitLog(ctx, fmt.Sprintf("kafka-%d", n), regexp.MustCompile(`Kafka Server started`)); err != nil {
			return nil, err
		}
	}
	return &Brokers{Image: image, PKI: pki, Bootstrap: "kafka-1:9092,kafka-2:9092,kafka-3:9092", SSLBootstrap: "kafka-1:9093,kafka-2:9093,kafka-3:9093"}, nil
}

// ServiceLogs returns a service's logs, every task's (raw lines).
func ServiceLogs(ctx context.Context, service string) string {
	out, _ := Docker(ctx, "service", "logs", "--raw", service)
	return out
}

// ServiceLogsAll is ServiceLogs with standard error.
func ServiceLogsAll(ctx context.Context, service string) string {
	cmd := []string{"service", "logs", "--raw", service}
	out, err := run2(ctx, cmd...)
	if err != nil {
		return out + "\n" + err.Error()
	}
	return out
}

func run2(ctx context.Context, args ...string) (string, error) {
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return combined(c, "docker", args...)
}

// WaitLog polls a service's logs until re matches and returns the match.
func WaitLog(ctx context.Context, service string, re *regexp.Regexp) ([]string, error) {
	for {
		logs := ServiceLogsAll(ctx, service)
		if m := re.FindStringSubmatch(logs); m != nil {
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("containerbed: %s never logged %q: %w; log tail:\n%s", service, re, ctx.Err(), tail(logs, 3000))
		case <-time.After(time.Second):
		}
	}
}

// Containers lists the running containers of a service, by task slot
// order of creation.
func Containers(ctx context.Context, service string) ([]string, error) {
	out, err := Docker(ctx, "ps", "-q", "--filter", "label=com.docker.swarm.service.name="+service)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// AllContainers lists every container a service's tasks ran, exited ones
// included (as far as Swarm's task history keeps them).
func AllContainers(ctx context.Context, service string) ([]string, error) {
	out, err := Docker(ctx, "ps", "-aq", "--filter", "label=com.docker.swarm.service.name="+service)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// ContainerLogs returns one container's output (stdout and stderr).
func ContainerLogs(ctx context.Context, id string) string {
	out, _ := combined(ctx, "docker", "logs", id)
	return out
}

// Exec runs a command in a container and returns its standard output.
func Exec(ctx context.Context, id string, argv ...string) (string, error) {
	return Docker(ctx, append([]string{"exec", id}, argv...)...)
}

// TaskStates returns "state exit-code" of every task of a service, newest
// first, with the tasks' error text.
func TaskStates(ctx context.Context, service string) string {
	out, _ := Docker(ctx, "service", "ps", "--no-trunc", "--format", "{{.Name}} {{.CurrentState}} {{.Error}}", service)
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
