//go:build integration

package apply_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestApplyFromCIRunner (issue 38): a real apply through --url alone, with
// no CONNECT_* variable set (no broker address, no worker settings), to the
// package's real worker behind a reverse proxy that serves Connect under
// /kafka-connect/ over https with a private CA generated here and asks for
// a client certificate. Without the CA nothing is written and the fix
// names --cacert; with --cacert, --cert and --key the connector is
// validated, created and waited for until it runs, every request under the
// prefix, the missing lease said in the output and the log; a prune from
// a directory none of whose connectors the cluster holds is refused with
// no write; a dry run of a change logs what it would do, not what it did;
// the update is written.
func TestApplyFromCIRunner(t *testing.T) {
	pki := newTestPKI(t)
	target, err := url.Parse(worker.Spec.RESTURL)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var outside, inside []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := strings.CutPrefix(r.URL.Path, "/kafka-connect")
		mu.Lock()
		if ok {
			inside = append(inside, r.Method+" "+r.URL.Path)
		} else {
			outside = append(outside, r.Method+" "+r.URL.Path)
		}
		mu.Unlock()
		if !ok {
			http.NotFound(w, r) // the proxy serves nothing else
			return
		}
		r.URL.Path, r.URL.RawPath = p, ""
		if r.URL.Path == "" {
			r.URL.Path = "/"
		}
		proxy.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	u := srv.URL + "/kafka-connect/"

	dir := filepath.Join(t.TempDir(), "connectors")
	out := filepath.Join(t.TempDir(), "ci.txt")
	writeFile(t, dir, "ci-sink.json", sinkJSON("ci-sink", seedTopic, out, ""))
	env := testbed.BaseEnv() // no CONNECT_* variable at all
	for _, kv := range env {
		if strings.HasPrefix(kv, "CONNECT_") {
			t.Fatalf("the environment holds %s", kv)
		}
	}
	run := func(extraEnv []string, args ...string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		code, o, err := testbed.Run(ctx, binary, append([]string{"apply", "--dir", dir, "--url", u}, args...), append(append([]string{}, env...), extraEnv...))
		if err != nil {
			t.Fatal(err)
		}
		return code, o
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, worker.Spec.RESTURL+"/connectors/ci-sink", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})

	// Without the private CA: refused by TLS, nothing written, the fix named.
	code, o := run(nil, "--wait=1m")
	if code != 1 || !strings.Contains(o, "certificate") || !strings.Contains(o, "--cacert") {
		t.Fatalf("without the CA: exit %d\n%s", code, o)
	}
	if connectorConfig(t, "ci-sink") != nil {
		t.Fatal("ci-sink exists after an apply that could not reach the worker")
	}

	// With the CA (as a variable), the client certificate and key (flags).
	start := time.Now()
	code, o = run([]string{"CONNECT_INIT_REST_CA_FILE=" + pki.caFile}, "--cert", pki.clientCert, "--key", pki.clientKey, "--wait=2m")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("apply through the proxy: exit %d\n%s", code, o)
	}
	for _, want := range []string{"plan for " + u, "+ create     ci-sink", "writing without the apply lease: ", "created ci-sink",
		"ci-sink: ok: connector RUNNING, 1/1 tasks RUNNING", "applying through the REST API only", `msg="writing without the apply lease"`, "created=1"} {
		if !strings.Contains(o, want) {
			t.Errorf("the output lacks %q:\n%s", want, o)
		}
	}
	if cfg := connectorConfig(t, "ci-sink"); cfg["topics"] != seedTopic {
		t.Fatalf("ci-sink's config on the worker: %v", cfg)
	}
	mu.Lock()
	if len(outside) > 0 || len(inside) == 0 {
		t.Errorf("requests outside the prefix %q, inside %d", outside, len(inside))
	}
	var wrote bool
	for _, r := range inside {
		wrote = wrote || r == "PUT /kafka-connect/connectors/ci-sink/config" || r == "POST /kafka-connect/connectors"
	}
	mu.Unlock()
	if !wrote {
		t.Errorf("no write went through the proxy: %q", inside)
	}
	t.Logf("applied through the https proxy in %s", took.Round(100*time.Millisecond))

	// A prune from a directory none of whose connectors the cluster holds
	// (as through a typo in --url, to another cluster): refused, nothing
	// written, this test's own connector still there (the package's
	// seed connector may be pruned by a test that ran before).
	other := filepath.Join(t.TempDir(), "other")
	writeFile(t, other, "ci-other.json", sinkJSON("ci-other", seedTopic, out, ""))
	before := configEnd(t)
	code, o = testbedRun(t, env, "apply", "--dir", other, "--url", u, "--prune", "--cacert", pki.caFile, "--cert", pki.clientCert, "--key", pki.clientKey)
	if code != 2 || !strings.Contains(o, "refusing to prune through "+u) || connectorConfig(t, "ci-sink") == nil || connectorConfig(t, "ci-other") != nil || configEnd(t) != before {
		t.Fatalf("prune of a cluster holding none of the directory's connectors: exit %d\n%s", code, o)
	}

	// A change: the dry run's log says what it would do.
	writeFile(t, dir, "ci-sink.json", sinkJSON("ci-sink", seedTopic, out, `,
    "errors.tolerance": "all"`))
	tlsArgs := []string{"--cacert", pki.caFile, "--cert", pki.clientCert, "--key", pki.clientKey}
	code, o = run(nil, append([]string{"--dry-run"}, tlsArgs...)...)
	if code != 0 || !strings.Contains(o, `msg="apply planned (dry run, nothing written)"`) || !strings.Contains(o, "would_create=0 would_update=1") ||
		strings.Contains(o, "apply done") || strings.Contains(o, "updated=") {
		t.Fatalf("dry run: exit %d\n%s", code, o)
	}
	if cfg := connectorConfig(t, "ci-sink"); cfg["errors.tolerance"] != "" {
		t.Fatalf("the dry run wrote: %v", cfg)
	}
	code, o = run(nil, append([]string{"--wait=2m"}, tlsArgs...)...)
	if code != 0 || !strings.Contains(o, "updated ci-sink") || connectorConfig(t, "ci-sink")["errors.tolerance"] != "all" {
		t.Fatalf("update: exit %d\n%s", code, o)
	}
}

// testPKI is a private CA, a server certificate for localhost and
// 127.0.0.1, and a client certificate, made for one test.
type testPKI struct {
	pool                          *x509.CertPool
	server                        tls.Certificate
	caFile, clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "connect-init test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, eku x509.ExtKeyUsage, dns []string, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{eku}, DNSNames: dns, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := testPKI{pool: x509.NewCertPool(), caFile: write("ca.pem", "CERTIFICATE", caDER)}
	p.pool.AddCert(ca)
	srvDER, srvKey := issue(2, "localhost", x509.ExtKeyUsageServerAuth, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	cliDER, cliKey := issue(3, "connect-init-ci", x509.ExtKeyUsageClientAuth, nil, nil)
	kder, err := x509.MarshalPKCS8PrivateKey(cliKey)
	if err != nil {
		t.Fatal(err)
	}
	p.clientCert, p.clientKey = write("client.pem", "CERTIFICATE", cliDER), write("client.key", "PRIVATE KEY", kder)
	return p
}

// testbedRun runs the binary with env and args.
func testbedRun(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, o, err := testbed.Run(ctx, binary, args, env)
	if err != nil {
		t.Fatal(err)
	}
	return code, o
}
