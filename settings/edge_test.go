package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretMarker is in every secret the rows below use; no error may hold it.
const secretMarker = "S3CRET-MARKER"

// TestEdgeCasesNameTheVariable: the settings' last edge cases (issue 21)
// each fail the settings gate with one line that names the variable the
// user set and what is wrong, and never shows any part of a secret.
func TestEdgeCasesNameTheVariable(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("other=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileProvider := []string{"CONNECT_CONFIG_PROVIDERS=file", "CONNECT_CONFIG_PROVIDERS_FILE_CLASS=org.apache.kafka.common.config.provider.FileConfigProvider"}
	envProvider := []string{"CONNECT_CONFIG_PROVIDERS=env", "CONNECT_CONFIG_PROVIDERS_ENV_CLASS=org.apache.kafka.common.config.provider.EnvVarConfigProvider"}
	ub := []string{"CONNECT_INIT_IMAGE=confluent-ub", "CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_REST_ADVERTISED_HOST_NAME=worker-1"}
	with := func(groups ...[]string) []string {
		env := baseWorkerEnv()
		for _, g := range groups {
			env = append(env, g...)
		}
		return env
	}
	ref := "${file:/" + secretMarker + "/path:" + secretMarker + "-key}"
	cases := []struct {
		name  string
		env   []string
		named string // the variable the error must name
		want  string // what it must say is wrong
	}{
		{"expected brokers zero", with([]string{"CONNECT_INIT_EXPECTED_BROKERS=0"}), "CONNECT_INIT_EXPECTED_BROKERS", "must be at least 1 (got 0)"},
		{"expected brokers zero padded", with([]string{"CONNECT_INIT_EXPECTED_BROKERS= 00 "}), "CONNECT_INIT_EXPECTED_BROKERS", "or leave it unset to derive it"},
		{"expected brokers negative", with([]string{"CONNECT_INIT_EXPECTED_BROKERS=-2"}), "CONNECT_INIT_EXPECTED_BROKERS", "must be at least 1 (got -2)"},
		{"worker sync timeout not a number", with([]string{"CONNECT_WORKER_SYNC_TIMEOUT_MS=3s"}), "CONNECT_WORKER_SYNC_TIMEOUT_MS", `is not a whole number of milliseconds (got "3s")`},

		{"bootstrap bracket not closed", with([]string{"CONNECT_BOOTSTRAP_SERVERS=[::1"}), "CONNECT_BOOTSTRAP_SERVERS", `"[::1" that is not host:port`},
		{"bootstrap bracket not closed, second entry", with([]string{"CONNECT_BOOTSTRAP_SERVERS=kafka-1:9092,[::1:9092"}), "CONNECT_BOOTSTRAP_SERVERS", "brackets do not enclose the host"},
		{"bootstrap bracket closed late", with([]string{"CONNECT_BOOTSTRAP_SERVERS=[::1:9092]"}), "CONNECT_BOOTSTRAP_SERVERS", "not host:port"},
		{"bootstrap bracket without port", with([]string{"CONNECT_BOOTSTRAP_SERVERS=[::1]"}), "CONNECT_BOOTSTRAP_SERVERS", "not host:port"},
		{"bootstrap bracket and port run together", with([]string{"CONNECT_BOOTSTRAP_SERVERS=[::1]9092"}), "CONNECT_BOOTSTRAP_SERVERS", "not host:port"},
		{"bootstrap closing bracket only", with([]string{"CONNECT_BOOTSTRAP_SERVERS=::1]:9092"}), "CONNECT_BOOTSTRAP_SERVERS", "brackets do not enclose the host"},
		{"bootstrap brackets twice", with([]string{"CONNECT_BOOTSTRAP_SERVERS=[[::1]]:9092"}), "CONNECT_BOOTSTRAP_SERVERS", "brackets do not enclose the host"},
		{"bootstrap empty brackets", with([]string{"CONNECT_BOOTSTRAP_SERVERS=SSL://[]:9092"}), "CONNECT_BOOTSTRAP_SERVERS", "brackets hold no address"},

		{"password with an undeclared reference", with([]string{"CONNECT_SSL_KEY_PASSWORD=" + secretMarker + ref}), "CONNECT_SSL_KEY_PASSWORD", "does not declare"},
		{"password with a reference to a missing file", with(fileProvider, []string{"CONNECT_SSL_KEY_PASSWORD=" + secretMarker + ref}), "CONNECT_SSL_KEY_PASSWORD", "cannot be read: no such file or directory"},
		{"password with a reference to a missing key", with(fileProvider, []string{"CONNECT_SSL_TRUSTSTORE_PASSWORD=${file:" + secrets + ":" + secretMarker + "}"}), "CONNECT_SSL_TRUSTSTORE_PASSWORD", "has no such key"},
		{"jaas with a reference to an unset variable", with(envProvider, []string{"CONNECT_SASL_JAAS_CONFIG=x required password=\"${env:" + secretMarker + "}\";"}), "CONNECT_SASL_JAAS_CONFIG", "is not set in the worker's environment"},
		{"admin password with a reference", with(fileProvider, []string{"CONNECT_ADMIN_SSL_KEYSTORE_PASSWORD=" + ref}), "CONNECT_ADMIN_SSL_KEYSTORE_PASSWORD", "not shown"},

		{"ub empty bootstrap servers", with(ub, []string{"CONNECT_BOOTSTRAP_SERVERS="}), "CONNECT_BOOTSTRAP_SERVERS", "is empty: the image's ub accepts an empty value, but the worker cannot start"},
		{"ub empty group id", with(ub, []string{"CONNECT_GROUP_ID="}), "CONNECT_GROUP_ID", "is empty: the image's ub accepts an empty value, but the worker cannot start"},
		{"ub blank group id", with(ub, []string{"CONNECT_GROUP_ID=  "}), "CONNECT_GROUP_ID", "is empty: the image's ub accepts"},
		{"ub empty config topic", with(ub, []string{"CONNECT_CONFIG_STORAGE_TOPIC="}), "CONNECT_CONFIG_STORAGE_TOPIC", "is empty: the image's ub accepts"},
		{"ub empty offset topic", with(ub, []string{"CONNECT_OFFSET_STORAGE_TOPIC="}), "CONNECT_OFFSET_STORAGE_TOPIC", "is empty: the image's ub accepts"},
		{"ub empty status topic", with(ub, []string{"CONNECT_STATUS_STORAGE_TOPIC="}), "CONNECT_STATUS_STORAGE_TOPIC", "is empty: the image's ub accepts"},
		{"dub empty group id", with(ub, []string{"CONNECT_INIT_IMAGE=confluent-dub", "CONNECT_GROUP_ID="}), "CONNECT_GROUP_ID", "`dub ensure` requires a value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := append(c.env, "CONNECT_SSL_KEY_PASSWORD_OTHER="+secretMarker) // a secret that must stay out of every error
			s, err := LoadSettings(env)
			if err == nil {
				_, err = LoadConfig(env, s)
			}
			if err == nil || !AsConfigError(err) {
				t.Fatalf("want a configuration error (exit 2), got %v", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.named+" ") || !strings.Contains(msg, c.want) {
				t.Errorf("want an error that starts with %s and says %q, got:\n%s", c.named, c.want, msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("the error is more than one line:\n%s", msg)
			}
			if strings.Contains(msg, secretMarker) || strings.Contains(msg, "/path") {
				t.Errorf("a secret (or part of one) is in the error:\n%s", msg)
			}
		})
	}
}

// TestEdgeCasesThatAreFine: the values next to the edge cases that are
// right stay accepted: an empty CONNECT_INIT_EXPECTED_BROKERS is unset,
// and IPv6 brokers in brackets (with a zone, a protocol) are host:port.
func TestEdgeCasesThatAreFine(t *testing.T) {
	for _, extra := range []string{
		"CONNECT_INIT_EXPECTED_BROKERS=",
		"CONNECT_INIT_EXPECTED_BROKERS=1",
		"CONNECT_BOOTSTRAP_SERVERS=[::1]:9092",
		"CONNECT_BOOTSTRAP_SERVERS=SASL_SSL://[fe80::1%eth0]:9093,kafka-2:9092",
		"CONNECT_BOOTSTRAP_SERVERS=::1:9092", // Kafka takes the last ':' as the port's
	} {
		if _, err := loadConfig(t, append(baseWorkerEnv(), extra)); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
	c, err := loadConfig(t, append(baseWorkerEnv(), "CONNECT_INIT_EXPECTED_BROKERS="))
	if err != nil || c.ExpectedBrokers != 3 {
		t.Errorf("an empty CONNECT_INIT_EXPECTED_BROKERS must derive the number (3), got %d, %v", c.ExpectedBrokers, err)
	}
}

// TestExpectedBrokersFlagZero: --expected-brokers=0 is refused by name, as
// the variable is; without the flag a zero means "derive it".
func TestExpectedBrokersFlagZero(t *testing.T) {
	s, err := LoadSettings(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("unset: %v", err)
	}
	s.Flags = map[string]string{"CONNECT_INIT_EXPECTED_BROKERS": "--expected-brokers"}
	err = s.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "--expected-brokers must be at least 1 (got 0)") {
		t.Errorf("want --expected-brokers named, got %v", err)
	}
}

// TestNoSecretInErrors sets sensitive properties to values that break in
// many ways (references, bad escapes, broken JAAS, PEM garbage), with the
// security settings that make connect-init read them, and checks that no
// error shows any part of the value.
func TestNoSecretInErrors(t *testing.T) {
	props := []string{"SSL_KEY_PASSWORD", "SSL_KEYSTORE_PASSWORD", "SSL_TRUSTSTORE_PASSWORD", "SSL_KEYSTORE_KEY",
		"SSL_TRUSTSTORE_CERTIFICATES", "SASL_JAAS_CONFIG", "ADMIN_SASL_JAAS_CONFIG", "SASL_OAUTHBEARER_CLIENT_CREDENTIALS_CLIENT_SECRET",
		"LISTENERS_HTTPS_SSL_KEYSTORE_PASSWORD"}
	m := secretMarker
	values := []string{m, m + "${file:/" + m + ":" + m + "}", "${" + m + ":" + m + "}", `\u00zz` + m, m + "\n" + m + "=" + m,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="` + m + `" password="` + m,
		m + ` required ` + m + `="` + m + `";`, "-----BEGIN PRIVATE KEY-----\n" + m + "\n-----END PRIVATE KEY-----"}
	contexts := [][]string{nil,
		{"CONNECT_SECURITY_PROTOCOL=SSL", "CONNECT_SSL_KEYSTORE_LOCATION=/etc/hosts", "CONNECT_SSL_TRUSTSTORE_LOCATION=/etc/hosts"},
		{"CONNECT_SECURITY_PROTOCOL=SSL", "CONNECT_SSL_KEYSTORE_TYPE=PEM", "CONNECT_SSL_TRUSTSTORE_TYPE=PEM"},
		{"CONNECT_SECURITY_PROTOCOL=SASL_SSL", "CONNECT_SASL_MECHANISM=PLAIN"},
		{"CONNECT_SECURITY_PROTOCOL=SASL_PLAINTEXT", "CONNECT_SASL_MECHANISM=OAUTHBEARER"},
		{"CONNECT_CONFIG_PROVIDERS=file", "CONNECT_CONFIG_PROVIDERS_FILE_CLASS=org.apache.kafka.common.config.provider.FileConfigProvider"},
	}
	for _, p := range props {
		for _, v := range values {
			for _, ctx := range contexts {
				env := append(append(baseWorkerEnv(), ctx...), "CONNECT_"+p+"="+v)
				s, err := LoadSettings(env)
				if err == nil {
					_, err = LoadConfig(env, s)
				}
				if err != nil && strings.Contains(err.Error(), m) {
					t.Errorf("CONNECT_%s=%q with %v: a secret is in the error:\n%v", p, v, ctx, err)
				}
			}
		}
	}
}
