// Package securitytest creates throw-away TLS material for tests: a CA,
// broker and client certificates, and the stores Kafka reads (JKS and
// PKCS12 written by the JDK's keytool, and PEM), so unit tests and
// real-broker tests exercise the same files a Java broker and the Connect
// worker would use.
//
// Nothing here is for production: keys are generated fresh, passwords are
// random test strings, and files are written unprotected into a test
// directory.
package securitytest

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Identity is one key pair with its certificate and every store form of it.
// All paths are absolute.
type Identity struct {
	// Name is the file name stem ("server", "client", ...).
	Name string
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertChainPEM is a file holding the certificate followed by the CA certificate.
	CertChainPEM string
	// KeyPEM holds the unencrypted PKCS#8 key ("-----BEGIN PRIVATE KEY-----").
	KeyPEM string
	// EncryptedKeyPEM holds the key as encrypted PKCS#8 (PBES2, AES-256)
	// under PKI.KeyPassword.
	EncryptedKeyPEM string
	// PEMStore holds EncryptedKeyPEM followed by CertChainPEM: a file for
	// ssl.keystore.type=PEM with ssl.keystore.location and ssl.key.password.
	PEMStore string
	// JKS is a JKS key store (made by keytool), store password
	// PKI.StorePassword, key entry (alias Name) password PKI.KeyPassword.
	JKS string
	// PKCS12 is a PKCS12 key store (made by keytool), store and key
	// password PKI.StorePassword: keytool does not support a separate key
	// password for PKCS12, so ssl.key.password must be unset or equal.
	PKCS12 string
}

// PKI is a complete set of test TLS material, written to Dir.
type PKI struct {
	Dir string
	// StorePassword protects every JKS and PKCS12 store.
	StorePassword string
	// KeyPassword protects the JKS key entries and the encrypted PEM keys.
	// It equals StorePassword unless WithKeyPassword was given.
	KeyPassword string

	CA    *x509.Certificate
	CAKey crypto.Signer
	// CAPEM is the CA certificate in PEM (ssl.truststore.type=PEM).
	CAPEM string
	// TrustJKS and TrustPKCS12 hold the CA as a trusted certificate
	// entry (alias "ca"), store password StorePassword.
	TrustJKS, TrustPKCS12 string

	// Server is a broker identity for 127.0.0.1, ::1, localhost and any
	// WithHosts names, usable for TLS server and client authentication
	// (inter-broker TLS).
	Server Identity
	// WrongName is a broker identity signed by the same CA whose only
	// name is "wrong-name.invalid", for host name verification tests.
	WrongName Identity
	// Client is a client identity (CN=connect-init-client) for mutual TLS.
	Client Identity

	// OtherCA is an unrelated CA that signed nothing here: trusting only
	// it is "the wrong truststore".
	OtherCA                         *x509.Certificate
	OtherCAPEM                      string
	OtherTrustJKS, OtherTrustPKCS12 string
}

// Option changes how NewPKI builds the material.
type Option func(*settings)

type settings struct {
	storePassword, keyPassword string
	hosts                      []string
	keytool                    string
	validity                   time.Duration
}

// WithStorePassword sets PKI.StorePassword (default: a random string
// starting with "store-").
func WithStorePassword(p string) Option { return func(s *settings) { s.storePassword = p } }

// WithKeyPassword sets PKI.KeyPassword (default: the store password).
func WithKeyPassword(p string) Option { return func(s *settings) { s.keyPassword = p } }

// WithHosts adds DNS names or IP addresses to the Server certificate, e.g.
// a container's host name.
func WithHosts(h ...string) Option { return func(s *settings) { s.hosts = append(s.hosts, h...) } }

// WithKeytool sets the keytool binary (default: Keytool()).
func WithKeytool(path string) Option { return func(s *settings) { s.keytool = path } }

// Keytool finds the JDK's keytool: $JAVA_HOME/bin/keytool, else on PATH.
// Tests should skip, not fail, when it is missing.
func Keytool() (string, error) {
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		p := filepath.Join(jh, "bin", "keytool")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return exec.LookPath("keytool")
}

