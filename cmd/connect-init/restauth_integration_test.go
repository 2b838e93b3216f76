//go:build integration

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/internal/testbed"
)

// restCall sends one request to a worker with optional basic credentials
// and client TLS, and returns the status and body.
func restCall(t *testing.T, method, url string, user *[2]string, tlsCfg *tls.Config, body []byte) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	if tlsCfg != nil {
		c.Transport = &http.Transport{TLSClientConfig: tlsCfg}
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != nil {
		req.SetBasicAuth(user[0], user[1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitREST polls until cond holds for GET url's answer, or fails the test
// when ctx ends.
func waitREST(ctx context.Context, t *testing.T, what, url string, user *[2]string, tlsCfg *tls.Config, cond func(int, string) bool) {
	t.Helper()
	for {
		if cond(restCall(t, http.MethodGet, url, user, tlsCfg, nil)) {
			return
		}
		select {
		case <-ctx.Done():
			code, body := restCall(t, http.MethodGet, url, user, tlsCfg, nil)
			t.Fatalf("%s: not within the test's time; last GET %s: %d %s", what, url, code, body)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// fileSourceDef writes one FileStreamSource definition into dir.
func fileSourceDef(t *testing.T, dir, name, input, topic string, extra map[string]string) {
	t.Helper()
	cfg := map[string]string{"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "tasks.max": "1", "file": input, "topic": topic}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noSecret fails the test when any output shows one of the secrets.
func noSecret(t *testing.T, where, out string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s shows a secret:\n%s", where, out)
		}
	}
}

// TestRESTBasicAuth: two real workers behind Kafka's own
// BasicAuthSecurityRestExtension (every request, /health included, needs
// credentials), started at once through `connect-init run` with the
// startup lock in the mode users get where the provider jar is installed
// (in the worker; TestRESTBasicAuthExecMode is the variant before the
// exec), the password as a _FILE secret. Each worker advertises a
// recording proxy in front of it, so that every request connect-init makes
// to it (the peers step, the lock's readiness, healthcheck, apply, the
// watcher, doctor, offsets) is seen: each must carry the credentials (a
// 401 is an answer too, so a test that only looks at the outcome passes
// whether they are sent or not). Then each command without them, or with a
// wrong password, stops at once naming the URL and the setting, never a
// secret.
func TestRESTBasicAuth(t *testing.T) { testRESTBasicAuth(t, lockModeWorker) }

// TestRESTBasicAuthExecMode is TestRESTBasicAuth with the lock taken
// before the exec (CONNECT_INIT_LOCK_MODE=exec).
func TestRESTBasicAuthExecMode(t *testing.T) { testRESTBasicAuth(t, lockModeExec) }

const (
	lockModeWorker = "worker"
	lockModeExec   = "exec"
)

func testRESTBasicAuth(t *testing.T, mode string) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	jar, err := testbed.BasicAuthExtension(ctx, cluster.Dist)
	if err != nil {
		t.Fatal(err)
	}
	password := "pw-" + randomSuffix()
	wrong := "wrong-" + randomSuffix()
	admin := [2]string{"admin", password}
	rotatedUser := [2]string{"rotated", "rotated-" + randomSuffix()}
	secrets := t.TempDir()
	pwFile := filepath.Join(secrets, "connect-rest-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	group := uniqueGroup(t, "restauth")
	lockTopic := "_connect-init-lock-" + group["group.id"]
	creds := []string{"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE=" + pwFile}

	var ws []*testbed.Worker
	var specs []*testbed.WorkerSpec
	var recorders []*authRecorder
	for _, name := range []string{"ba1", "ba2"} {
		props, err := cluster.WorkerProps(group)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := cluster.NewWorkerSpec(name+"-"+group["group.id"], props, 256)
		if err != nil {
			t.Fatal(err)
		}
		rec := newAuthRecorder(t, spec.RESTURL)
		recorders = append(recorders, rec)
		spec.Props["rest.advertised.host.name"] = "127.0.0.1"
		spec.Props["rest.advertised.port"] = rec.port
		if err := spec.BasicAuth(jar, [][2]string{admin, rotatedUser}); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	for _, spec := range specs {
		env := append(append(baseEnv(), envFromProps(spec.Props)...), "CONNECT_INIT_TIMEOUT=3m", "CONNECT_INIT_LOCK_TOPIC="+lockTopic, "CONNECT_INIT_LOG_FORMAT=json")
		env = append(env, creds...)
		argv := append([]string{binary, "run", "--"}, spec.Argv...)
		if mode == lockModeWorker {
			provider := providerJar(t)
			spec.AddClasspath(provider)
			argv = append([]string{binary, "run", "--"}, spec.Argv...)
			env = append(env, "CONNECT_INIT_LOCK_JAR="+provider, "CONNECT_INIT_WORKER_CONFIG="+spec.PropsFile)
		} else {
			env = append(env, "CONNECT_INIT_LOCK_MODE=exec")
		}
		w, err := cluster.StartWorkerCommand(spec, argv, env)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
		defer w.Stop(20 * time.Second)
	}
	for _, w := range ws {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range ws {
		if !strings.Contains(w.Log(), `"mode":"`+mode+`"`) {
			t.Errorf("%s: run did not take the lock in mode %s:\n%s", w.Spec.Name, mode, tailString(w.Log(), 3000))
		}
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(admin[0]+":"+admin[1]))
	rotatedAuth := new(string) // the header after the watch subtest rotates the secret
	defer func() { checkRecordedAuth(t, recorders, []string{want, *rotatedAuth}, mode) }()
	// The extension is really on: no credentials, no answer.
	if code, _ := restCall(t, http.MethodGet, specs[0].RESTURL+"/health", nil, nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("GET /health without credentials answered %d, want 401: the extension is not on", code)
	}
	// The second worker's lock waited for the first to be ready, as the
	// readiness look decides with the credentials.
	for _, w := range ws {
		if !strings.Contains(w.Log(), `"msg":"starting the worker"`) {
			t.Errorf("%s did not start through connect-init:\n%s", w.Spec.Name, tailString(w.Log(), 3000))
		}
		noSecret(t, w.Spec.Name+"'s log", w.Log(), password)
	}

	base := connectInitEnv(specs[0].Props)
	withCreds := append(append([]string(nil), base...), creds...)

	t.Run("healthcheck", func(t *testing.T) {
		if r := runHealthcheck(ctx, t, specs[0].Props, creds...); r.code != 0 || !strings.HasPrefix(r.out, "healthy:") {
			t.Errorf("with credentials: exit %d %q", r.code, r.out)
		}
		var r healthcheckResult
		unchecked(recorders, func() { r = runHealthcheck(ctx, t, specs[0].Props) })
		if r.code != 1 || !strings.Contains(r.out, "answered 401") || !strings.Contains(r.out, "requires credentials") || !strings.Contains(r.out, "CONNECT_INIT_REST_USERNAME") {
			t.Errorf("without credentials: exit %d %q", r.code, r.out)
		}
		unchecked(recorders, func() {
			r = runHealthcheck(ctx, t, specs[0].Props, "CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD="+wrong)
		})
		if r.code != 1 || !strings.Contains(r.out, "refused the credentials given") {
			t.Errorf("wrong password: exit %d %q", r.code, r.out)
		}
		noSecret(t, "healthcheck", r.out, wrong, password)
		r = runHealthcheck(ctx, t, specs[0].Props, "CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE=/run/secrets/absent")
		// healthcheck exits only 0 or 1 (Docker reserves 2): bad input
		// is unhealthy, named.
		if r.code != 1 || !strings.Contains(r.out, "CONNECT_INIT_REST_PASSWORD_FILE") || !strings.Contains(r.out, "cannot be read") {
			t.Errorf("unreadable _FILE: exit %d %q, want 1 naming the variable", r.code, r.out)
		}
	})

	dir := t.TempDir()
	input := filepath.Join(dir, "input.txt")
	if err := os.WriteFile(input, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defs := filepath.Join(dir, "connectors")
	if err := os.Mkdir(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "ba-source"
	topic := group["group.id"] + "-lines"
	status := specs[1].RESTURL + "/connectors/" + name + "/config"

	t.Run("apply", func(t *testing.T) {
		fileSourceDef(t, defs, name, input, topic, nil)
		res := runCLI(ctx, t, withCreds, "apply", "--dir", defs, "--wait=2m")
		if res.code != 0 {
			t.Fatalf("apply with credentials: exit %d\n%s", res.code, res.stderr)
		}
		fileSourceDef(t, defs, name, input, topic, map[string]string{"batch.size": "7"})
		if res = runCLI(ctx, t, withCreds, "apply", "--dir", defs, "--wait=2m"); res.code != 0 {
			t.Fatalf("apply an update: exit %d\n%s", res.code, res.stderr)
		}
		if code, body := restCall(t, http.MethodGet, status, &admin, nil, nil); code != 200 || !strings.Contains(body, `"batch.size":"7"`) {
			t.Errorf("the update is not in the cluster: %d %s", code, body)
		}
		noSecret(t, "apply", res.stdout+res.stderr, password)

		// Without credentials, or with a wrong password: exit 1 at once,
		// not after --wait (10m here; the test's context is far shorter).
		for _, extra := range [][]string{nil, {"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD=" + wrong}} {
			var res cliResult
			unchecked(recorders, func() {
				res = runCLI(ctx, t, append(append([]string(nil), base...), extra...), "apply", "--dir", defs, "--wait=10m")
			})
			out := res.stdout + res.stderr
			if res.code != 1 || !strings.Contains(out, "answered 401") || !strings.Contains(out, "CONNECT_INIT_REST_") {
				t.Errorf("apply %v: exit %d\n%s", extra, res.code, out)
			}
			if strings.Contains(out, "waiting for a worker of the group") {
				t.Errorf("apply %v waited for a worker instead of stopping:\n%s", extra, out)
			}
			noSecret(t, "apply", out, wrong, password)
		}
	})

	t.Run("watch", func(t *testing.T) {
		// The watcher reads user and password from files of its own, which
		// the test rotates below to the second user the workers know.
		watchUser, watchPw := filepath.Join(secrets, "watch-user"), filepath.Join(secrets, "watch-password")
		for f, v := range map[string]string{watchUser: "admin", watchPw: password} {
			if err := os.WriteFile(f, []byte(v+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env := append(append([]string(nil), base...), "CONNECT_INIT_REST_USERNAME_FILE="+watchUser, "CONNECT_INIT_REST_PASSWORD_FILE="+watchPw, "CONNECT_INIT_LOG_FORMAT=json")
		watcher, err := testbed.StartProcess("watch-"+group["group.id"], []string{binary, "apply", "--dir", defs, "--watch", "--watch-interval=1s", "--wait=2m"},
			env, dir, filepath.Join(dir, "watch.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer watcher.Stop(10 * time.Second)
		if err := watcher.WaitForLog(ctx, "watching the connectors"); err != nil {
			t.Fatalf("%v\n%s", err, tailString(watcher.Log(), 3000))
		}
		if code, body := restCall(t, http.MethodDelete, specs[0].RESTURL+"/connectors/"+name, &admin, nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete by hand: %d %s", code, body)
		}
		waitREST(ctx, t, "the watcher puts the deleted connector back", status, &admin, nil, func(code int, body string) bool {
			return code == 200 && strings.Contains(body, `"batch.size":"7"`)
		})
		// The secret is rotated: the workers' login module reads its
		// credentials file once (PropertyFileLoginModule caches it), so
		// they knew the second user from the start; the watcher's files
		// now name it. The running watcher sends the new credentials from
		// its next request on (before, the workers finder kept the client
		// it made first, with the old ones). It is stopped meanwhile, so
		// that none of its requests falls between the two writes.
		if err := watcher.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		for f, v := range map[string]string{watchUser: rotatedUser[0], watchPw: rotatedUser[1]} {
			if err := os.WriteFile(f, []byte(v+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := watcher.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		*rotatedAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(rotatedUser[0]+":"+rotatedUser[1]))
		if code, body := restCall(t, http.MethodDelete, specs[0].RESTURL+"/connectors/"+name, &admin, nil, nil); code != http.StatusNoContent {
			t.Fatalf("delete by hand after the rotation: %d %s", code, body)
		}
		waitREST(ctx, t, "the watcher puts the deleted connector back with the rotated secret", status, &admin, nil, func(code int, body string) bool {
			return code == 200 && strings.Contains(body, `"batch.size":"7"`)
		})
		if watcher.Exited() {
			t.Errorf("the watcher exited:\n%s", tailString(watcher.Log(), 3000))
		}
		if n := recordedWith(recorders, *rotatedAuth); n == 0 {
			t.Errorf("no request of the watcher carried the rotated credentials")
		}
		noSecret(t, "the watcher's log", watcher.Log(), password, rotatedUser[1])
	})

	t.Run("offsets", func(t *testing.T) {
		res := runCLI(ctx, t, withCreds, "offsets", "export", "--url", "http://127.0.0.1:"+recorders[0].port, "--connector", name, "--file", filepath.Join(dir, "offsets.json"))
		if res.code != 0 {
			t.Errorf("offsets export with credentials: exit %d\n%s", res.code, res.stderr)
		}
		noSecret(t, "offsets", res.stdout+res.stderr, password)
	})

	t.Run("doctor", func(t *testing.T) {
		res, doc := doctorJSON(ctx, t, withCreds)
		if got := findingsByID(doc)[doctor.IDRESTCredentialsRefused]; len(got) != 0 {
			t.Errorf("with credentials: %+v", got)
		}
		noSecret(t, "doctor", res.stdout+res.stderr, password)
		unchecked(recorders, func() { res, doc = doctorJSON(ctx, t, base) })
		got := findingsByID(doc)[doctor.IDRESTCredentialsRefused]
		if res.code != 1 || len(got) != 2 || !strings.Contains(got[0].Fix, "CONNECT_INIT_REST_USERNAME") {
			t.Errorf("without credentials: exit %d, findings %+v", res.code, got)
		}
	})
}

// TestRESTClientCertificates: a real worker whose https listener requires
// client certificates (listeners.https.ssl.client.auth=required), started
// through `connect-init run`. connect-init presents the worker's own
// listeners.https key store, as Connect's REST client does, and trusts its
// trust store: the peers step, healthcheck and apply all get through,
// while a client without a certificate is refused by the TLS handshake.
func TestRESTClientCertificates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "mtlsrest")
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{"listeners": fmt.Sprintf("https://127.0.0.1:%d", port), "rest.advertised.host.name": "127.0.0.1",
		"listeners.https.ssl.client.auth": "required"}
	for k, v := range pki.BrokerSSLProps("JKS", false) {
		extra["listeners.https."+k] = v
	}
	for k, v := range group {
		extra[k] = v
	}
	props, err := cluster.WorkerProps(extra)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec("mtls-"+group["group.id"], props, 256)
	if err != nil {
		t.Fatal(err)
	}
	clientTLS, err := pki.ClientTLS(true)
	if err != nil {
		t.Fatal(err)
	}
	spec.HealthTLS = clientTLS
	env := append(append(baseEnv(), envFromProps(props)...), "CONNECT_INIT_TIMEOUT=3m", "CONNECT_INIT_LOCK=false")
	w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), env)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(20 * time.Second)
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.Log(), "peers checked") {
		t.Errorf("the peers step did not pass:\n%s", tailString(w.Log(), 3000))
	}
	// Client certificates are really required.
	noCert, err := pki.ClientTLS(false)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := restCall(t, http.MethodGet, spec.RESTURL+"/health", nil, noCert, nil); code != 0 {
		t.Fatalf("GET /health without a client certificate answered %d %s, want a refused handshake", code, body)
	}
	if r := runHealthcheck(ctx, t, props); r.code != 0 {
		t.Errorf("healthcheck: exit %d %q", r.code, r.out)
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "input.txt")
	if err := os.WriteFile(input, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fileSourceDef(t, dir, "mtls-source", input, group["group.id"]+"-lines", nil)
	if res := runCLI(ctx, t, connectInitEnv(props), "apply", "--dir", dir, "--wait=2m"); res.code != 0 {
		t.Errorf("apply over mutual TLS: exit %d\n%s", res.code, res.stderr)
	}
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// authRecorder is a reverse proxy in front of one worker, advertised as the
// worker's URL, that records every request connect-init sends through it
// (Go's HTTP client; the worker's own forwarded and internal requests come
// from Java and are not connect-init's).
type authRecorder struct {
	port string
	mu   sync.Mutex
	reqs []recordedRequest
	// lax is set while the test sends requests without the credentials
	// (or with wrong ones) on purpose.
	lax bool
}

type recordedRequest struct {
	method, path, authorization string
	lax                         bool
}

// unchecked runs fn, whose requests are sent without the right
// credentials on purpose.
func unchecked(recs []*authRecorder, fn func()) {
	for _, r := range recs {
		r.mu.Lock()
		r.lax = true
		r.mu.Unlock()
	}
	defer func() {
		for _, r := range recs {
			r.mu.Lock()
			r.lax = false
			r.mu.Unlock()
		}
	}()
	fn()
}

func newAuthRecorder(t *testing.T, target string) *authRecorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &authRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxy.ServeHTTP(w, r)
		// The peers step's self-probe is answered by connect-init's own
		// token server on the worker's listener, before the worker serves
		// it: not a request to the worker's REST API.
		if strings.HasPrefix(r.UserAgent(), "Go-http-client") && w.Header().Get(peers.TokenHeader) == "" {
			rec.mu.Lock()
			rec.reqs = append(rec.reqs, recordedRequest{method: r.Method, path: r.URL.Path, authorization: r.Header.Get("Authorization"), lax: rec.lax})
			rec.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	_, rec.port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return rec
}

// checkRecordedAuth fails the test when a request connect-init sent with
// the credentials configured (outside unchecked) carried other credentials
// or none, and when a path connect-init's commands use saw no request
// with them.
func checkRecordedAuth(t *testing.T, recs []*authRecorder, want []string, mode string) {
	t.Helper()
	withRight := map[string]int{}
	total := 0
	for _, r := range recs {
		r.mu.Lock()
		for _, q := range r.reqs {
			total++
			key := q.method + " " + normalisePath(q.path)
			switch {
			case slices.Contains(want, q.authorization) && q.authorization != "":
				withRight[key]++
			case !q.lax:
				t.Errorf("%s went out without the credentials (Authorization %q)", key, redactAuth(q.authorization))
			}
		}
		r.mu.Unlock()
	}
	t.Logf("requests through the recording proxies: %d; with the credentials, by path: %v", total, withRight)
	for _, p := range []string{
		"GET /",                     // the peers step, the workers finder
		"GET /health",               // healthcheck, the lock's readiness
		"PUT /connectors/*/config",  // apply: create, update; the watcher
		"GET /connectors",           // apply, the watcher, doctor
		"GET /connectors/*/offsets", // offsets export
	} {
		if withRight[p] == 0 {
			t.Errorf("no request %s carried the credentials (lock mode %s)", p, mode)
		}
	}
}

// recordedWith counts the requests that carried the header auth.
func recordedWith(recs []*authRecorder, auth string) int {
	n := 0
	for _, r := range recs {
		r.mu.Lock()
		for _, q := range r.reqs {
			if q.authorization == auth {
				n++
			}
		}
		r.mu.Unlock()
	}
	return n
}

func redactAuth(h string) string {
	if h == "" {
		return ""
	}
	kind, _, _ := strings.Cut(h, " ")
	return kind + " (other credentials)"
}

// normalisePath replaces the connector name in /connectors/<name>/...
func normalisePath(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 3 && parts[1] == "connectors" {
		parts[2] = "*"
	}
	return strings.Join(parts, "/")
}
