package examples

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// rebalanceDelayVar is the setting a rolling update's cost hangs on
// (docs/benchmarks.md, "Rolling update").
const rebalanceDelayVar = "CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS"

// exampleDelayRe is how the docs quote the example's value: "the example
// sets `CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS` to **60000**".
var exampleDelayRe = regexp.MustCompile("(?i)the example sets `" + rebalanceDelayVar + "` to \\*\\*(\\d+)\\*\\*")

// The example's scheduled.rebalance.max.delay.ms has one home,
// swarm/stack.yml, the file users deploy: it is chosen from the rejoin
// time `make rolling` measures, and the pages that quote it (the
// measurement in docs/benchmarks.md, the deployment page
// docs/containers.md) must quote that value, so that the number a reader
// copies is the one that was measured and deployed. Every service of the
// stack that reads the workers' settings has the same value.
func TestExampleRebalanceDelayAgrees(t *testing.T) {
	const file = "swarm/stack.yml"
	doc := loadYAML(t, file)[0]
	var value string
	for _, s := range composeServices(t, file, doc, loadDockerfile(t)) {
		v, ok := s.env[rebalanceDelayVar]
		if !ok {
			continue
		}
		if value != "" && v != value {
			t.Errorf("%s: %s=%s, another service of the stack has %s", s, rebalanceDelayVar, v, value)
		}
		value = v
	}
	if value == "" {
		t.Fatalf("%s sets no %s: a rolling update would leave a departed worker's tasks unassigned for Connect's 5 minutes", file, rebalanceDelayVar)
	}
	if ms, err := strconv.Atoi(value); err != nil || ms <= 0 {
		t.Fatalf("%s: %s=%q is not a positive number of milliseconds", file, rebalanceDelayVar, value)
	}
	for _, page := range []string{"../docs/benchmarks.md", "../docs/containers.md"} {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		quotes := exampleDelayRe.FindAllStringSubmatch(string(data), -1)
		if len(quotes) == 0 {
			t.Errorf("%s does not say which delay the example sets (want \"the example sets `%s` to **%s**\")", page, rebalanceDelayVar, value)
		}
		for _, q := range quotes {
			if q[1] != value {
				t.Errorf("%s says the example sets %s to %s; %s sets %s: change one home (%s) and quote it", page, rebalanceDelayVar, q[1], file, value, file)
			}
		}
	}
}
