package settings

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRESTTLS: the REST client's CA, certificate and key files make its
// TLS configuration; a file that cannot be used is refused by Validate,
// named as the user gave it.
func TestRESTTLS(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := testPEMs(t, dir)
	if cfg, err := (Settings{}).RESTTLS(nil); cfg != nil || err != nil {
		t.Errorf("no files: %v, %v", cfg, err)
	}
	s := Settings{RESTCAFile: ca, RESTCertFile: cert, RESTKeyFile: key}
	cfg, err := s.RESTTLS(nil)
	if err != nil || cfg.RootCAs == nil || len(cfg.Certificates) != 1 {
		t.Fatalf("RESTTLS = %+v, %v", cfg, err)
	}
	if err := s.checkRESTTLS(); err != nil {
		t.Errorf("checkRESTTLS = %v", err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	for _, c := range []struct {
		s     Settings
		wants []string
	}{
		{Settings{RESTCAFile: filepath.Join(dir, "missing.pem")}, []string{RESTCAFile, "cannot be read"}},
		{Settings{RESTCAFile: notPEM, Flags: map[string]string{RESTCAFile: "--cacert"}}, []string{"--cacert", "no PEM certificate"}},
		{Settings{RESTCertFile: cert}, []string{RESTKeyFile, "is not set"}},
		{Settings{RESTKeyFile: key}, []string{RESTCertFile, "is not set"}},
		{Settings{RESTCertFile: cert, RESTKeyFile: notPEM}, []string{RESTCertFile, "cannot be used"}},
	} {
		_, err := c.s.RESTTLS(nil)
		if err == nil {
			t.Errorf("%+v: no error", c.s)
			continue
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: want %q", err, w)
			}
		}
		if c.s.checkRESTTLS() == nil {
			t.Errorf("%+v: the check passes", c.s)
		}
	}
}

// testPEMs writes a self-signed certificate (which serves as its own CA)
// and its key as PEM files: ca, cert, key.
func testPEMs(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, cert, key
}

// TestNoWorkerSettings: only an environment with no worker setting at all
// (whatever the image flavour, whose own checks refuse such an
// environment) counts as a CI runner's; a partial one, a worker file, or a
// complete one does not. Kubernetes' service links are no worker settings.
func TestNoWorkerSettings(t *testing.T) {
	o := Options{Root: t.TempDir()}
	full := []string{"CONNECT_BOOTSTRAP_SERVERS=k:9092", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c", "CONNECT_OFFSET_STORAGE_TOPIC=o",
		"CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x", "CONNECT_REST_ADVERTISED_HOST_NAME=w"}
	for _, c := range []struct {
		image string
		env   []string
		file  string
		want  bool
	}{
		{"", []string{"PATH=/bin"}, "", true},
		{"confluent-dub", nil, "", true},
		{"confluent-ub", []string{"CONNECT_INIT_TIMEOUT=1m"}, "", true},
		{"confluent-dub", []string{"CONNECT_SERVICE_HOST=10.0.0.1", "CONNECT_PORT=tcp://10.0.0.1:8083"}, "", true},
		{"debezium", nil, "", true},
		{"apache", nil, "", true},
		{"properties", nil, "", true},
		{"", full, "", false},
		{"confluent-dub", []string{"CONNECT_GROUP_ID=g"}, "", false},
		{"", []string{"CONNECT_GROUP_ID="}, "", false},
		{"debezium", []string{"GROUP_ID=g"}, "", false},
		{"debezium", []string{"CONNECT_BOOTSTRAP_SERVERS=k:9092"}, "", false},
		{"apache", nil, "/etc/connect.properties", false},
		{"", nil, "/etc/connect.properties", false},
	} {
		s := Settings{Image: c.image, WorkerConfig: c.file}
		if got := o.NoWorkerSettings(c.env, s); got != c.want {
			t.Errorf("image %q, env %q, file %q: NoWorkerSettings = %v, want %v", c.image, c.env, c.file, got, c.want)
		}
	}
}
