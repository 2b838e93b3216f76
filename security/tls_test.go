package security

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/security/securitytest"
	"github.com/connect-init/connect-init/workerconfig"
)

// Unique strings so the redaction checks cannot match by accident.
const (
	testStorePassword = "StorePw-4b9e1c7a"
	testKeyPassword   = "KeyPw-d02f83aa"
	testSASLPassword  = "SaslPw-91c3e5f0"
	testClientSecret  = "ClientSecret-7a2b6d11"
	testToken         = "eyJ0ZXN0IjoiVG9rZW4tYzRlOCJ9.payload-5d2e.sig-88f1"
	testUser          = "user-3e7c"
)

var allTestSecrets = []string{testStorePassword, testKeyPassword, testSASLPassword, testClientSecret, testToken, "sig-88f1"}

var (
	pkiOnce sync.Once
	pkiVal  *securitytest.PKI
	pkiErr  error
	pkiDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pkiDir != "" {
		os.RemoveAll(pkiDir)
	}
	os.Exit(code)
}

// testPKI returns the package's shared PKI; the JDK's keytool is required.
func testPKI(t *testing.T) *securitytest.PKI {
	t.Helper()
	if _, err := securitytest.Keytool(); err != nil {
		t.Fatalf("keytool not found (the JDK is required, as for the test bed): %v", err)
	}
	pkiOnce.Do(func() {
		pkiDir, pkiErr = os.MkdirTemp("", "security-pki-")
		if pkiErr == nil {
			pkiVal, pkiErr = securitytest.NewPKI(pkiDir,
				securitytest.WithStorePassword(testStorePassword), securitytest.WithKeyPassword(testKeyPassword))
		}
	})
	if pkiErr != nil {
		t.Fatalf("NewPKI: %v", pkiErr)
	}
	return pkiVal
}

func props(kv ...map[string]string) workerconfig.Properties {
	p := workerconfig.Properties{}
	for _, m := range kv {
		for k, v := range m {
			p[k] = v
		}
	}
	return p
}

// tlsServer serves TLS with id's certificate; with clientCA it requires a
// client certificate signed by it. It answers "ok" after the handshake.
func tlsServer(t *testing.T, id securitytest.Identity, clientCA *x509.Certificate) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(id.CertChainPEM, id.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if clientCA != nil {
		pool := x509.NewCertPool()
		pool.AddCert(clientCA)
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if err := c.(*tls.Conn).Handshake(); err != nil {
					return
				}
				_, _ = c.Write([]byte("ok"))
			}()
		}
	}()
	return ln.Addr().String()
}

// dial connects the way sarama does (ServerName = broker host) and reads
// the server's greeting, so TLS 1.3 client-certificate rejections surface.
func dial(cfg *tls.Config, addr string) error {
	host, _, _ := net.SplitHostPort(addr)
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = host
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, c)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2)
	_, err = io.ReadFull(conn, buf)
	return err
}

