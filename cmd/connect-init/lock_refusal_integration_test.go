//go:build integration

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/lock"
)

// TestLockRefusedWithoutWriteACL (issue 37): on brokers with KRaft's
// StandardAuthorizer, a worker whose SCRAM principal may read the lock
// topic but not write it is refused within seconds, naming the principal,
// the topic and the kafka-acls command to grant; it is not counted as an
// outage (no wait for CONNECT_INIT_LOCK_UNAVAILABLE_AFTER), and the worker
// does not start without the lock.
func TestLockRefusedWithoutWriteACL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	user := "lockless-" + randomSuffix()
	password := scramUser(t, user, sarama.SCRAM_MECHANISM_SHA_512)
	group := uniqueGroup(t, "lockacl")
	topic := lockTopicFor(group)
	admin := newAdmin(t)
	if err := lock.EnsureTopic(ctx, admin, topic, 3); err != nil {
		t.Fatal(err)
	}
	principal := "User:" + user
	var acls []*sarama.Acl
	for _, op := range []sarama.AclOperation{sarama.AclOperationRead, sarama.AclOperationDescribe, sarama.AclOperationDescribeConfigs} {
		acls = append(acls, &sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow})
	}
	if err := admin.CreateACLs([]*sarama.ResourceAcls{{Resource: sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: topic,
		ResourcePatternType: sarama.AclPatternLiteral}, Acls: acls}}); err != nil {
		t.Fatal(err)
	}

	props, err := cluster.WorkerProps(merge(group, map[string]string{
		"bootstrap.servers": cluster.BootstrapFor(listenerSASL), "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": jaas(scramModule, map[string]string{"username": user, "password": password})}))
	if err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(), envFromProps(props)...)
	env = append(env, "CONNECT_INIT_TIMEOUT=2m", "CONNECT_INIT_LOCK_TOPIC="+topic, "CONNECT_INIT_LOCK_MODE=exec", "CONNECT_INIT_LOCK_UNAVAILABLE_AFTER=15s")
	start := time.Now()
	code, out, err := testbed.Run(ctx, binary, []string{"run", "--", "sleep", "600"}, env)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("exit %d after %s", code, took.Round(time.Millisecond))
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	if strings.Contains(out, "starting the worker") || strings.Contains(out, "STARTING WITHOUT THE STARTUP LOCK") {
		t.Errorf("the worker was started although the lock topic refused it:\n%s", out)
	}
	// The lock step follows "cluster ready"; the refusal is the last line.
	_, lockStart, ok := slogLine(out, "cluster ready")
	var end time.Time
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0 && end.IsZero(); i-- {
		if stamp, found := strings.CutPrefix(lines[i], "time="); found {
			end, _ = time.Parse(time.RFC3339Nano, strings.Fields(stamp)[0])
		}
	}
	if !ok || end.IsZero() {
		t.Fatalf("no \"cluster ready\" line or no stamped last line:\n%s", out)
	}
	t.Logf("from the lock step to the refusal: %s; the refusal: %s", end.Sub(lockStart).Round(time.Millisecond), lines[len(lines)-1])
	if end.Sub(lockStart) > 10*time.Second {
		t.Errorf("refused %s after the lock step began, want within seconds (not waited out)", end.Sub(lockStart))
	}
	for _, want := range []string{"not authorized", principal, "kafka-acls", "--allow-principal '" + principal + "'", "--operation Write", "--topic " + topic, "CONNECT_INIT_LOCK=false"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not name %q:\n%s", want, out)
		}
	}
	noSecret(t, "run's output", out, password)
}
