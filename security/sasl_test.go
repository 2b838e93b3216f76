package security

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/xdg-go/scram"

	"github.com/connect-init/connect-init/workerconfig"
)

func envFunc(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func configureEnv(t *testing.T, p workerconfig.Properties, env map[string]string) (*sarama.Config, error) {
	t.Helper()
	cfg := sarama.NewConfig()
	return cfg, ConfigureWithOptions(cfg, p, Options{LookupEnv: envFunc(env)})
}

func plainJAAS(module string) string {
	return module + ` required username="` + testUser + `" password="` + testSASLPassword + `";`
}

func TestSASLPlainAndSCRAM(t *testing.T) {
	for _, tc := range []struct {
		mech, module string
	}{
		{"PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule"},
		{"SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule"},
		{"PLAIN", "org.apache.kafka.common.security.scram.ScramLoginModule"}, // the JVM accepts this too
	} {
		t.Run(tc.mech+"/"+simpleName(tc.module), func(t *testing.T) {
			cfg := mustConfigure(t, props(map[string]string{
				"security.protocol": "sasl_plaintext", "sasl.mechanism": tc.mech, "sasl.jaas.config": plainJAAS(tc.module),
			}))
			s := cfg.Net.SASL
			if !s.Enable || !s.Handshake || s.Version != sarama.SASLHandshakeV1 || string(s.Mechanism) != tc.mech {
				t.Fatalf("SASL settings: %+v", s)
			}
			if s.User != testUser || s.Password != testSASLPassword {
				t.Fatal("credentials not taken from the JAAS options")
			}
			if cfg.Net.TLS.Enable {
				t.Fatal("TLS enabled for SASL_PLAINTEXT")
			}
		})
	}
}

func TestSCRAMClientAgainstServer(t *testing.T) {
	for _, h := range []scram.HashGeneratorFcn{scram.SHA256, scram.SHA512} {
		client, err := h.NewClientUnprepped(testUser, testSASLPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		creds, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: "salty-salt", Iters: 4096})
		if err != nil {
			t.Fatal(err)
		}
		server, err := h.NewServer(func(user string) (scram.StoredCredentials, error) {
			if user != testUser {
				return scram.StoredCredentials{}, errors.New("unknown user")
			}
			return creds, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, pw := range []string{testSASLPassword, "wrong"} {
			c := &SCRAMClient{Hash: h}
			if err := c.Begin(testUser, pw, ""); err != nil {
				t.Fatal(err)
			}
			sc := server.NewConversation()
			msg, err := c.Step("")
			for err == nil && !c.Done() {
				var reply string
				reply, err = sc.Step(msg)
				if err != nil {
					break
				}
				msg, err = c.Step(reply)
			}
			if pw == testSASLPassword && (err != nil || !sc.Valid()) {
				t.Fatalf("conversation failed: %v", err)
			}
			if pw == "wrong" && err == nil && sc.Valid() {
				t.Fatal("wrong password accepted")
			}
		}
	}
}

func TestSASLSSLCombinesBoth(t *testing.T) {
	pki := testPKI(t)
	cfg := mustConfigure(t, props(pki.ClientSSLProps("PEM", true), map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
		"sasl.jaas.config": plainJAAS("org.apache.kafka.common.security.scram.ScramLoginModule"),
	}))
	if !cfg.Net.TLS.Enable || !cfg.Net.SASL.Enable || cfg.Net.SASL.SCRAMClientGeneratorFunc == nil {
		t.Fatal("SASL_SSL must enable TLS and SASL")
	}
}

func TestSASLStaticJAASFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "jaas.conf")
	content := "KafkaClient {\n  org.apache.kafka.common.security.plain.PlainLoginModule required\n  username=\"" + testUser + "\"\n  password=\"" + testSASLPassword + "\";\n};\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	p := props(map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"})
	cfg, err := configureEnv(t, p, map[string]string{"KAFKA_OPTS": "-Xmx1g -Djava.security.auth.login.config=" + file + " -Dfoo=bar"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Net.SASL.User != testUser || cfg.Net.SASL.Password != testSASLPassword {
		t.Fatal("credentials not read from the static JAAS file")
	}
	// Without the file, the error says what to set.
	_, err = configureEnv(t, p, nil)
	var we *workerconfig.Error
	if !errors.As(err, &we) || we.Property != "sasl.jaas.config" {
		t.Fatalf("want an error on sasl.jaas.config, got %v", err)
	}
}

func TestSASLConfigErrors(t *testing.T) {
	scramJAAS := plainJAAS("org.apache.kafka.common.security.scram.ScramLoginModule")
	tests := []struct {
		name    string
		set     map[string]string
		errProp string
		want    string
	}{
		{"lower-case mechanism", map[string]string{"sasl.mechanism": "plain", "sasl.jaas.config": scramJAAS}, "sasl.mechanism", "upper case"},
		{"unknown mechanism", map[string]string{"sasl.mechanism": "AWS_MSK_IAM", "sasl.jaas.config": scramJAAS}, "sasl.mechanism", "not supported"},
		{"default mechanism is GSSAPI", map[string]string{"sasl.jaas.config": scramJAAS}, "sasl.jaas.config", "GSSAPI"},
		{"OAuth module with PLAIN", map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="` + testClientSecret + `";`}, "sasl.jaas.config", "OAuthBearerLoginModule"},
		{"PLAIN module with OAUTHBEARER", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": plainJAAS("org.apache.kafka.common.security.plain.PlainLoginModule")}, "sasl.jaas.config", "PlainLoginModule"},
		{"unparsable JAAS", map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required password="` + testSASLPassword + `"`}, "sasl.jaas.config", "semi-colon"},
		{"no username", map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required password="` + testSASLPassword + `";`}, "sasl.jaas.config", "username"},
		{"delegation token", map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="` + testSASLPassword + `" tokenauth="true";`}, "sasl.jaas.config", "delegation"},
		{"custom callback handler", map[string]string{"sasl.mechanism": "PLAIN", "sasl.jaas.config": scramJAAS, "sasl.client.callback.handler.class": "com.example.Handler"}, "sasl.client.callback.handler.class", "custom"},
		{"custom OAuth handler", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`, "sasl.login.callback.handler.class": "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler"}, "sasl.login.callback.handler.class", "custom"},
		{"OAuth without handler class", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "https://idp/token", "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" clientSecret="` + testClientSecret + `";`}, "sasl.jaas.config", "sasl.login.callback.handler.class"},
		{"OAuth without secret", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": "https://idp/token", "sasl.login.callback.handler.class": handlerSecured, "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id";`}, "sasl.jaas.config", "clientSecret"},
		{"OAuth without URL", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.login.callback.handler.class": handlerSecured, "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" clientSecret="` + testClientSecret + `";`}, "sasl.oauthbearer.token.endpoint.url", "not set"},
		{"unsecured reserved claim", map[string]string{"sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="` + testUser + `" unsecuredLoginNumberClaim_exp="1";`}, "sasl.jaas.config", "exp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := props(map[string]string{"security.protocol": "SASL_PLAINTEXT"}, tc.set)
			_, err := configure(t, p)
			var we *workerconfig.Error
			if !errors.As(err, &we) || we.Property != tc.errProp {
				t.Fatalf("want an error on %s, got %v", tc.errProp, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

// tokenServer is a fake OAuth token endpoint that checks the request the
// way an identity provider would.
func tokenServer(t *testing.T, wantID, wantSecret, wantScope string, requests *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		id, secret, ok := r.BasicAuth()
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if !ok || id != wantID || secret != wantSecret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client","error_description":"bad client credentials"}`)
			return
		}
		if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != wantScope || r.PostForm.Get("client_secret") != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":"invalid_request","error_description":"form %s"}`, r.PostForm.Encode())
			return
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, testToken)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOAuthClientCredentials(t *testing.T) {
	// A secret with characters that URL-encoding would change: Kafka sends
	// it raw unless sasl.oauthbearer.header.urlencode=true.
	secret := testClientSecret + "+/:"
	var n atomic.Int32
	srv := tokenServer(t, "connect-client", secret, "kafka.read", &n)
	base := map[string]string{
		"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
		"sasl.login.callback.handler.class":   handlerSecured,
		"sasl.oauthbearer.token.endpoint.url": srv.URL + "/token",
	}
	t.Run("JAAS options", func(t *testing.T) {
		n.Store(0)
		cfg := mustConfigure(t, props(base, map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="connect-client" clientSecret="` + secret + `" scope="kafka.read" extension_logicalCluster="lkc-1";`}))
		p := cfg.Net.SASL.TokenProvider
		for i := 0; i < 3; i++ {
			tok, err := p.Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok.Token != testToken || tok.Extensions["logicalCluster"] != "lkc-1" {
				t.Fatalf("token %+v", tok.Extensions)
			}
		}
		if n.Load() != 1 {
			t.Fatalf("token fetched %d times, want 1 (cached)", n.Load())
		}
	})
	t.Run("Kafka 4.1 properties win over JAAS options", func(t *testing.T) {
		cfg := mustConfigure(t, props(base, map[string]string{
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="old" clientSecret="old" scope="old";`,
			"sasl.oauthbearer.client.credentials.client.id":     "connect-client",
			"sasl.oauthbearer.client.credentials.client.secret": secret,
			"sasl.oauthbearer.scope":                            "kafka.read",
		}))
		if _, err := cfg.Net.SASL.TokenProvider.Token(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("rejected credentials", func(t *testing.T) {
		cfg := mustConfigure(t, props(base, map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="connect-client" clientSecret="` + testClientSecret + `-wrong" scope="kafka.read";`}))
		_, err := cfg.Net.SASL.TokenProvider.Token()
		if err == nil {
			t.Fatal("want an error")
		}
		msg := ExplainConnectError(err, cfg)
		for _, want := range []string{"401", "invalid_client", srv.URL} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q does not mention %q", msg, want)
			}
		}
		assertNoSecrets(t, msg)
		assertNoSecrets(t, err.Error())
	})
	t.Run("file token", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "token.jwt")
		if err := os.WriteFile(f, []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := mustConfigure(t, props(base, map[string]string{"sasl.oauthbearer.token.endpoint.url": "file://" + f,
			"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`}))
		tok, err := cfg.Net.SASL.TokenProvider.Token()
		if err != nil || tok.Token != testToken {
			t.Fatalf("file token: %v", err)
		}
	})
}

func TestOAuthUnsecured(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	cfg := sarama.NewConfig()
	err := ConfigureWithOptions(cfg, props(map[string]string{
		"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
		"sasl.jaas.config": `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="` + testUser + `" unsecuredLoginListClaim_scope=",a,b" unsecuredLoginExtension_traceId="x1";`,
	}), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.Net.SASL.TokenProvider.Token()
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok.Token, ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("not an unsecured JWS: %q", tok.Token)
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if string(h) != `{"alg":"none"}` {
		t.Fatalf("header %s", h)
	}
	var claims map[string]any
	pl, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(pl, &claims); err != nil {
		t.Fatal(err)
	}
	if claims["sub"] != testUser || claims["iat"] != 1.7e9 || claims["exp"] != 1.7e9+3600 {
		t.Fatalf("claims %v", claims)
	}
	if sc, _ := claims["scope"].([]any); len(sc) != 2 || sc[0] != "a" {
		t.Fatalf("scope %v", claims["scope"])
	}
	if tok.Extensions["traceId"] != "x1" {
		t.Fatalf("extensions %v", tok.Extensions)
	}
}

func TestGSSAPI(t *testing.T) {
	dir := t.TempDir()
	krb5 := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(krb5, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n[realms]\n  EXAMPLE.COM = {\n    kdc = kdc.example.com:88\n  }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kt := keytab.New()
	if err := kt.AddEntry("connect", "EXAMPLE.COM", testSASLPassword, time.Now(), 1, 18); err != nil {
		t.Fatal(err)
	}
	ktBytes, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ktPath := filepath.Join(dir, "connect.keytab")
	if err := os.WriteFile(ktPath, ktBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KAFKA_OPTS": "-Djava.security.krb5.conf=" + krb5}
	jaas := func(extra string) string {
		return `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="` + ktPath + `" ` + extra + `;`
	}
	base := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka"}

	cfg, err := configureEnv(t, props(base, map[string]string{"sasl.jaas.config": jaas(`principal="connect"`)}), env)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g := cfg.Net.SASL.GSSAPI
	if g.AuthType != sarama.KRB5_KEYTAB_AUTH || g.KeyTabPath != ktPath || g.KerberosConfigPath != krb5 ||
		g.Username != "connect" || g.Realm != "EXAMPLE.COM" || g.ServiceName != "kafka" || !g.DisablePAFXFAST {
		t.Fatalf("GSSAPI config %+v", g)
	}

	for name, tc := range map[string]struct {
		set     map[string]string
		env     map[string]string
		errProp string
	}{
		"ticket cache only":        {map[string]string{"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;`}, env, "sasl.jaas.config"},
		"no service name":          {map[string]string{"sasl.kerberos.service.name": "", "sasl.jaas.config": jaas(`principal="connect@EXAMPLE.COM"`)}, env, "sasl.kerberos.service.name"},
		"conflicting service name": {map[string]string{"sasl.jaas.config": jaas(`principal="connect@EXAMPLE.COM" serviceName="other"`)}, env, "sasl.kerberos.service.name"},
		"missing krb5.conf":        {map[string]string{"sasl.jaas.config": jaas(`principal="connect@EXAMPLE.COM"`)}, map[string]string{"KAFKA_OPTS": "-Djava.security.krb5.conf=/nonexistent/krb5.conf"}, "KAFKA_OPTS -Djava.security.krb5.conf"},
		"missing keytab":           {map[string]string{"sasl.jaas.config": `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/nonexistent.keytab" principal="a@B";`}, env, "sasl.jaas.config"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := configureEnv(t, props(base, tc.set), tc.env)
			var we *workerconfig.Error
			if !errors.As(err, &we) || we.Property != tc.errProp {
				t.Fatalf("want error on %s, got %v", tc.errProp, err)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func TestConfigureLeavesConfigOnError(t *testing.T) {
	cfg := sarama.NewConfig()
	cfg.Net.SASL.User = "kept"
	err := ConfigureWithOptions(cfg, props(map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "nope"}), Options{})
	if err == nil || cfg.Net.SASL.User != "kept" || cfg.Net.TLS.Enable {
		t.Fatalf("cfg changed on error: %v", err)
	}
	if err := Configure(cfg, props(map[string]string{"security.protocol": "plaintext"})); err != nil || cfg.Net.TLS.Enable || cfg.Net.SASL.Enable {
		t.Fatalf("PLAINTEXT: %v", err)
	}
}