func configure(t *testing.T, p workerconfig.Properties) (*sarama.Config, error) {
	t.Helper()
	cfg := sarama.NewConfig()
	err := ConfigureWithOptions(cfg, p, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	return cfg, err
}

func mustConfigure(t *testing.T, p workerconfig.Properties) *sarama.Config {
	t.Helper()
	cfg, err := configure(t, p)
	if err != nil {
		t.Fatalf("Configure: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("sarama rejects the result: %v", err)
	}
	return cfg
}

func TestTLSStoresAndMutualTLS(t *testing.T) {
	pki := testPKI(t)
	addr := tlsServer(t, pki.Server, pki.CA)
	for _, trust := range []string{"JKS", "PKCS12", "PEM"} {
		for _, key := range []string{"JKS", "PKCS12", "PEM"} {
			t.Run(trust+"-trust/"+key+"-key", func(t *testing.T) {
				p := props(map[string]string{"security.protocol": "ssl"}, pki.ClientSSLProps(trust, false))
				for k, v := range pki.ClientSSLProps(key, true) {
					if strings.HasPrefix(k, "ssl.keystore") || k == "ssl.key.password" {
						p[k] = v
					}
				}
				cfg := mustConfigure(t, p)
				if !cfg.Net.TLS.Enable || cfg.Net.SASL.Enable {
					t.Fatalf("TLS %v SASL %v", cfg.Net.TLS.Enable, cfg.Net.SASL.Enable)
				}
				if err := dial(cfg.Net.TLS.Config, addr); err != nil {
					t.Fatalf("handshake: %v", err)
				}
			})
		}
	}
}

func TestTLSInlinePEM(t *testing.T) {
	pki := testPKI(t)
	addr := tlsServer(t, pki.Server, pki.CA)
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	oneLine := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	cases := map[string]map[string]string{
		"encrypted key": {
			"ssl.keystore.key": read(pki.Client.EncryptedKeyPEM), "ssl.key.password": testKeyPassword,
			"ssl.keystore.certificate.chain": read(pki.Client.CertChainPEM), "ssl.truststore.certificates": read(pki.CAPEM),
		},
		"plain key": {
			"ssl.keystore.key": read(pki.Client.KeyPEM), "ssl.keystore.certificate.chain": read(pki.Client.CertChainPEM),
			"ssl.truststore.certificates": read(pki.CAPEM),
		},
		"squeezed onto one line (environment variable)": {
			"ssl.keystore.key": oneLine(read(pki.Client.EncryptedKeyPEM)), "ssl.key.password": testKeyPassword,
			// Only single-block values: Kafka's PemParser (a greedy regexp)
			// merges several blocks on one line, and so do we.
			"ssl.keystore.certificate.chain": read(pki.Client.CertChainPEM), "ssl.truststore.certificates": oneLine(read(pki.CAPEM)),
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := props(map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.truststore.type": "PEM"}, c)
			cfg := mustConfigure(t, p)
			if err := dial(cfg.Net.TLS.Config, addr); err != nil {
				t.Fatalf("handshake: %v", err)
			}
		})
	}
}

func TestTLSHostnameVerification(t *testing.T) {
	pki := testPKI(t)
	wrong := tlsServer(t, pki.WrongName, nil)
	base := props(map[string]string{"security.protocol": "SSL"}, pki.ClientSSLProps("PKCS12", false))

	cfg := mustConfigure(t, base)
	err := dial(cfg.Net.TLS.Config, wrong)
	var he x509.HostnameError
	if !errors.As(err, &he) {
		t.Fatalf("want a host name error, got %v", err)
	}
	if msg := ExplainConnectError(err, cfg); !strings.Contains(msg, "ssl.endpoint.identification.algorithm") {
		t.Fatalf("explanation does not name the setting: %s", msg)
	}

	off := props(base, map[string]string{"ssl.endpoint.identification.algorithm": ""})
	cfg = mustConfigure(t, off)
	if err := dial(cfg.Net.TLS.Config, wrong); err != nil {
		t.Fatalf("verification off should accept the wrong name: %v", err)
	}

	// Off means "no host name check", not "no check": an untrusted chain
	// still fails, as in Java.
	untrusted := props(off, map[string]string{"ssl.truststore.location": pki.OtherTrustJKS, "ssl.truststore.type": "JKS"})
	cfg = mustConfigure(t, untrusted)
	err = dial(cfg.Net.TLS.Config, wrong)
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &ua) {
		t.Fatalf("want unknown authority with verification off, got %v", err)
	}
	if msg := ExplainConnectError(err, cfg); !strings.Contains(msg, "truststore") {
		t.Fatalf("explanation does not name the truststore: %s", msg)
	}
}

func TestTLSClientCertRequired(t *testing.T) {
	pki := testPKI(t)
	addr := tlsServer(t, pki.Server, pki.CA)
	cfg := mustConfigure(t, props(map[string]string{"security.protocol": "SSL"}, pki.ClientSSLProps("JKS", false)))
	err := dial(cfg.Net.TLS.Config, addr)
	if err == nil {
		t.Fatal("server requires a client certificate; the handshake should fail")
	}
	if msg := ExplainConnectError(err, cfg); !strings.Contains(msg, "ssl.keystore") {
		t.Fatalf("explanation does not point at the keystore: %v -> %s", err, msg)
	}
}

func TestTLSAgainstPlaintextListener(t *testing.T) {
	pki := testPKI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = c.Write([]byte("\x00\x00\x00\x10not a tls server......"))
			time.Sleep(100 * time.Millisecond)
			c.Close()
		}
	}()
	cfg := mustConfigure(t, props(map[string]string{"security.protocol": "SSL"}, pki.ClientSSLProps("JKS", false)))
	err = dial(cfg.Net.TLS.Config, ln.Addr().String())
	if msg := ExplainConnectError(err, cfg); !strings.Contains(msg, "PLAINTEXT") {
		t.Fatalf("%v -> %s", err, msg)
	}
}

