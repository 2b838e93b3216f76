package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/connect-init/connect-init/internal/containerbed"
	"github.com/connect-init/connect-init/internal/testbed"
)

// Every container row's workers get the one group's settings (groupEnv),
// then their own and the variant's.
func TestRowsShareTheGroupSettings(t *testing.T) {
	cb := &containerbed.Bed{Brokers: &containerbed.Brokers{Bootstrap: "kafka-1:9092"}}
	exec := restartVariants[2]
	group := groupEnv(cb, "g")
	for _, c := range []struct {
		name string
		env  []string
		own  []string
	}{
		{"swarm service", serviceEnv(cb, exec, "g"), []string{"CONNECT_INIT_PEERS=tasks.g:8083", "CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS=60000", "CONNECT_INIT_LOCK_MODE=exec"}},
		{"compose worker", composeEnv(cb, exec, "g-1", "g"), []string{"CONNECT_REST_ADVERTISED_HOST_NAME=g-1", "CONNECT_INIT_LOCK_MODE=exec"}},
	} {
		for _, e := range append(slices.Clone(group), c.own...) {
			if !slices.Contains(c.env, e) {
				t.Errorf("%s: no %s in %v", c.name, e, c.env)
			}
		}
	}
	for _, e := range []string{"CONNECT_BOOTSTRAP_SERVERS=kafka-1:9092", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=_g-configs"} {
		if !slices.Contains(group, e) {
			t.Errorf("groupEnv has no %s: %v", e, group)
		}
	}
}

// The swarm row's stack file takes the same settings as YAML lines.
func TestYAMLEnv(t *testing.T) {
	got := yamlEnv([]string{"CONNECT_GROUP_ID=g", "CONNECT_OFFSET_STORAGE_PARTITIONS=3", "X=a=b"})
	want := "      CONNECT_GROUP_ID: \"g\"\n      CONNECT_OFFSET_STORAGE_PARTITIONS: \"3\"\n      X: \"a=b\""
	if got != want {
		t.Errorf("yamlEnv = %q, want %q", got, want)
	}
}

// The swarm row's stack file parses, and its service gets the group's
// settings and the peers of its tasks.
func TestSwarmStackEnvironment(t *testing.T) {
	cb := &containerbed.Bed{Image: "img", Brokers: &containerbed.Brokers{Bootstrap: "kafka-1:9092"}}
	var stack struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Entrypoint  []string          `yaml:"entrypoint"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(swarmStack(cb, "g", "set -e\nexec connect-init run -- \"$$@\"")), &stack); err != nil {
		t.Fatal(err)
	}
	c := stack.Services["connect"]
	want := map[string]string{"CONNECT_INIT_PEERS": "tasks.connect:8083"}
	for _, e := range groupEnv(cb, "g") {
		k, v, _ := strings.Cut(e, "=")
		want[k] = v
	}
	if !maps.Equal(c.Environment, want) {
		t.Errorf("environment = %v\nwant %v", c.Environment, want)
	}
	if c.Image != "img" || len(c.Entrypoint) != 5 || c.Entrypoint[2] != "set -e\nexec connect-init run -- \"$$@\"\n" {
		t.Errorf("image %q, entrypoint %q", c.Image, c.Entrypoint)
	}
}

// startAtOnce starts every one, none before the release, and returns the
// first error by index after all of them returned.
func TestStartAtOnce(t *testing.T) {
	var mu sync.Mutex
	var started []int
	var t0Seen time.Time
	t0, err := startAtOnce(4, func(i int) error {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, i)
		if t0Seen.IsZero() {
			t0Seen = time.Now()
		}
		if i >= 2 {
			return fmt.Errorf("start %d failed", i)
		}
		return nil
	})
	slices.Sort(started)
	if !slices.Equal(started, []int{0, 1, 2, 3}) {
		t.Errorf("started %v, want every one once", started)
	}
	if err == nil || err.Error() != "start 2 failed" {
		t.Errorf("err = %v, want the first by index", err)
	}
	if t0Seen.Before(t0) {
		t.Errorf("a start ran at %s, before the release at %s", t0Seen, t0)
	}
}

// A Kafka tool runs as kafka-run-class.sh runs it, with the tools'
// logging written where its flag points.
func TestKafkaTool(t *testing.T) {
	b := &bed{dist: &testbed.Dist{LibDir: "/kafka/libs"}, dir: t.TempDir()}
	java, err := kafkaTool(b, "waiting")
	if err != nil {
		t.Fatal(err)
	}
	log4j := filepath.Join(b.dir, "waiting-log4j2.properties")
	want := append(append([]string{"java"}, toolJVMFlags...),
		"-Dlog4j2.configurationFile="+log4j, "-cp", "/kafka/libs/*", "kafka.admin.TopicCommand", "--list")
	if got := java("kafka.admin.TopicCommand", "--list"); !slices.Equal(got, want) {
		t.Errorf("argv = %q\nwant %q", got, want)
	}
	if data, err := os.ReadFile(log4j); err != nil || string(data) != toolsLog4j {
		t.Errorf("%s: %v, %q", log4j, err, data)
	}
}
