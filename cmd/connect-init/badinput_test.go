package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// secretMarker is in every secret the bad-input rows use; it must never
// reach any output.
const secretMarker = "S3CRET-MARKER"

// countingListener is a TCP listener that counts the connections opened to
// it: the bootstrap server of every row, so that a row proves connect-init
// stopped before it connected to anything.
func countingListener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// imageRoot builds a file tree that looks like an image of flavour f to
// detection ("" for none).
func imageRoot(t *testing.T, f string) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	switch f {
	case "confluent-dub":
		write("etc/confluent/docker/kafka-connect.properties.template", "{% set connect_props = env_to_props('CONNECT_', '', exclude=excluded_props) -%}\n")
	case "confluent-ub":
		write("etc/confluent/docker/kafka-connect.properties.template", "{{- $connect_props := envToProps \"CONNECT_\" \"\" nil nil $excluded_props -}}\n")
	case "debezium":
		write("docker-entrypoint.sh", "export CONNECT_OFFSET_STORAGE_TOPIC=$OFFSET_STORAGE_TOPIC\n# edits $KAFKA_HOME/config/connect-distributed.properties\n")
		base, err := os.ReadFile("../../workerconfig/testdata/flavours/debezium-base.properties")
		if err != nil {
			t.Fatal(err)
		}
		write("kafka/config.orig/connect-distributed.properties", string(base))
	case "apache":
		write("opt/kafka/bin/connect-distributed.sh", "#!/bin/sh\n")
	}
	return root
}

type badInput struct {
	name  string
	image string   // flavour the image root looks like ("" none)
	args  []string // after the command
	env   []string // added to (or, with "-NAME", removed from) the base environment
	file  string   // a worker properties file's content, given as CONNECT_INIT_WORKER_CONFIG
	named string   // the setting the error must name
	cmds  []string // default: prepare, run, doctor, config
}

func badInputs() []badInput { return append(badOwnInputs(), badWorkerInputs()...) }

// badOwnInputs are connect-init's own settings' bad inputs.
func badOwnInputs() []badInput {
	return []badInput{
		// connect-init's own settings
		{name: "timeout zero", env: []string{"CONNECT_INIT_TIMEOUT=0s"}, named: "CONNECT_INIT_TIMEOUT"},
		{name: "timeout without unit", env: []string{"CONNECT_INIT_TIMEOUT=5"}, named: "use a Go duration"},
		{name: "timeout negative", env: []string{"CONNECT_INIT_TIMEOUT=-1m"}, named: "CONNECT_INIT_TIMEOUT"},
		{name: "timeout flag zero", args: []string{"--timeout=0"}, named: "--timeout"},
		{name: "cub timeout", env: []string{"CONNECT_CUB_KAFKA_TIMEOUT=soon"}, named: "CONNECT_CUB_KAFKA_TIMEOUT"},
		{name: "cub min brokers", env: []string{"CONNECT_CUB_KAFKA_MIN_BROKERS=some"}, named: "CONNECT_CUB_KAFKA_MIN_BROKERS"},
		{name: "lease below minimum", env: []string{"CONNECT_INIT_LOCK_LEASE=1ms"}, named: "CONNECT_INIT_LOCK_LEASE"},
		{name: "lease flag below minimum", args: []string{"--lock-lease=10ms"}, named: "--lock-lease"},
		{name: "lease not a duration", env: []string{"CONNECT_INIT_LOCK_LEASE=long"}, named: "CONNECT_INIT_LOCK_LEASE"},
		{name: "apply watch without connectors", env: []string{"CONNECT_INIT_APPLY_WATCH=true"}, named: "CONNECT_INIT_APPLY_WATCH"},
		{name: "apply watch not a bool", env: []string{"CONNECT_INIT_APPLY_WATCH=yes please"}, named: "CONNECT_INIT_APPLY_WATCH"},
		{name: "permits zero", env: []string{"CONNECT_INIT_LOCK_PERMITS=0"}, named: "CONNECT_INIT_LOCK_PERMITS"},
		{name: "permits flag not a number", args: []string{"--lock-permits=none"}, named: "lock-permits"},
		{name: "lock not a bool", env: []string{"CONNECT_INIT_LOCK=maybe"}, named: "CONNECT_INIT_LOCK"},
		{name: "expected brokers negative", env: []string{"CONNECT_INIT_EXPECTED_BROKERS=-1"}, named: "CONNECT_INIT_EXPECTED_BROKERS"},
		{name: "peer check value", env: []string{"CONNECT_INIT_PEER_CHECK=maybe"}, named: "CONNECT_INIT_PEER_CHECK"},
		{name: "plugin check value", env: []string{"CONNECT_INIT_PLUGIN_CHECK=strict"}, named: "CONNECT_INIT_PLUGIN_CHECK"},
		{name: "log format", env: []string{"CONNECT_INIT_LOG_FORMAT=xml"}, named: "CONNECT_INIT_LOG_FORMAT"},
		{name: "log level", env: []string{"CONNECT_INIT_LOG_LEVEL=loud"}, named: "CONNECT_INIT_LOG_LEVEL"},
		{name: "image unknown", env: []string{"CONNECT_INIT_IMAGE=ubuntu"}, named: "CONNECT_INIT_IMAGE"},
		{name: "peer port too big", env: []string{"CONNECT_INIT_PEERS=connect-1:99999"}, named: "CONNECT_INIT_PEERS"},
		{name: "peer port not a number", env: []string{"CONNECT_INIT_PEERS=connect-1:http"}, named: "CONNECT_INIT_PEERS"},
		{name: "peer with path", env: []string{"CONNECT_INIT_PEERS=http://connect-1:8083/connectors"}, named: "CONNECT_INIT_PEERS"},
		{name: "peer scheme", env: []string{"CONNECT_INIT_PEERS=ftp://connect-1:21"}, named: "CONNECT_INIT_PEERS"},
		{name: "lock topic is the config topic", env: []string{"CONNECT_INIT_LOCK_TOPIC=bad-configs"}, named: "CONNECT_INIT_LOCK_TOPIC"},
		{name: "lock topic is the status topic by flag", args: []string{"--lock-topic=bad-status"}, named: "--lock-topic"},
		{name: "lock topic collides with the offset topic", env: []string{"CONNECT_INIT_LOCK_TOPIC=bad.offsets"}, named: "CONNECT_INIT_LOCK_TOPIC"},
		{name: "lock topic illegal", env: []string{"CONNECT_INIT_LOCK_TOPIC=lock/topic"}, named: "CONNECT_INIT_LOCK_TOPIC"},
		{name: "worker config missing", env: []string{"CONNECT_INIT_WORKER_CONFIG=/nonexistent/worker.properties"}, named: "CONNECT_INIT_WORKER_CONFIG"},
		{name: "worker config flag missing", args: []string{"--worker-config=/nonexistent/worker.properties"}, named: "--worker-config"},
	}
}

