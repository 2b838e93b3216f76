//go:build integration

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// aclOn creates one ACL on a TransactionalId with the shared cluster's
// super user (the PLAINTEXT admin) and removes it when the test ends.
func aclOn(t *testing.T, admin sarama.ClusterAdmin, id string, pattern sarama.AclResourcePatternType, principal string, op sarama.AclOperation) {
	t.Helper()
	r := sarama.Resource{ResourceType: sarama.AclResourceTransactionalID, ResourceName: id, ResourcePatternType: pattern}
	acl := sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}
	if err := admin.CreateACLs([]*sarama.ResourceAcls{{Resource: r, Acls: []*sarama.Acl{&acl}}}); err != nil {
		t.Fatal(err)
	}
	waitACLOnEveryBroker(t, id, pattern, principal)
	t.Cleanup(func() {
		name := id
		if _, err := admin.DeleteACL(sarama.AclFilter{ResourceType: sarama.AclResourceTransactionalID, ResourceName: &name,
			ResourcePatternTypeFilter: pattern, Principal: &principal, Operation: op, PermissionType: sarama.AclPermissionAllow}, false); err != nil {
			t.Errorf("remove the ACL on %s: %v", id, err)
		}
	})
}

// waitACLOnEveryBroker waits until every broker describes the ACL of
// principal on id: brokers learn ACLs from the metadata log a moment
// after CreateAcls returns, and connect-init asks whichever broker its
// admin client takes for the controller (seen on Kafka 3.9.1: a worker
// started 20 ms after the grant was refused on a broker that had not
// applied it yet).
func waitACLOnEveryBroker(t *testing.T, id string, pattern sarama.AclResourcePatternType, principal string) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := 0
		for _, b := range client.Brokers() {
			_ = b.Open(cfg)
			resp, err := b.DescribeAcls(&sarama.DescribeAclsRequest{Version: 2, AclFilter: sarama.AclFilter{ResourceType: sarama.AclResourceTransactionalID,
				ResourceName: &id, ResourcePatternTypeFilter: pattern, Principal: &principal, Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}})
			if err == nil && resp.Err == sarama.ErrNoError && len(resp.ResourceAcls) > 0 {
				seen++
			}
		}
		if seen == len(client.Brokers()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ACL of %s on %s is on %d of %d brokers after 30 s", principal, id, seen, len(client.Brokers()))
		}
		time.Sleep(100 * time.Millisecond) // polling the brokers' view, not a guess at readiness
	}
}

