package securitytest

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

func TestNewPKI(t *testing.T) {
	kt, err := Keytool()
	if err != nil {
		t.Fatalf("keytool not found (the JDK is required, as for the test bed): %v", err)
	}
	p, err := NewPKI(t.TempDir(), WithHosts("broker-1", "10.1.2.3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Server.Cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
	for _, h := range []string{"localhost", "broker-1", "10.1.2.3"} {
		if err := p.Server.Cert.VerifyHostname(h); err != nil {
			t.Error(err)
		}
	}
	if err := p.WrongName.Cert.VerifyHostname("127.0.0.1"); err == nil {
		t.Error("wrong-name certificate must not match 127.0.0.1")
	}
	if !p.Server.Cert.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Error("server IP SAN")
	}
	// The JDK reads every store (what a broker would load).
	for _, s := range []struct{ path, want string }{
		{p.Server.JKS, "PrivateKeyEntry"}, {p.Server.PKCS12, "PrivateKeyEntry"},
		{p.Client.JKS, "PrivateKeyEntry"}, {p.WrongName.PKCS12, "PrivateKeyEntry"},
		{p.TrustJKS, "trustedCertEntry"}, {p.TrustPKCS12, "trustedCertEntry"}, {p.OtherTrustPKCS12, "trustedCertEntry"},
	} {
		out, err := exec.Command(kt, "-list", "-keystore", s.path, "-storepass", p.StorePassword).CombinedOutput()
		if err != nil || !strings.Contains(string(out), s.want) {
			t.Errorf("keytool -list %s: %v %s", s.path, err, out)
		}
	}
	if p.KeyPassword != p.StorePassword {
		t.Error("key password defaults to the store password")
	}
	if m := p.BrokerSSLProps("PKCS12", true); m["ssl.client.auth"] != "required" || m["ssl.keystore.location"] != p.Server.PKCS12 {
		t.Errorf("broker props %v", m)
	}
}
