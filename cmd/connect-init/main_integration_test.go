//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/security/securitytest"
)

// The package's shared real cluster: 3 KRaft brokers, started once, each
// serving every security mode the tests need on its own listener.
var (
	cluster *testbed.Cluster
	binary  string // connect-init built with a version stamp
	workDir string
	pki     *securitytest.PKI
)

// Listener names of the shared cluster besides PLAINTEXT.
const (
	listenerSSL       = "SSL"       // TLS, JKS server store
	listenerMTLS      = "MTLS"      // TLS with client auth required, PKCS12 server store
	listenerWrongName = "WRONGNAME" // TLS whose certificate names another host
	listenerSASL      = "SASLPLAIN" // SASL_PLAINTEXT: SCRAM-SHA-512, PLAIN, OAUTHBEARER (unsecured validation)
	listenerSASLSSL   = "SASLSSL"   // SASL_SSL: SCRAM-SHA-256
)

// Users the PLAIN mechanism knows (broker-side JAAS); SCRAM users are
// created through the admin API once the cluster runs.
var plainPassword = "plain-secret-" + randomSuffix()

func securityListeners() ([]testbed.Listener, map[string]string) {
	listeners := []testbed.Listener{
		{Name: listenerSSL, Protocol: "SSL"}, {Name: listenerMTLS, Protocol: "SSL"}, {Name: listenerWrongName, Protocol: "SSL"},
		{Name: listenerSASL, Protocol: "SASL_PLAINTEXT"}, {Name: listenerSASLSSL, Protocol: "SASL_SSL"},
	}
	// An authorizer that lets everyone do what no ACL speaks of, so that
	// a test can take one right away from one principal on a topic of its
	// own (TestLockRefusedWithoutWriteACL) and nothing else changes. The
	// nodes (and the tests' PLAINTEXT admin) talk as ANONYMOUS, a super
	// user: KRaft's authorizer refuses everyone else until it has loaded
	// the metadata, the controllers' votes included.
	props := map[string]string{
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
		"super.users":                    "User:ANONYMOUS",
	}
	scoped := func(listener string, m map[string]string) {
		for k, v := range m {
			props["listener.name."+strings.ToLower(listener)+"."+k] = v
		}
	}
	scoped(listenerSSL, pki.BrokerSSLProps("JKS", false))
	scoped(listenerMTLS, pki.BrokerSSLProps("PKCS12", true))
	wrong := pki.BrokerSSLProps("JKS", false)
	wrong["ssl.keystore.location"] = pki.WrongName.JKS
	scoped(listenerWrongName, wrong)
	scoped(listenerSASLSSL, pki.BrokerSSLProps("JKS", false))
	scoped(listenerSASL, map[string]string{
		"sasl.enabled.mechanisms":        "SCRAM-SHA-512,PLAIN,OAUTHBEARER",
		"scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"plain.sasl.jaas.config":         `org.apache.kafka.common.security.plain.PlainLoginModule required user_plainuser="` + plainPassword + `";`,
		"oauthbearer.sasl.jaas.config":   `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";`,
	})
	scoped(listenerSASLSSL, map[string]string{
		"sasl.enabled.mechanisms":        "SCRAM-SHA-256",
		"scram-sha-256.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
	})
	return listeners, props
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

const testVersionStamp = "v0.0.0-itest"

func TestMain(m *testing.M) {
	os.Exit(mainWithCluster(m))
}

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	workDir, err = os.MkdirTemp("", "connect-init-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)

	if binary, err = testbed.BuildConnectInit(workDir, testVersionStamp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.MkdirAll(filepath.Join(workDir, "pki"), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pki, err = securitytest.NewPKI(filepath.Join(workDir, "pki")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	listeners, props := securityListeners()
	krbListeners, krbProps, krbJVM, err := startKerberos(ctx) // security_integration_test.go
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer kdc.Close()
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster"),
		Listeners: append(listeners, krbListeners...), BrokerProps: merge(props, krbProps), JVMOptions: krbJVM})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "test cluster: Kafka %s, bootstrap %s\n", dist.Version, cluster.Bootstrap())
	defer cluster.Close()
	return m.Run()
}

// startTestWorker starts a real Connect worker on the shared cluster,
// directly (no connect-init), and stops it when the test ends.
func startTestWorker(t *testing.T, name string, props map[string]string) *testbed.Worker {
	t.Helper()
	spec, err := cluster.NewWorkerSpec(name, props, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cluster.StartWorker(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = w.Signal(syscall.SIGCONT) // in case a test left it stopped
		w.Stop(20 * time.Second)
	})
	return w
}

// firstLine returns the first line of log that contains substr, or "".
func firstLine(log, substr string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return ""
}

// logTail returns at most the last n bytes of s, for failure messages.
func logTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
