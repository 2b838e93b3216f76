//go:build integration

package gate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestEOSReadinessOnOneBroker (issue 50): one broker without an
// authorizer whose transaction.state.log.replication.factor stays 3. An
// exactly-once worker is refused by run before the exec, since
// __transaction_state cannot be created, and nothing else is found: the
// broker answers DescribeAcls with SECURITY_DISABLED (no ACL to check, not
// a failure) and its ApiVersions carry every request exactly-once sends.
func TestEOSReadinessOnOneBroker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 1, Dir: filepath.Join(workDir, "eos"),
		BrokerProps: map[string]string{"transaction.state.log.replication.factor": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := gateEnv(c, "eos", "CONNECT_INIT_TIMEOUT=1m", "CONNECT_INIT_LOCK=false", "CONNECT_EXACTLY_ONCE_SOURCE_SUPPORT=enabled",
		"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=1", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=1", "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=1")
	never := []string{"TransactionalId", "eos-transactional-id", "lack requests", "eos-brokers-too-old", "exactly-once readiness not checked"}

	// prepare reports the error result as a warning with its check id.
	code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, "check=eos-transaction-state-cannot-be-created") {
		t.Errorf("prepare: exit %d, want 0 with the eos-transaction-state-cannot-be-created warning:\n%s", code, out)
	}
	for _, n := range never {
		if strings.Contains(out, n) {
			t.Errorf("prepare's output names %q:\n%s", n, out)
		}
	}

	code, out, err = testbed.Run(ctx, binary, []string{"run", "--", "true"}, env)
	if err != nil {
		t.Fatal(err)
	}
	refusal := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `msg="gate failed"`) {
			refusal = l
		}
	}
	t.Logf("run: exit %d: %s", code, refusal)
	for _, want := range []string{"gate=group", "settings parity", "__transaction_state does not exist and cannot be created: 1 live broker(s), transaction.state.log.replication.factor=3", "fix: start at least 3 brokers"} {
		if code != 1 || !strings.Contains(refusal, want) {
			t.Errorf("run: exit %d, want 1 with a refusal naming %q:\n%s", code, want, out)
		}
	}
	for _, n := range never {
		if strings.Contains(out, n) {
			t.Errorf("run's output names %q:\n%s", n, out)
		}
	}
}
