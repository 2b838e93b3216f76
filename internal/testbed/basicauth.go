package testbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BasicAuthExtension returns the jar of Kafka's own
// connect-basic-auth-extension (BasicAuthSecurityRestExtension) for d's
// version, fetched from Maven Central once per version into CacheDir.
func BasicAuthExtension(ctx context.Context, d *Dist) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "basic-auth-"+d.Version)
	jar := filepath.Join(dir, "connect-basic-auth-extension-"+d.Version+".jar")
	if _, err := os.Stat(jar); err == nil {
		return jar, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cache, "basic-auth-fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	mvn := exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", filepath.Join(root, "testbed", "pom.xml"), "dependency:copy",
		"-Dartifact=org.apache.kafka:connect-basic-auth-extension:"+d.Version, "-DoutputDirectory="+tmp)
	if out, err := mvn.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testbed: fetch connect-basic-auth-extension %s: %w\n%s", d.Version, err, tail(string(out), 3000))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, filepath.Base(jar)), jar); err != nil && !exists(jar) {
		return "", fmt.Errorf("testbed: install connect-basic-auth-extension: %w", err)
	}
	return jar, nil
}

// BasicAuth configures a worker for BasicAuthSecurityRestExtension: its
// jar on the classpath, the rest.extension.classes property, and a JAAS
// file whose KafkaConnect entry reads users (name=password) from a
// credentials file in the worker's directory. Every REST request then
// needs one of users' credentials, /health included; WaitHealthy sends
// the first user's.
func (s *WorkerSpec) BasicAuth(jar string, users [][2]string) error {
	creds := filepath.Join(s.Dir, "rest-credentials.properties")
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "%s=%s\n", u[0], u[1])
	}
	if err := os.WriteFile(creds, []byte(b.String()), 0o600); err != nil {
		return err
	}
	jaas := filepath.Join(s.Dir, "rest-jaas.conf")
	entry := "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\"" + creds + "\";\n};\n"
	if err := os.WriteFile(jaas, []byte(entry), 0o600); err != nil {
		return err
	}
	s.Props["rest.extension.classes"] = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
	if err := writeProperties(s.PropsFile, s.Props); err != nil {
		return err
	}
	s.AddClasspath(jar)
	s.Argv = append([]string{s.Argv[0], "-Djava.security.auth.login.config=" + jaas}, s.Argv[1:]...)
	if len(users) > 0 {
		s.HealthAuth = &users[0]
	}
	return nil
}
