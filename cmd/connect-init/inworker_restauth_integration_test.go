//go:build integration

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// newInWorkerBasicAuthWorker is newLockWorker (the in-worker lock, as
// users get it where the jar is installed) behind Kafka's
// BasicAuthSecurityRestExtension.
func newInWorkerBasicAuthWorker(t *testing.T, group map[string]string, name, extJar string, users [][2]string, env ...string) *lockWorker {
	t.Helper()
	lw := newLockWorker(t, group, name, nil, env...)
	if err := lw.spec.BasicAuth(extJar, users); err != nil {
		t.Fatal(err)
	}
	lw.argv = append([]string{binary, "run", "--", lw.spec.Argv[0], "-Duser.timezone=UTC"}, lw.spec.Argv[1:]...)
	return lw
}

// TestInWorkerLockBasicAuth (issue 37): two real workers behind
// BasicAuthSecurityRestExtension, the in-worker lock chosen by default,
// one with the password as a plain CONNECT_INIT_REST_PASSWORD (the
// variable docs/security.md lists first), the other as a _FILE, started at
// the same instant. Before the fix the child `lock acquire` got the user
// without the password, exited 2, and the provider stopped both workers.
// Both start (the second's JSON log format reaching its child too), and neither connect-init's output nor
// Connect's (its printed worker configuration included) shows the password.
func TestInWorkerLockBasicAuth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ext, err := testbed.BasicAuthExtension(ctx, cluster.Dist)
	if err != nil {
		t.Fatal(err)
	}
	password := "pw-" + randomSuffix()
	users := [][2]string{{"admin", password}}
	pwFile := filepath.Join(t.TempDir(), "connect-rest-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	group := uniqueGroup(t, "iwauth")
	common := []string{"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC=" + lockTopicFor(group), "CONNECT_INIT_REST_USERNAME=admin"}
	plain := newInWorkerBasicAuthWorker(t, group, group["group.id"]+"-plain", ext, users, append(common, "CONNECT_INIT_REST_PASSWORD="+password)...)
	file := newInWorkerBasicAuthWorker(t, group, group["group.id"]+"-file", ext, users, append(common, "CONNECT_INIT_REST_PASSWORD_FILE="+pwFile, "CONNECT_INIT_LOG_FORMAT=json")...)
	ws := []*lockWorker{plain, file}
	startLockWorkers(t, ws...)
	waitAllHealthy(ctx, t, ws)

	if code, _ := restCall(t, "GET", plain.spec.RESTURL+"/health", nil, nil, nil); code != 401 {
		t.Fatalf("GET /health without credentials answered %d, want 401: the extension is not on", code)
	}
	for _, lw := range ws {
		log := lw.w.Log()
		json := lw == file
		mode := "mode=worker"
		if json {
			mode = `"mode":"worker"`
		}
		if !strings.Contains(log, "startup lock mode") || !strings.Contains(log, mode) {
			t.Errorf("%s: run did not choose the in-worker lock (want %s)", lw.name, mode)
		}
		if !strings.Contains(log, providerLine) {
			t.Errorf("%s: the provider never logged %q", lw.name, providerLine)
		}
		acquired := `msg="acquired startup lock"`
		if json {
			acquired = `"msg":"acquired startup lock"`
		}
		if n := lw.w.CountInLog(acquired); n != 1 {
			t.Errorf("%s logged %s %d times, want 1 (the child's log follows the format given)", lw.name, acquired, n)
		}
		if !strings.Contains(log, "DistributedConfig values") {
			t.Errorf("%s: Connect did not print its worker configuration, so this test cannot show the password is not in it", lw.name)
		}
		noSecret(t, lw.name+"'s log (connect-init and Connect)", log, password)
		if t.Failed() {
			t.Logf("%s log tail:\n%s", lw.name, tailString(log, 6000))
		}
	}
}

// TestInWorkerLockSASLSSLBrokers: a real worker whose Kafka clients speak
// SASL_SSL (SCRAM-SHA-256, a JKS truststore) takes the in-worker lock (the
// default where the jar is installed): the child reads the brokers' TLS and
// SASL settings from the worker's own configuration, as run did, and
// neither connect-init's output nor Connect's shows the SCRAM or store
// password.
func TestInWorkerLockSASLSSLBrokers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	user := "iwsasl-" + randomSuffix()
	password := scramUser(t, user, sarama.SCRAM_MECHANISM_SHA_256)
	group := uniqueGroup(t, "iwsasl")
	sec := merge(group, pki.TrustProps("JKS"), map[string]string{
		"bootstrap.servers": cluster.BootstrapFor(listenerSASLSSL), "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
		"sasl.jaas.config": jaas(scramModule, map[string]string{"username": user, "password": password})})
	lw := newLockWorker(t, sec, group["group.id"]+"-sasl", nil, "CONNECT_INIT_LOCK_TOPIC="+lockTopicFor(group))
	startLockWorkers(t, lw)
	waitAllHealthy(ctx, t, []*lockWorker{lw})
	log := lw.w.Log()
	if line, _, ok := slogLine(log, "startup lock mode"); !ok || !strings.Contains(line, "mode=worker") {
		t.Errorf("run did not choose the in-worker lock: %q", line)
	}
	if !strings.Contains(log, providerLine) || lw.w.CountInLog(`msg="acquired startup lock"`) != 1 {
		t.Errorf("the child did not take the lock in the worker:\n%s", tailString(log, 4000))
	}
	if !strings.Contains(log, "SASL_SSL") {
		t.Errorf("the worker's printed configuration does not show SASL_SSL: not the mode under test")
	}
	noSecret(t, "the worker's log", log, password, pki.StorePassword)
}