// badWorkerInputs are the worker settings' bad inputs: required settings
// and topics, REST, the Kafka clients' security, the image flavours, usage.
func badWorkerInputs() []badInput {
	long := strings.Repeat("t", 250)
	return []badInput{
		// worker settings: required ones and topics
		{name: "group id missing", env: []string{"-CONNECT_GROUP_ID"}, named: "CONNECT_GROUP_ID"},
		{name: "bootstrap missing", env: []string{"-CONNECT_BOOTSTRAP_SERVERS"}, named: "CONNECT_BOOTSTRAP_SERVERS"},
		{name: "bootstrap no port", env: []string{"CONNECT_BOOTSTRAP_SERVERS=kafka-1"}, named: "CONNECT_BOOTSTRAP_SERVERS"},
		{name: "status topic missing", env: []string{"-CONNECT_STATUS_STORAGE_TOPIC"}, named: "CONNECT_STATUS_STORAGE_TOPIC"},
		{name: "topic illegal character", env: []string{"CONNECT_CONFIG_STORAGE_TOPIC=conf!gs"}, named: "CONNECT_CONFIG_STORAGE_TOPIC"},
		{name: "topic too long", env: []string{"CONNECT_OFFSET_STORAGE_TOPIC=" + long}, named: "CONNECT_OFFSET_STORAGE_TOPIC"},
		{name: "topic dot", env: []string{"CONNECT_STATUS_STORAGE_TOPIC=."}, named: "CONNECT_STATUS_STORAGE_TOPIC"},
		{name: "topic dot dot", env: []string{"CONNECT_STATUS_STORAGE_TOPIC=.."}, named: "CONNECT_STATUS_STORAGE_TOPIC"},
		{name: "topics differ by dot and underscore", env: []string{"CONNECT_OFFSET_STORAGE_TOPIC=bad.x", "CONNECT_STATUS_STORAGE_TOPIC=bad_x"}, named: "CONNECT_STATUS_STORAGE_TOPIC"},
		{name: "two roles one topic", env: []string{"CONNECT_STATUS_STORAGE_TOPIC=bad-configs"}, named: "CONNECT_STATUS_STORAGE_TOPIC"},
		{name: "replication factor not a number", env: []string{"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=three"}, named: "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR"},
		{name: "replication factor zero", env: []string{"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=0"}, named: "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR"},
		{name: "partitions zero", env: []string{"CONNECT_OFFSET_STORAGE_PARTITIONS=0"}, named: "CONNECT_OFFSET_STORAGE_PARTITIONS"},

		// REST
		{name: "listeners garbage", env: []string{"CONNECT_LISTENERS=garbage"}, named: "CONNECT_LISTENERS"},
		{name: "listener port zero", env: []string{"CONNECT_LISTENERS=http://:0"}, named: "CONNECT_LISTENERS"},
		{name: "https listener without keystore", env: []string{"CONNECT_LISTENERS=https://:8443"}, named: "CONNECT_LISTENERS"},
		{name: "advertised port not a number", env: []string{"CONNECT_REST_ADVERTISED_PORT=eighty"}, named: "CONNECT_REST_ADVERTISED_PORT"},
		{name: "advertised listener scheme", env: []string{"CONNECT_REST_ADVERTISED_LISTENER=ftp"}, named: "CONNECT_REST_ADVERTISED_LISTENER"},
		{name: "PORT0 not a number", env: []string{"PORT0=thirty"}, named: "PORT0"},
		{name: "rest truststore missing", env: []string{"CONNECT_LISTENERS_HTTPS_SSL_TRUSTSTORE_LOCATION=/nonexistent/rest.jks"}, named: "CONNECT_LISTENERS_HTTPS_SSL_TRUSTSTORE_LOCATION"},

		// Kafka client security
		{name: "truststore missing", env: []string{"CONNECT_SECURITY_PROTOCOL=SSL", "CONNECT_SSL_TRUSTSTORE_LOCATION=/nonexistent/trust.jks", "CONNECT_SSL_TRUSTSTORE_PASSWORD=" + secretMarker + "-1"}, named: "CONNECT_SSL_TRUSTSTORE_LOCATION"},
		{name: "jaas broken", env: []string{"CONNECT_SECURITY_PROTOCOL=SASL_PLAINTEXT", "CONNECT_SASL_MECHANISM=PLAIN", "CONNECT_SASL_JAAS_CONFIG=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + secretMarker + "-2\""}, named: "CONNECT_SASL_JAAS_CONFIG"},
		{name: "admin jaas broken", env: []string{"CONNECT_SECURITY_PROTOCOL=SASL_PLAINTEXT", "CONNECT_SASL_MECHANISM=PLAIN",
			"CONNECT_SASL_JAAS_CONFIG=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"" + secretMarker + "-3\";",
			"CONNECT_ADMIN_SASL_JAAS_CONFIG=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" password=\"" + secretMarker + "-4"}, named: "CONNECT_ADMIN_SASL_JAAS_CONFIG"},
		{name: "mechanism unknown", env: []string{"CONNECT_SECURITY_PROTOCOL=SASL_PLAINTEXT", "CONNECT_SASL_MECHANISM=MAGIC"}, named: "CONNECT_SASL_MECHANISM"},
		{name: "security protocol unknown", env: []string{"CONNECT_SECURITY_PROTOCOL=TLS"}, named: "CONNECT_SECURITY_PROTOCOL"},
		{name: "client id", env: []string{"CONNECT_CLIENT_ID=bad id!"}, named: "CONNECT_CLIENT_ID"},
		{name: "request timeout", env: []string{"CONNECT_REQUEST_TIMEOUT_MS=soon"}, named: "CONNECT_REQUEST_TIMEOUT_MS"},
		{name: "provider file missing", env: []string{"CONNECT_CONFIG_PROVIDERS=file", "CONNECT_CONFIG_PROVIDERS_FILE_CLASS=org.apache.kafka.common.config.provider.FileConfigProvider",
			"CONNECT_SASL_JAAS_CONFIG=${file:/nonexistent/secrets.properties:jaas}"}, named: "CONNECT_SASL_JAAS_CONFIG"},

		// image flavours
		{name: "confluent dub key converter missing", image: "confluent-dub", env: []string{"-CONNECT_KEY_CONVERTER"}, named: "CONNECT_KEY_CONVERTER"},
		{name: "confluent dub advertised host empty", image: "confluent-dub", env: []string{"CONNECT_REST_ADVERTISED_HOST_NAME="}, named: "CONNECT_REST_ADVERTISED_HOST_NAME"},
		{name: "confluent ub value converter missing", image: "confluent-ub", env: []string{"-CONNECT_VALUE_CONVERTER"}, named: "CONNECT_VALUE_CONVERTER"},
		{name: "confluent ub key converter empty", image: "confluent-ub", env: []string{"CONNECT_KEY_CONVERTER="}, named: "the worker cannot start with an empty key.converter"},
		{name: "apache file missing value converter", image: "apache", file: "bootstrap.servers=@bootstrap\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=x\n", named: "(value.converter)"},
		{name: "confluent avro without registry", image: "confluent-ub", env: []string{"CONNECT_VALUE_CONVERTER=io.confluent.connect.avro.AvroConverter"}, named: "CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL"},
		// ub reads CONNECT_CONFIG_PROVIDERS_X_CLASS as config.providers.x_class, so provider x has no class.
		{name: "confluent ub one-letter name", image: "confluent-ub", env: []string{"CONNECT_CONFIG_PROVIDERS=x",
			"CONNECT_CONFIG_PROVIDERS_X_CLASS=org.apache.kafka.common.config.provider.FileConfigProvider", "CONNECT_SASL_JAAS_CONFIG=${x:/etc/secrets.properties:jaas}"}, named: "CONNECT_SASL_JAAS_CONFIG"},
		{name: "debezium connect spelling only", image: "debezium", env: []string{"BOOTSTRAP_SERVERS=@bootstrap", "OFFSET_STORAGE_TOPIC=o", "HOST_NAME=h"}, named: "CONFIG_STORAGE_TOPIC"},
		{name: "debezium no bootstrap", image: "debezium", env: []string{"CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o", "HOST_NAME=h"}, named: "BOOTSTRAP_SERVERS"},
		{name: "debezium bad group topic name", image: "debezium", env: []string{"BOOTSTRAP_SERVERS=@bootstrap", "CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o o", "HOST_NAME=h"}, named: "OFFSET_STORAGE_TOPIC"},
		{name: "debezium at sign", image: "debezium", env: []string{"BOOTSTRAP_SERVERS=@bootstrap", "CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o", "HOST_NAME=h", "GROUP_ID=team@example"}, named: "GROUP_ID"},
		{name: "apache without worker file", image: "apache", named: "CONNECT_INIT_WORKER_CONFIG"},
		{name: "apache file missing group", image: "apache", file: "bootstrap.servers=@bootstrap\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=x\nvalue.converter=x\n", named: "(group.id)"},
		{name: "properties file bad replication factor", env: []string{"CONNECT_INIT_IMAGE=properties"},
			file: "bootstrap.servers=@bootstrap\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=x\nvalue.converter=x\n# rf\nconfig.storage.replication.factor=three\n", named: ".properties:9"},
		{name: "properties file bad escape", env: []string{"CONNECT_INIT_IMAGE=properties"}, file: "group.id=\\u00zz\n", named: "CONNECT_INIT_WORKER_CONFIG"},

		// usage
		{name: "unknown command", args: []string{"prepair"}, named: "unknown command", cmds: []string{""}},
		{name: "version with a flag", args: []string{"version", "--bogus"}, named: "--bogus is not a flag of connect-init version", cmds: []string{""}},
		{name: "interval without watch", args: []string{"--interval=10s"}, named: "--interval", cmds: []string{"doctor"}},
		{name: "watch interval too short", args: []string{"--watch", "--interval=10ms"}, named: "--interval", cmds: []string{"doctor"}},
		{name: "metrics address without watch", args: []string{"--metrics-addr=127.0.0.1:0"}, named: "--metrics-addr", cmds: []string{"doctor"}},
		{name: "worker command missing", args: []string{"--", "/nonexistent/connect-distributed"}, named: "/nonexistent/connect-distributed", cmds: []string{"run"}},
		{name: "prepare with a command", args: []string{"/bin/true"}, named: "prepare takes no command", cmds: []string{"prepare"}},
	}
}

