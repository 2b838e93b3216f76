//go:build integration

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// securityScenario is one way of reaching the shared cluster: a listener,
// the worker's security settings, and what connect-init prepare must do.
type securityScenario struct {
	name     string
	listener string
	props    map[string]string
	wantCode int
	// wantMsg must appear in the output of a failing scenario: the cause,
	// not "EOF" or "run out of available brokers".
	wantMsg []string
}

// scramUsers creates SCRAM users with unique passwords and waits until the
// brokers accept them.
func scramUser(t *testing.T, name string, mech sarama.ScramMechanismType) string {
	t.Helper()
	password := fmt.Sprintf("scram-secret-%s-%s", name, randomSuffix())
	admin := newAdmin(t)
	res, err := admin.UpsertUserScramCredentials([]sarama.AlterUserScramCredentialsUpsert{{
		Name: name, Mechanism: mech, Iterations: 8192, Salt: []byte("salt-" + name), Password: []byte(password)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ErrorCode != sarama.ErrNoError {
			t.Fatalf("create SCRAM user %s: %v", name, r.ErrorCode)
		}
	}
	return password
}

func oneLine(pem []byte) string { return strings.Join(strings.Fields(string(pem)), " ") }

func escapedNewlines(pem []byte) string {
	return strings.ReplaceAll(strings.TrimSpace(string(pem)), "\n", `\n`)
}

func jaas(module string, opts map[string]string) string {
	s := module + " required"
	for k, v := range opts {
		s += fmt.Sprintf(` %s="%s"`, k, v)
	}
	return s + ";"
}

const (
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	oauthModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
)

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// tokenEndpoint serves the OAuth client-credentials flow with unsecured
// (alg none) JWTs, which the broker's default OAUTHBEARER validator
// accepts; it checks the client secret.
func tokenEndpoint(t *testing.T, clientID, clientSecret string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" || !ok || id != clientID || secret != clientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		enc := base64.RawURLEncoding
		now := time.Now().Unix()
		header := enc.EncodeToString([]byte(`{"alg":"none"}`))
		claims := enc.EncodeToString([]byte(fmt.Sprintf(`{"sub":%q,"iat":%d,"exp":%d,"scope":"kafka"}`, clientID, now, now+3600)))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": header + "." + claims + ".", "token_type": "bearer", "expires_in": 3600})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSecurityModesAgainstRealBrokers runs connect-init prepare through
// every supported security mode, and through the usual mistakes, against
// the real brokers' listeners; afterwards no secret may appear in any
// captured output.
func TestSecurityModesAgainstRealBrokers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	scram512 := scramUser(t, "alice512", sarama.SCRAM_MECHANISM_SHA_512)
	scram256 := scramUser(t, "bob256", sarama.SCRAM_MECHANISM_SHA_256)
	oauthSecret := "oauth-client-secret-" + randomSuffix()
	idp := tokenEndpoint(t, "connect-client", oauthSecret)
	secrets := []string{pki.StorePassword, pki.KeyPassword, scram512, scram256, plainPassword, oauthSecret}

	keyPEM, err := os.ReadFile(pki.Client.EncryptedKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	chainPEM, err := os.ReadFile(pki.Client.CertChainPEM)
	if err != nil {
		t.Fatal(err)
	}
	sasl := func(protocol, mech, jaasConfig string) map[string]string {
		return map[string]string{"security.protocol": protocol, "sasl.mechanism": mech, "sasl.jaas.config": jaasConfig}
	}
	ssl := map[string]string{"security.protocol": "SSL"}
	scenarios := []securityScenario{
		{name: "ssl-jks-truststore", listener: listenerSSL, props: merge(ssl, pki.TrustProps("JKS"))},
		{name: "ssl-pkcs12-truststore", listener: listenerSSL, props: merge(ssl, pki.TrustProps("PKCS12"))},
		{name: "ssl-pem-truststore", listener: listenerSSL, props: merge(ssl, pki.TrustProps("PEM"))},
		{name: "mtls-pkcs12", listener: listenerMTLS, props: merge(ssl, pki.ClientSSLProps("PKCS12", true))},
		{name: "mtls-jks", listener: listenerMTLS, props: merge(ssl, pki.ClientSSLProps("JKS", true))},
		{name: "mtls-inline-pem-encrypted-key", listener: listenerMTLS, props: merge(ssl, pki.TrustProps("PEM"), map[string]string{
			// The key on one line (Kafka's PEM parser accepts that); the
			// chain with \n escapes, which the worker's properties reading
			// turns back into line breaks (two certificates on one line
			// would merge, in Java too).
			"ssl.keystore.type": "PEM", "ssl.keystore.key": oneLine(keyPEM), "ssl.keystore.certificate.chain": escapedNewlines(chainPEM),
			"ssl.key.password": pki.KeyPassword})},
		{name: "sasl-plaintext-scram-sha-512", listener: listenerSASL, props: sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", jaas(scramModule, map[string]string{"username": "alice512", "password": scram512}))},
		{name: "sasl-plaintext-plain", listener: listenerSASL, props: sasl("SASL_PLAINTEXT", "PLAIN", jaas(plainModule, map[string]string{"username": "plainuser", "password": plainPassword}))},
		{name: "sasl-ssl-scram-sha-256", listener: listenerSASLSSL, props: merge(sasl("SASL_SSL", "SCRAM-SHA-256", jaas(scramModule, map[string]string{"username": "bob256", "password": scram256})), pki.TrustProps("JKS"))},
		{name: "sasl-plaintext-oauthbearer-unsecured", listener: listenerSASL, props: sasl("SASL_PLAINTEXT", "OAUTHBEARER", jaas(oauthModule, map[string]string{"unsecuredLoginStringClaim_sub": "connect"}))},
		{name: "sasl-plaintext-oauthbearer-client-credentials", listener: listenerSASL, props: merge(sasl("SASL_PLAINTEXT", "OAUTHBEARER",
			jaas(oauthModule, map[string]string{"clientId": "connect-client", "clientSecret": oauthSecret, "scope": "kafka"})), map[string]string{
			"sasl.oauthbearer.token.endpoint.url":   idp.URL + "/token",
			"sasl.login.callback.handler.class":     "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
			"ssl.endpoint.identification.algorithm": "https"})},
		{name: "ssl-hostname-verification-off", listener: listenerWrongName, props: merge(ssl, pki.TrustProps("JKS"), map[string]string{"ssl.endpoint.identification.algorithm": ""})},

		// The usual mistakes: fail fast, naming the cause.
		{name: "wrong-scram-password", listener: listenerSASL, wantCode: 1, wantMsg: []string{"authentication failed"},
			props: sasl("SASL_PLAINTEXT", "SCRAM-SHA-512", jaas(scramModule, map[string]string{"username": "alice512", "password": scram512 + "-wrong"}))},
		{name: "wrong-mechanism", listener: listenerSASL, wantCode: 1, wantMsg: []string{"mechanism"},
			props: sasl("SASL_PLAINTEXT", "SCRAM-SHA-256", jaas(scramModule, map[string]string{"username": "bob256", "password": scram256}))},
		{name: "wrong-truststore", listener: listenerSSL, wantCode: 1, wantMsg: []string{"truststore"},
			props: merge(ssl, map[string]string{"ssl.truststore.type": "JKS", "ssl.truststore.location": pki.OtherTrustJKS, "ssl.truststore.password": pki.StorePassword})},
		{name: "certificate-name-mismatch", listener: listenerWrongName, wantCode: 1, wantMsg: []string{"host name", "ssl.endpoint.identification.algorithm"},
			props: merge(ssl, pki.TrustProps("JKS"))},
		{name: "wrong-truststore-password", listener: listenerSSL, wantCode: 2, wantMsg: []string{"ssl.truststore.password"},
			props: merge(ssl, pki.TrustProps("JKS"), map[string]string{"ssl.truststore.password": pki.StorePassword + "-wrong"})},
		{name: "wrong-client-secret", listener: listenerSASL, wantCode: 1, wantMsg: []string{"token"},
			props: merge(sasl("SASL_PLAINTEXT", "OAUTHBEARER", jaas(oauthModule, map[string]string{"clientId": "connect-client", "clientSecret": oauthSecret + "-wrong"})), map[string]string{
				"sasl.oauthbearer.token.endpoint.url": idp.URL + "/token",
				"sasl.login.callback.handler.class":   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"})},
		{name: "unsupported-mechanism", listener: listenerSASL, wantCode: 2, wantMsg: []string{"sasl.mechanism"},
			props: sasl("SASL_PLAINTEXT", "DIGEST-MD5", jaas(plainModule, map[string]string{"username": "x", "password": plainPassword}))},
	}

	var mu sync.Mutex
	var outputs []string
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			props, err := cluster.WorkerProps(merge(uniqueGroup(t, "sec"), sc.props, map[string]string{"bootstrap.servers": cluster.BootstrapFor(sc.listener)}))
			if err != nil {
				t.Fatal(err)
			}
			env := append(baseEnv(), envFromProps(props)...)
			env = append(env, "CONNECT_INIT_TIMEOUT=60s")
			start := time.Now()
			code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			outputs = append(outputs, out)
			mu.Unlock()
			if code != sc.wantCode {
				t.Fatalf("exit %d, want %d:\n%s", code, sc.wantCode, out)
			}
			for _, m := range sc.wantMsg {
				if !strings.Contains(out, m) {
					t.Errorf("output does not name the cause %q:\n%s", m, out)
				}
			}
			if sc.wantCode != 0 && strings.Contains(out, "not ready after") {
				t.Errorf("a permanent error waited for the timeout instead of failing fast (%s):\n%s", time.Since(start).Round(time.Millisecond), out)
			}
			for _, bad := range []string{"run out of available brokers", "msg=EOF"} {
				if strings.Contains(out, bad) {
					t.Errorf("output has %q instead of a cause:\n%s", bad, out)
				}
			}
		})
	}

	// Redaction: no secret in any output of any scenario.
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("a secret (%d chars, starting %q) appears in connect-init's output", len(s), s[:6])
			}
		}
	}
}

// Kerberos for the shared cluster: a real KDC (Debian's krb5-kdc) with its
// own realm, and two GSSAPI listeners on every broker.
const (
	krbRealm          = "CONNECT.TEST"
	listenerKrb       = "KRB"    // SASL_PLAINTEXT with GSSAPI
	listenerKrbSSL    = "KRBSSL" // SASL_SSL with GSSAPI
	krbBrokerService  = "kafka"
	krbClientUser     = "connect"
	krbUnknownUser    = "nobody"
	krb5LoginModule   = "com.sun.security.auth.module.Krb5LoginModule"
	krbStaleKeyClient = "stale"
)

var (
	kdc *testbed.KDC
	// clientKeytab holds connect@CONNECT.TEST's key; staleKeytab an old key
	// of stale@CONNECT.TEST, whose key the KDC changed since.
	clientKeytab, staleKeytab string
)

// startKerberos starts the KDC, creates the brokers' and the clients'
// principals with keytabs, and returns the GSSAPI listeners, their broker
// settings and the brokers' JVM flags.
func startKerberos(ctx context.Context) ([]testbed.Listener, map[string]string, []string, error) {
	var err error
	if kdc, err = testbed.StartKDC(ctx, filepath.Join(workDir, "kdc"), krbRealm); err != nil {
		return nil, nil, nil, err
	}
	// sarama names the broker's service principal after the address it
	// dials (kafka/127.0.0.1), as the brokers advertise 127.0.0.1.
	brokerKeytab, err := kdc.AddPrincipal(ctx, krbBrokerService+"/127.0.0.1")
	if err != nil {
		return nil, nil, nil, err
	}
	if clientKeytab, err = kdc.AddPrincipal(ctx, krbClientUser); err != nil {
		return nil, nil, nil, err
	}
	if staleKeytab, err = kdc.AddPrincipal(ctx, krbStaleKeyClient); err != nil {
		return nil, nil, nil, err
	}
	if err := kdc.RandomizeKey(ctx, krbStaleKeyClient); err != nil {
		return nil, nil, nil, err
	}
	brokerJAAS := fmt.Sprintf(`%s required useKeyTab=true storeKey=true keyTab="%s" principal="%s/127.0.0.1@%s";`, krb5LoginModule, brokerKeytab, krbBrokerService, krbRealm)
	props := map[string]string{"sasl.kerberos.service.name": krbBrokerService}
	for _, l := range []string{listenerKrb, listenerKrbSSL} {
		p := "listener.name." + strings.ToLower(l) + "."
		props[p+"sasl.enabled.mechanisms"] = "GSSAPI"
		props[p+"gssapi.sasl.jaas.config"] = brokerJAAS
	}
	for k, v := range pki.BrokerSSLProps("JKS", false) {
		props["listener.name."+strings.ToLower(listenerKrbSSL)+"."+k] = v
	}
	listeners := []testbed.Listener{{Name: listenerKrb, Protocol: "SASL_PLAINTEXT"}, {Name: listenerKrbSSL, Protocol: "SASL_SSL"}}
	return listeners, props, []string{"-Djava.security.krb5.conf=" + kdc.Conf}, nil
}

// TestGSSAPIAgainstRealKDC: connect-init prepare authenticates with a
// keytab against the real KDC and the brokers' GSSAPI listeners, over
// SASL_PLAINTEXT and SASL_SSL; a stale keytab, an unknown principal and a
// missing keytab fail fast, naming the cause.
func TestGSSAPIAgainstRealKDC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	krb := func(protocol, keytab, principal string) map[string]string {
		return map[string]string{
			"security.protocol": protocol, "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": krbBrokerService,
			"sasl.jaas.config": fmt.Sprintf(`%s required useKeyTab=true storeKey=true keyTab="%s" principal="%s@%s";`, krb5LoginModule, keytab, principal, krbRealm),
		}
	}
	scenarios := []securityScenario{
		{name: "gssapi-sasl-plaintext", listener: listenerKrb, props: krb("SASL_PLAINTEXT", clientKeytab, krbClientUser)},
		{name: "gssapi-sasl-ssl", listener: listenerKrbSSL, props: merge(krb("SASL_SSL", clientKeytab, krbClientUser), pki.TrustProps("JKS"))},
		{name: "gssapi-stale-keytab", listener: listenerKrb, wantCode: 1, wantMsg: []string{"Kerberos", krbStaleKeyClient},
			props: krb("SASL_PLAINTEXT", staleKeytab, krbStaleKeyClient)},
		{name: "gssapi-unknown-principal", listener: listenerKrb, wantCode: 1, wantMsg: []string{"Kerberos", krbUnknownUser},
			props: krb("SASL_PLAINTEXT", clientKeytab, krbUnknownUser)},
		{name: "gssapi-missing-keytab", listener: listenerKrb, wantCode: 2, wantMsg: []string{"CONNECT_SASL_JAAS_CONFIG", "keyTab"},
			props: krb("SASL_PLAINTEXT", filepath.Join(workDir, "no.keytab"), krbClientUser)},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			props, err := cluster.WorkerProps(merge(uniqueGroup(t, "krb"), sc.props, map[string]string{"bootstrap.servers": cluster.BootstrapFor(sc.listener)}))
			if err != nil {
				t.Fatal(err)
			}
			env := append(baseEnv(), envFromProps(props)...)
			env = append(env, "CONNECT_INIT_TIMEOUT=60s", "KAFKA_OPTS=-Djava.security.krb5.conf="+kdc.Conf)
			code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
			if err != nil {
				t.Fatal(err)
			}
			if code != sc.wantCode {
				t.Fatalf("exit %d, want %d:\n%s", code, sc.wantCode, out)
			}
			for _, m := range sc.wantMsg {
				if !strings.Contains(out, m) {
					t.Errorf("output does not name %q:\n%s", m, out)
				}
			}
			if sc.wantCode != 0 && strings.Contains(out, "not ready after") {
				t.Errorf("a permanent Kerberos error waited for the timeout instead of failing fast:\n%s", out)
			}
			if sc.wantCode == 0 && !strings.Contains(out, "cluster ready") {
				t.Errorf("prepare exited 0 without the cluster ready line:\n%s", out)
			}
		})
	}
}