func TestTLSStoreQuirks(t *testing.T) {
	pki := testPKI(t)
	addr := tlsServer(t, pki.Server, nil)
	t.Run("PKCS12 file with the default type JKS (JDK dual format)", func(t *testing.T) {
		p := props(map[string]string{"security.protocol": "SSL", "ssl.truststore.location": pki.TrustPKCS12, "ssl.truststore.password": testStorePassword})
		if err := dial(mustConfigure(t, p).Net.TLS.Config, addr); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("JKS truststore without a password (Java skips the integrity check)", func(t *testing.T) {
		p := props(map[string]string{"security.protocol": "SSL", "ssl.truststore.location": pki.TrustJKS})
		if err := dial(mustConfigure(t, p).Net.TLS.Config, addr); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("keystore used as truststore", func(t *testing.T) {
		p := props(map[string]string{"security.protocol": "SSL", "ssl.truststore.type": "PKCS12",
			"ssl.truststore.location": pki.Client.PKCS12, "ssl.truststore.password": testStorePassword})
		if _, err := configure(t, p); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTLSVersions(t *testing.T) {
	tests := []struct {
		set      map[string]string
		min, max uint16
		errProp  string
	}{
		{nil, tls.VersionTLS12, tls.VersionTLS13, ""},
		{map[string]string{"ssl.enabled.protocols": "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, ""},
		{map[string]string{"ssl.enabled.protocols": "TLSv1.3"}, tls.VersionTLS13, tls.VersionTLS13, ""},
		{map[string]string{"ssl.protocol": "TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, ""},
		{map[string]string{"ssl.protocol": "TLS"}, tls.VersionTLS12, tls.VersionTLS13, ""},
		{map[string]string{"ssl.enabled.protocols": "TLSv1.1, TLSv1.2"}, tls.VersionTLS12, tls.VersionTLS12, ""},
		{map[string]string{"ssl.enabled.protocols": "TLSv1.1"}, 0, 0, "ssl.enabled.protocols"},
		{map[string]string{"ssl.enabled.protocols": "TLSv9"}, 0, 0, "ssl.enabled.protocols"},
		{map[string]string{"ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.3"}, 0, 0, "ssl.protocol"},
		{map[string]string{"ssl.protocol": "SSLv3"}, 0, 0, "ssl.protocol"},
	}
	for _, tc := range tests {
		p := props(map[string]string{"security.protocol": "SSL"}, tc.set)
		cfg, err := configure(t, p)
		if tc.errProp != "" {
			var we *workerconfig.Error
			if !errors.As(err, &we) || we.Property != tc.errProp {
				t.Errorf("%v: want error on %s, got %v", tc.set, tc.errProp, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.set, err)
			continue
		}
		c := cfg.Net.TLS.Config
		if c.MinVersion != tc.min || c.MaxVersion != tc.max {
			t.Errorf("%v: got %x-%x want %x-%x", tc.set, c.MinVersion, c.MaxVersion, tc.min, tc.max)
		}
	}
}

func TestTLSConfigErrors(t *testing.T) {
	pki := testPKI(t)
	pkcs1 := filepath.Join(t.TempDir(), "pkcs1.pem")
	writePKCS1(t, pki, pkcs1)
	tests := []struct {
		name    string
		set     map[string]string
		errProp string
	}{
		{"unknown protocol", map[string]string{"security.protocol": "TLS"}, "security.protocol"},
		{"wrong truststore password", map[string]string{"ssl.truststore.location": pki.TrustJKS, "ssl.truststore.password": "nope-" + testStorePassword}, "ssl.truststore.password"},
		{"wrong PKCS12 truststore password", map[string]string{"ssl.truststore.location": pki.TrustPKCS12, "ssl.truststore.password": "nope"}, "ssl.truststore.password"},
		{"PKCS12 truststore without password", map[string]string{"ssl.truststore.location": pki.TrustPKCS12}, "ssl.truststore.password"},
		{"missing truststore", map[string]string{"ssl.truststore.location": "/nonexistent/ts.jks"}, "ssl.truststore.location"},
		{"keystore without password", map[string]string{"ssl.keystore.location": pki.Client.JKS}, "ssl.keystore.password"},
		{"wrong keystore password", map[string]string{"ssl.keystore.location": pki.Client.JKS, "ssl.keystore.password": "x" + testStorePassword, "ssl.key.password": testKeyPassword}, "ssl.keystore.password"},
		{"wrong JKS key password", map[string]string{"ssl.keystore.location": pki.Client.JKS, "ssl.keystore.password": testStorePassword, "ssl.key.password": "x" + testKeyPassword}, "ssl.key.password"},
		{"JKS key password defaults to store password", map[string]string{"ssl.keystore.location": pki.Client.JKS, "ssl.keystore.password": testStorePassword}, "ssl.key.password"},
		{"PEM key with wrong passphrase", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.Client.PEMStore, "ssl.key.password": "x" + testKeyPassword}, "ssl.key.password"},
		{"encrypted PEM key without passphrase", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.Client.PEMStore}, "ssl.key.password"},
		{"PEM keystore with store password", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pki.Client.PEMStore, "ssl.keystore.password": testStorePassword}, "ssl.keystore.password"},
		{"PKCS#1 key", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": pkcs1}, "ssl.keystore.location"},
		{"inline certs with JKS type", map[string]string{"ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"}, "ssl.truststore.certificates"},
		{"key without chain", map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"}, "ssl.keystore.certificate.chain"},
		{"JCEKS type", map[string]string{"ssl.truststore.type": "JCEKS", "ssl.truststore.location": pki.TrustJKS}, "ssl.truststore.type"},
		{"endpoint algorithm", map[string]string{"ssl.endpoint.identification.algorithm": "ldaps"}, "ssl.endpoint.identification.algorithm"},
		{"engine factory", map[string]string{"ssl.engine.factory.class": "com.example.Factory"}, "ssl.engine.factory.class"},
		{"cipher suite", map[string]string{"ssl.cipher.suites": "TLS_FOO"}, "ssl.cipher.suites"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := props(map[string]string{"security.protocol": "SSL"}, tc.set)
			_, err := configure(t, p)
			var we *workerconfig.Error
			if !errors.As(err, &we) || we.Property != tc.errProp {
				t.Fatalf("want a *workerconfig.Error on %s, got %v", tc.errProp, err)
			}
			assertNoSecrets(t, err.Error())
		})
	}
}

func writePKCS1(t *testing.T, pki *securitytest.PKI, path string) {
	t.Helper()
	chain, err := os.ReadFile(pki.Client.CertChainPEM)
	if err != nil {
		t.Fatal(err)
	}
	key := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(pki.Client.Key.(*rsa.PrivateKey))})
	if err := os.WriteFile(path, append(key, chain...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// assertNoSecrets fails when s contains any secret used by the tests.
func assertNoSecrets(t *testing.T, s string) {
	t.Helper()
	for _, secret := range allTestSecrets {
		if strings.Contains(s, secret) {
			t.Fatalf("text leaks a secret (%.6s...): %s", secret, s)
		}
	}
	if strings.Contains(s, "PRIVATE KEY") && strings.Contains(s, "-----BEGIN") {
		t.Fatalf("text leaks a private key: %s", s)
	}
}

// TestSaramaErrorsExplained drives sarama's own broker connection into a
// listener of the wrong kind and checks the explanation of its real error.
func TestSaramaErrorsExplained(t *testing.T) {
	pki := testPKI(t)
	tlsAddr := tlsServer(t, pki.Server, nil)

	plain := sarama.NewConfig()
	plain.Net.DialTimeout, plain.Net.ReadTimeout = 3*time.Second, 3*time.Second
	b := sarama.NewBroker(tlsAddr)
	if err := b.Open(plain); err != nil {
		t.Fatal(err)
	}
	_, err := b.Connected()
	if err == nil {
		_, err = b.ApiVersions(&sarama.ApiVersionsRequest{Version: 0})
	}
	_ = b.Close()
	t.Logf("plaintext on TLS: %v -> %s", err, ExplainConnectError(err, plain))
	if msg := ExplainConnectError(err, plain); !strings.Contains(msg, "SSL") {
		t.Fatalf("plaintext client on a TLS listener: %v -> %s", err, msg)
	}

	wrong := mustConfigure(t, props(map[string]string{"security.protocol": "SSL"}, pki.ClientSSLProps("JKS", false)))
	wrongName := tlsServer(t, pki.WrongName, nil)
	b = sarama.NewBroker(wrongName)
	if err := b.Open(wrong); err != nil {
		t.Fatal(err)
	}
	// sarama does the TLS handshake lazily: the error shows on the first
	// request, not in Connected().
	_, err = b.Connected()
	if err == nil {
		_, err = b.ApiVersions(&sarama.ApiVersionsRequest{Version: 0})
	}
	_ = b.Close()
	if msg := ExplainConnectError(err, wrong); !strings.Contains(msg, "host name") {
		t.Fatalf("wrong name: %v -> %s", err, msg)
	}
}