// NewPKI creates the CA, identities and stores in dir (which must exist).
// It runs keytool about a dozen times, so share one PKI per test package.
func NewPKI(dir string, opts ...Option) (*PKI, error) {
	s := settings{validity: 365 * 24 * time.Hour}
	for _, o := range opts {
		o(&s)
	}
	if s.storePassword == "" {
		s.storePassword = "store-" + randomHex(8)
	}
	if s.keyPassword == "" {
		s.keyPassword = s.storePassword
	}
	if s.keytool == "" {
		kt, err := Keytool()
		if err != nil {
			return nil, fmt.Errorf("securitytest: keytool not found (install a JDK or set JAVA_HOME): %w", err)
		}
		s.keytool = kt
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir, StorePassword: s.storePassword, KeyPassword: s.keyPassword}
	g := &gen{pki: p, s: s}

	p.CA, p.CAKey, err = g.ca("connect-init test CA")
	if err != nil {
		return nil, err
	}
	if p.CAPEM, err = g.writePEM("ca.pem", certPEM(p.CA)); err != nil {
		return nil, err
	}
	if p.OtherCA, _, err = g.ca("connect-init unrelated CA"); err != nil {
		return nil, err
	}
	if p.OtherCAPEM, err = g.writePEM("other-ca.pem", certPEM(p.OtherCA)); err != nil {
		return nil, err
	}

	serverDNS, serverIPs := []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	for _, h := range s.hosts {
		if ip := net.ParseIP(h); ip != nil {
			serverIPs = append(serverIPs, ip)
		} else {
			serverDNS = append(serverDNS, h)
		}
	}
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	// keytool is a JVM start each time: run the independent parts at once.
	jobs := []func() error{
		func() (err error) { p.TrustJKS, p.TrustPKCS12, err = g.truststores("truststore", p.CAPEM); return },
		func() (err error) {
			p.OtherTrustJKS, p.OtherTrustPKCS12, err = g.truststores("other-truststore", p.OtherCAPEM)
			return
		},
		func() error { return g.identity(&p.Server, "server", "localhost", serverDNS, serverIPs, both) },
		func() error {
			return g.identity(&p.WrongName, "wrong-name", "wrong-name.invalid", []string{"wrong-name.invalid"}, nil, both)
		},
		func() error {
			return g.identity(&p.Client, "client", "connect-init-client", nil, nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
		},
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = j() }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// BrokerSSLProps returns the broker-side ssl.* settings for a listener
// using the Server identity in a store of storeType ("JKS", "PKCS12" or
// "PEM"), trusting the CA, with ssl.client.auth=required when
// requireClientAuth. Prefix them with listener.name.<name>. as needed.
func (p *PKI) BrokerSSLProps(storeType string, requireClientAuth bool) map[string]string {
	m := p.storeProps(p.Server, storeType)
	for k, v := range p.TrustProps(storeType) {
		m[k] = v
	}
	if requireClientAuth {
		m["ssl.client.auth"] = "required"
	}
	return m
}

// ClientSSLProps returns client ssl.* settings that trust the CA through
// a store of storeType and, when mutual, present the Client identity.
func (p *PKI) ClientSSLProps(storeType string, mutual bool) map[string]string {
	m := p.TrustProps(storeType)
	if mutual {
		for k, v := range p.storeProps(p.Client, storeType) {
			m[k] = v
		}
	}
	return m
}

// TrustProps returns ssl.truststore.* settings that trust the CA.
func (p *PKI) TrustProps(storeType string) map[string]string {
	switch storeType {
	case "PEM":
		return map[string]string{"ssl.truststore.type": "PEM", "ssl.truststore.location": p.CAPEM}
	case "PKCS12":
		return map[string]string{"ssl.truststore.type": "PKCS12", "ssl.truststore.location": p.TrustPKCS12, "ssl.truststore.password": p.StorePassword}
	default:
		return map[string]string{"ssl.truststore.type": "JKS", "ssl.truststore.location": p.TrustJKS, "ssl.truststore.password": p.StorePassword}
	}
}

func (p *PKI) storeProps(id Identity, storeType string) map[string]string {
	switch storeType {
	case "PEM":
		return map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": id.PEMStore, "ssl.key.password": p.KeyPassword}
	case "PKCS12":
		return map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": id.PKCS12, "ssl.keystore.password": p.StorePassword}
	default:
		return map[string]string{"ssl.keystore.type": "JKS", "ssl.keystore.location": id.JKS, "ssl.keystore.password": p.StorePassword, "ssl.key.password": p.KeyPassword}
	}
}

type gen struct {
	pki *PKI
	s   settings
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err)
	}
	return n
}

func (g *gen) ca(cn string) (*x509.Certificate, crypto.Signer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"connect-init tests"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(g.s.validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	c, err := x509.ParseCertificate(der)
	return c, key, err
}

// identity makes one named identity signed by the CA and writes it in
// every form the tests hand to Kafka and connect-init: PEM files and
// PKCS12 and JKS keystores.
func (g *gen) identity(id *Identity, name, cn string, dns []string, ips []net.IP, eku []x509.ExtKeyUsage) error {
	if err := g.issue(id, name, cn, dns, ips, eku); err != nil {
		return err
	}
	if err := g.writePEMs(id); err != nil {
		return err
	}
	return g.writeKeyStores(id)
}

// issue makes the identity's key and a certificate for it signed by the
// test CA.
func (g *gen) issue(id *Identity, name, cn string, dns []string, ips []net.IP, eku []x509.ExtKeyUsage) error {
	p := g.pki
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"connect-init tests"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(g.s.validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  eku,
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, key.Public(), p.CAKey)
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	id.Name, id.Cert, id.Key = name, cert, key
	return nil
}

// writePEMs writes the identity in every PEM shape Kafka reads: the
// chain, the key plain and encrypted, and the single-file PEM keystore.
func (g *gen) writePEMs(id *Identity) error {
	p := g.pki
	chain := append(certPEM(id.Cert), certPEM(p.CA)...)
	var err error
	if id.CertChainPEM, err = g.writePEM(id.Name+".chain.pem", chain); err != nil {
		return err
	}
	plain, err := x509.MarshalPKCS8PrivateKey(id.Key)
	if err != nil {
		return err
	}
	if id.KeyPEM, err = g.writePEM(id.Name+".key.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: plain})); err != nil {
		return err
	}
	enc, err := pkcs8.MarshalPrivateKey(id.Key, []byte(p.KeyPassword), nil)
	if err != nil {
		return err
	}
	encPEM := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: enc})
	if id.EncryptedKeyPEM, err = g.writePEM(id.Name+".key.enc.pem", encPEM); err != nil {
		return err
	}
	id.PEMStore, err = g.writePEM(id.Name+".keystore.pem", append(encPEM, chain...))
	return err
}