// TestParityExactlyOnceTransactionalIDACL (issue 50, deliver 6): on
// brokers with KRaft's StandardAuthorizer, an exactly-once worker whose
// SASL/PLAIN principal may not Write the leader's TransactionalId
// connect-cluster-<group> is refused before the exec with the kafka-acls
// line; once an ACL (prefixed) allows it, the same worker starts, and the
// broker agrees: the leader's transactional producer exists under that id.
// The shared cluster lets everyone do what no ACL speaks of, so an ACL
// for another principal first makes the id a guarded one.
func TestParityExactlyOnceTransactionalIDACL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := merge(uniqueGroup(t, "parity-acl"), map[string]string{"exactly.once.source.support": "enabled",
		"bootstrap.servers": cluster.BootstrapFor(listenerSASL), "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": jaas(plainModule, map[string]string{"username": "plainuser", "password": plainPassword})})
	g := group["group.id"]
	id := "connect-cluster-" + g
	admin := newAdmin(t)
	aclOn(t, admin, id, sarama.AclPatternLiteral, "User:someone-else", sarama.AclOperationWrite)

	code, log, _ := runOurs(ctx, t, "noacl", group, "run", "CONNECT_INIT_LOCK=true")
	msg := assertRefused(t, code, log, "settings parity", "User:plainuser may not Write or Describe TransactionalId "+id,
		"kafka-acls --bootstrap-server "+cluster.BootstrapFor(listenerSASL), "--add --allow-principal 'User:plainuser' --operation Write --operation Describe --transactional-id "+id)
	t.Logf("refused: %s", msg)
	noSecret(t, "run's output", log, plainPassword)

	aclOn(t, admin, id, sarama.AclPatternPrefixed, "User:plainuser", sarama.AclOperationWrite)
	wp, err := cluster.WorkerProps(group)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(g+"-granted", wp, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), connectInitEnv(wp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(20 * time.Second) })
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatalf("the granted worker: %v; log:\n%s", err, logTail(w.Log(), 4000))
	}
	if strings.Contains(w.Log(), "eos-transactional-id") {
		t.Errorf("the granted worker was warned about its transactional id:\n%s", firstLine(w.Log(), "eos-transactional-id"))
	}
	// The broker agrees with our verdict: the leader's fencable producer
	// initialized under the id (the session key is written through it).
	for {
		st, err := admin.(sarama.TransactionClusterAdmin).DescribeTransactions([]string{id})
		if err == nil && st[id].ErrorCode == sarama.ErrNoError {
			t.Logf("the leader's transactional id %s: state %s", id, st[id].TransactionState)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no transaction under %s: %v %+v; worker log:\n%s", id, err, st, logTail(w.Log(), 4000))
		case <-time.After(500 * time.Millisecond):
		}
	}
	// A super user passes although the ACLs alone say no: the id is
	// guarded (User:someone-else's ACL) and none allows User:ANONYMOUS,
	// the shared cluster's super user on PLAINTEXT. Only the broker's own
	// answer to DescribeTransactions, asked now that __transaction_state
	// exists, shows that it may (super.users is in no ACL). prepare
	// reports an error result as a warning with its check id.
	plain := merge(group, map[string]string{"bootstrap.servers": cluster.Bootstrap()})
	for _, k := range []string{"security.protocol", "sasl.mechanism", "sasl.jaas.config"} {
		delete(plain, k)
	}
	pp, err := cluster.WorkerProps(plain)
	if err != nil {
		t.Fatal(err)
	}
	res := runCLI(ctx, t, connectInitEnv(pp), "prepare")
	if res.code != 0 || strings.Contains(res.stderr, "check=eos-transactional-id") {
		t.Errorf("the super user: exit %d, want 0 without a transactional id finding:\n%s", res.code, logTail(res.stderr, 4000))
	}
}

// TestParityHangingConfigTransaction (issue 50, deliver 7): a
// transactional producer that begins a transaction on an exactly-once
// group's config topic, writes and never commits holds read_committed
// readers below it; run names it with the fix and refuses before the
// exec, and once the transaction is aborted the same settings pass.
func TestParityHangingConfigTransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	group := merge(uniqueGroup(t, "parity-hang"), map[string]string{"exactly.once.source.support": "enabled"})
	topic := group["config.storage.topic"]
	wp, err := cluster.WorkerProps(group)
	if err != nil {
		t.Fatal(err)
	}
	if res := runCLI(ctx, t, connectInitEnv(wp), "prepare"); res.code != 0 {
		t.Fatalf("prepare exited %d:\n%s", res.code, res.stderr)
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Producer.Idempotent, cfg.Producer.RequiredAcks, cfg.Net.MaxOpenRequests = true, sarama.WaitForAll, 1
	cfg.Producer.Return.Successes = true
	cfg.Producer.Transaction.ID = "hanging-" + group["group.id"]
	p, err := sarama.NewSyncProducer(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder("hanging-test"), Value: sarama.StringEncoder("{}")}); err != nil {
		t.Fatal(err)
	}
	code, log, _ := runOurs(ctx, t, "hang", group, "run", "CONNECT_INIT_LOCK=true")
	msg := assertRefused(t, code, log, "settings parity", "a transaction on the config topic "+topic+" stays open", "below the high watermark over 3s",
		"kafka-transactions --bootstrap-server ... find-hanging --topic "+topic, "abort")
	t.Logf("refused: %s", msg)

	if err := p.AbortTxn(); err != nil {
		t.Fatal(err)
	}
	res := runCLI(ctx, t, connectInitEnv(wp), "prepare")
	if res.code != 0 || strings.Contains(res.stderr, "eos-config-topic-transaction-hanging") {
		t.Errorf("after the abort: exit %d, want 0 without the hanging transaction:\n%s", res.code, logTail(res.stderr, 4000))
	}
}
