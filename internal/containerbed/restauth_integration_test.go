//go:build integration

package containerbed

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestSwarmRESTBasicAuthSecret: a worker behind Kafka's
// BasicAuthSecurityRestExtension in Swarm, the REST password a Swarm
// secret mounted as a file (CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/...),
// as is the JAAS entry's credentials file. connect-init starts it, the
// service's HEALTHCHECK (`connect-init healthcheck`) turns healthy with
// the credentials, `connect-init apply` inside the container creates a
// connector through them, and nothing connect-init logged shows the
// password.
func TestSwarmRESTBasicAuthSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		t.Fatal(err)
	}
	jar, err := testbed.BasicAuthExtension(ctx, dist)
	if err != nil {
		t.Fatal(err)
	}
	group := "restauth"
	password := "swarm-pw-" + time.Now().Format("150405.000")
	secrets := map[string]string{
		group + "-rest-password":    password + "\n",
		group + "-rest-credentials": "admin=" + password + "\n",
		group + "-rest-jaas": "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n" +
			"  file=\"/run/secrets/" + group + "-rest-credentials\";\n};\n",
	}
	var extra []string
	for name, data := range secrets {
		if err := CreateSecret(ctx, name, []byte(data)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { Docker(context.Background(), "secret", "rm", name) }) //nolint:errcheck
		extra = append(extra, "--secret", "source="+name+",target="+name)
	}
	extra = append(extra, "--health-cmd", "connect-init healthcheck", "--health-interval", "2s", "--health-retries", "3", "--health-start-period", "3m")
	defs := t.TempDir()
	if err := os.WriteFile(defs+"/auth-source.json", []byte(`{"name":"auth-source","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"/dev/null","topic":"restauth-t","tasks.max":"1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	// A task's own hostname, not the service name: Swarm adds a task to
	// its service's name only once its HEALTHCHECK passes, and the
	// worker's self-probe runs before it can pass.
	s := svc{name: group, hostname: group + "-1", env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+group+"-1",
		"CONNECT_REST_EXTENSION_CLASSES=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
		"KAFKA_OPTS=-Djava.security.auth.login.config=/run/secrets/"+group+"-rest-jaas",
		"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/"+group+"-rest-password", "CONNECT_INIT_TIMEOUT=3m"),
		mounts: []string{"type=bind,src=" + jar + ",dst=/usr/share/java/kafka/connect-basic-auth-extension.jar,readonly", "type=bind,src=" + defs + ",dst=/connectors,readonly"},
		extra:  extra}
	s.create(t, ctx)
	ids, _, _ := stableGroup(t, ctx, 1, group)
	id := ids[0]
	// Healthy, by the service's own HEALTHCHECK with the mounted secret.
	for {
		st, _ := Docker(ctx, "inspect", "-f", "{{.State.Health.Status}}", id)
		if strings.TrimSpace(st) == "healthy" {
			break
		}
		if ctx.Err() != nil {
			last, _ := Docker(context.Background(), "inspect", "-f", "{{json .State.Health.Log}}", id)
			t.Fatalf("never healthy: %s; last checks: %s", st, tail(last, 2000))
		}
		time.Sleep(time.Second)
	}
	// The extension is on: a request without credentials is refused.
	if out, _ := Exec(ctx, id, "bedctl", "http", "GET", "http://127.0.0.1:8083/health"); !strings.HasPrefix(out, "401") {
		t.Fatalf("GET /health without credentials: %q, want 401", firstLine(out))
	}
	out, err := Exec(ctx, id, "connect-init", "apply", "--dir", "/connectors", "--wait=2m")
	if err != nil || !strings.Contains(out, "in the desired state") {
		t.Fatalf("apply in the container: %v\n%s", err, tail(out, 3000))
	}
	if logs := ContainerLogs(ctx, id) + out; strings.Contains(logs, password) {
		t.Errorf("the password shows in the output:\n%s", tail(logs, 3000))
	}
}