// writeKeyStores writes the identity's PKCS12 and JKS keystores. Go
// writes a PKCS12 file; keytool re-writes it in the JDK's own formats, so
// the stores are exactly what a Java user would have.
func (g *gen) writeKeyStores(id *Identity) error {
	p, name := g.pki, id.Name
	tmp, err := pkcs12.Modern2023.Encode(id.Key, id.Cert, []*x509.Certificate{p.CA}, p.StorePassword)
	if err != nil {
		return err
	}
	src := filepath.Join(p.Dir, name+".go.p12")
	if err := os.WriteFile(src, tmp, 0o600); err != nil {
		return err
	}
	defer os.Remove(src)
	// The JDK names an entry without friendlyName after its position.
	srcAlias := "1"
	id.PKCS12 = filepath.Join(p.Dir, name+".keystore.p12")
	id.JKS = filepath.Join(p.Dir, name+".keystore.jks")
	for _, f := range []string{id.PKCS12, id.JKS} {
		_ = os.Remove(f)
	}
	if err := g.keytool("-importkeystore", "-noprompt",
		"-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", p.StorePassword, "-srcalias", srcAlias,
		"-destkeystore", id.PKCS12, "-deststoretype", "PKCS12", "-deststorepass", p.StorePassword, "-destalias", name); err != nil {
		// Not the alias we expected: ask keytool.
		if srcAlias, err = g.firstAlias(src); err != nil {
			return err
		}
		if err := g.keytool("-importkeystore", "-noprompt",
			"-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", p.StorePassword, "-srcalias", srcAlias,
			"-destkeystore", id.PKCS12, "-deststoretype", "PKCS12", "-deststorepass", p.StorePassword, "-destalias", name); err != nil {
			return err
		}
	}
	return g.keytool("-importkeystore", "-noprompt",
		"-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", p.StorePassword, "-srcalias", srcAlias,
		"-destkeystore", id.JKS, "-deststoretype", "JKS", "-deststorepass", p.StorePassword,
		"-destalias", name, "-destkeypass", p.KeyPassword)
}

// firstAlias asks keytool which alias it gives the key entry of a
// Go-written PKCS12 file (go-pkcs12 writes no friendlyName).
func (g *gen) firstAlias(path string) (string, error) {
	out, err := g.keytoolOutput("-list", "-keystore", path, "-storetype", "PKCS12", "-storepass", g.pki.StorePassword)
	if err != nil {
		return "", err
	}
	for _, line := range bytes.Split(out, []byte("\n")) {
		if i := bytes.Index(line, []byte(", PrivateKeyEntry")); i >= 0 {
			f := bytes.SplitN(line, []byte(","), 2)
			return string(bytes.TrimSpace(f[0])), nil
		}
	}
	return "", errors.New("securitytest: keytool lists no private key entry in " + path)
}

func (g *gen) truststores(stem, caPEM string) (jks, p12 string, err error) {
	jks = filepath.Join(g.pki.Dir, stem+".jks")
	p12 = filepath.Join(g.pki.Dir, stem+".p12")
	for _, pair := range [][2]string{{jks, "JKS"}, {p12, "PKCS12"}} {
		_ = os.Remove(pair[0])
		if err := g.keytool("-importcert", "-noprompt", "-alias", "ca", "-file", caPEM,
			"-keystore", pair[0], "-storetype", pair[1], "-storepass", g.pki.StorePassword); err != nil {
			return "", "", err
		}
	}
	return jks, p12, nil
}

func (g *gen) keytool(args ...string) error {
	_, err := g.keytoolOutput(args...)
	return err
}

func (g *gen) keytoolOutput(args ...string) ([]byte, error) {
	cmd := exec.Command(g.s.keytool, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "JAVA_TOOL_OPTIONS=-Duser.language=en")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("securitytest: keytool %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

func (g *gen) writePEM(name string, data []byte) (string, error) {
	path := filepath.Join(g.pki.Dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// ClientTLS is a Go client configuration that trusts the CA and, when
// mutual, presents the Client identity: for a test that talks to a server
// of the PKI (a worker's https REST listener) directly.
func (p *PKI) ClientTLS(mutual bool) (*tls.Config, error) {
	roots := x509.NewCertPool()
	roots.AddCert(p.CA)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if mutual {
		cert, err := tls.LoadX509KeyPair(p.Client.CertChainPEM, p.Client.KeyPEM)
		if err != nil {
			return nil, fmt.Errorf("securitytest: client key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