// badBaseEnv is a complete, valid Confluent-style environment whose bootstrap
// server is the counting listener.
func badBaseEnv(bootstrap string) []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap,
		"CONNECT_GROUP_ID=bad-inputs",
		"CONNECT_CONFIG_STORAGE_TOPIC=bad-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=bad_offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=bad-status",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1",
		"CONNECT_PRODUCER_SASL_JAAS_CONFIG=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"p\" password=\"" + secretMarker + "-5\";",
		"CONNECT_SSL_KEY_PASSWORD=" + secretMarker + "-6",
	}
}

func rowEnv(t *testing.T, row badInput, bootstrap string) []string {
	var env []string
	if row.image == "debezium" {
		env = nil
	} else if row.image == "apache" {
		env = []string{"CONNECT_SERVICE_HOST=10.0.0.1", "CONNECT_PORT=tcp://10.0.0.1:8083"} // service links
	} else {
		env = badBaseEnv(bootstrap)
	}
	for _, e := range row.env {
		if name, ok := strings.CutPrefix(e, "-"); ok {
			var kept []string
			for _, kv := range env {
				if !strings.HasPrefix(kv, name+"=") {
					kept = append(kept, kv)
				}
			}
			env = kept
			continue
		}
		env = append(env, strings.ReplaceAll(e, "@bootstrap", bootstrap))
	}
	if row.file != "" {
		p := filepath.Join(t.TempDir(), "worker.properties")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(row.file, "@bootstrap", bootstrap)), 0o600); err != nil {
			t.Fatal(err)
		}
		env = append(env, "CONNECT_INIT_WORKER_CONFIG="+p)
	}
	return env
}

