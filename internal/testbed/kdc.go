package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KDC is a real MIT Kerberos KDC (Debian's krb5-kdc, installed by
// .ci/install-kdc) with its own realm, database and configuration in a
// directory of the test's, listening on a loopback port. It serves the
// brokers' GSSAPI listeners and connect-init's GSSAPI client.
type KDC struct {
	Realm string
	// Conf is the krb5.conf clients and brokers use
	// (-Djava.security.krb5.conf, KRB5_CONFIG).
	Conf string
	// Port is the KDC's TCP and UDP port on 127.0.0.1.
	Port int
	dir  string
	env  []string
	proc *Process
}

// KDC tools, from Debian's krb5-kdc, krb5-admin-server and krb5-user.
const (
	kdb5Util    = "/usr/sbin/kdb5_util"
	kadminLocal = "/usr/sbin/kadmin.local"
	krb5kdc     = "/usr/sbin/krb5kdc"
)

// StartKDC creates realm's database in dir and starts krb5kdc in the
// foreground on a free loopback port. Clients are told to use TCP only
// (udp_preference_limit = 1) and never to resolve names, so nothing leaves
// loopback.
func StartKDC(ctx context.Context, dir, realm string) (*KDC, error) {
	for _, tool := range []string{kdb5Util, kadminLocal, krb5kdc} {
		if _, err := os.Stat(tool); err != nil {
			return nil, fmt.Errorf("testbed: %s is missing; run .ci/install-kdc (apt-get install krb5-kdc krb5-admin-server krb5-user): %w", tool, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	k := &KDC{Realm: realm, Conf: filepath.Join(dir, "krb5.conf"), Port: port, dir: dir}
	krb5Conf := fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_realm = false
 dns_lookup_kdc = false
 rdns = false
 udp_preference_limit = 1
 ticket_lifetime = 24h
 forwardable = true
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96

[realms]
 %[1]s = {
  kdc = 127.0.0.1:%[2]d
 }
`, realm, port)
	kdcConf := fmt.Sprintf(`[kdcdefaults]
 kdc_listen = 127.0.0.1:%[2]d
 kdc_tcp_listen = 127.0.0.1:%[2]d

[realms]
 %[1]s = {
  database_name = %[3]s/principal
  key_stash_file = %[3]s/stash
  acl_file = %[3]s/kadm5.acl
  max_life = 24h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }

[logging]
 kdc = FILE:%[3]s/kdc.log
 admin_server = FILE:%[3]s/kadmin.log
 default = FILE:%[3]s/krb5lib.log
`, realm, port, dir)
	for name, content := range map[string]string{"krb5.conf": krb5Conf, "kdc.conf": kdcConf, "kadm5.acl": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Conf, "KRB5_KDC_PROFILE="+filepath.Join(dir, "kdc.conf"))
	if err := k.run(ctx, kdb5Util, "-r", realm, "create", "-s", "-P", "kdc-master-"+realm); err != nil {
		return nil, err
	}
	p, err := StartProcess("krb5kdc", []string{krb5kdc, "-n", "-r", realm}, k.env, dir, filepath.Join(dir, "krb5kdc.out"))
	if err != nil {
		return nil, err
	}
	k.proc = p
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := WaitForPort(wctx, fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
		p.Kill()
		return nil, fmt.Errorf("testbed: KDC did not listen: %w\n%s", err, tail(p.Log(), 2000))
	}
	return k, nil
}

func (k *KDC) run(ctx context.Context, argv ...string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = k.env
	cmd.Dir = k.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("testbed: %s: %w\n%s", strings.Join(argv[:2], " "), err, out)
	}
	return nil
}

// AddPrincipal creates principal (without the realm) with a random key and
// writes its keys to a new keytab in the KDC's directory, returning the
// keytab's path.
func (k *KDC) AddPrincipal(ctx context.Context, principal string) (string, error) {
	keytab := filepath.Join(k.dir, strings.NewReplacer("/", "_", "@", "_").Replace(principal)+".keytab")
	if err := k.run(ctx, kadminLocal, "-r", k.Realm, "-q", "addprinc -randkey "+principal); err != nil {
		return "", err
	}
	if err := k.run(ctx, kadminLocal, "-r", k.Realm, "-q", "ktadd -k "+keytab+" "+principal); err != nil {
		return "", err
	}
	return keytab, nil
}

// RandomizeKey gives principal a new key in the database without writing it
// anywhere, so that every keytab written before holds a stale key.
func (k *KDC) RandomizeKey(ctx context.Context, principal string) error {
	return k.run(ctx, kadminLocal, "-r", k.Realm, "-q", "cpw -randkey "+principal)
}

// Close stops the KDC.
func (k *KDC) Close() {
	if k.proc != nil {
		k.proc.Kill()
	}
}