// TestBadInputs runs every bad input through run, prepare, doctor and
// config at every log level, in text and JSON: each must exit 2 with one
// error event naming the setting the user set, open no connection, and
// print no secret.
func TestBadInputs(t *testing.T) {
	bootstrap, conns := countingListener(t)
	noExec := func(c *entrypoint.Command) error {
		t.Errorf("a bad input reached the exec of %v", c.Argv)
		return nil
	}

	rows := badInputs()
	if len(rows) < 60 {
		t.Fatalf("only %d bad inputs", len(rows))
	}
	runs := 0
	for _, row := range rows {
		image := settings.Options{Root: imageRoot(t, row.image), HostAddress: func() (string, error) { return "192.0.2.10", nil },
			LocalHostAddress: func() (string, error) { return "192.0.2.10", nil }}
		cmds := row.cmds
		if cmds == nil {
			cmds = []string{"prepare", "run", "doctor", "config"}
		}
		for _, cmd := range cmds {
			for _, level := range []string{"debug", "info", "error"} {
				for _, format := range []string{"text", "json"} {
					env := rowEnv(t, row, bootstrap)
					if !strings.HasPrefix(row.name, "log ") {
						env = append(env, "CONNECT_INIT_LOG_LEVEL="+level, "CONNECT_INIT_LOG_FORMAT="+format)
					}
					var args []string
					if cmd != "" {
						args = append(args, cmd)
					}
					args = append(args, row.args...)
					if cmd == "run" && !slices.Contains(row.args, "--") {
						args = append(args, "--", "/bin/true")
					}
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					var stdout, stderr bytes.Buffer
					c := newCLI(env, &stdout, &stderr)
					c.options, c.exec = image, noExec
					code := c.run(ctx, args)
					cancel()
					runs++
					out := stdout.String() + stderr.String()
					where := row.name + " / " + strings.Join(args, " ") + " / " + level + " " + format
					if code != exitcode.Config {
						t.Errorf("%s: exit %d, want 2:\n%s", where, code, out)
						continue
					}
					if !strings.Contains(stderr.String(), row.named) {
						t.Errorf("%s: the error does not name %q:\n%s", where, row.named, out)
					}
					if strings.Contains(out, secretMarker) {
						t.Errorf("%s: a secret reached the output:\n%s", where, out)
					}
					if n := conns.Load(); n != 0 {
						t.Fatalf("%s: %d connections were opened to the bootstrap server", where, n)
					}
					checkOneErrorEvent(t, where, stderr.String(), format, row)
				}
			}
		}
	}
	t.Logf("%d bad inputs, %d runs, no connection opened", len(rows), runs)
}

// checkOneErrorEvent: the settings error is exactly one line, and in JSON
// mode a JSON event with the setting attribute.
func checkOneErrorEvent(t *testing.T, where, stderr, format string, row badInput) {
	t.Helper()
	if row.cmds != nil {
		return // usage errors: checked for exit code and text only
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, `"level":"ERROR"`) {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], row.named) {
		t.Errorf("%s: want one error line naming %q, got %d:\n%s", where, row.named, len(errLines), stderr)
		return
	}
	if format != "json" || strings.HasPrefix(row.name, "log ") {
		return
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(errLines[0]), &ev); err != nil {
		t.Errorf("%s: JSON mode gave a line that is not JSON: %q", where, errLines[0])
		return
	}
	if ev["msg"] != "bad configuration" || ev["level"] != "ERROR" || ev["gate"] != "settings" {
		t.Errorf("%s: event %v", where, ev)
	}
}

// A usage error is one line and a pointer to help, not a page of usage.
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, args := range [][]string{{"prepair"}, {"version", "--bogus"}, {"version", "extra"}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, nil, &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != exitcode.Config || len(lines) != 1 || stdout.Len() != 0 || !strings.Contains(lines[0], "connect-init help") && !strings.Contains(lines[0], "connect-init version") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the fix", args, code, stdout.String(), stderr.String())
		}
	}
}
