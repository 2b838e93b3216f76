package startup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// providerChildEnv is what StartupLockConfigProvider gives `lock acquire`:
// the worker's environment plus each param.env.a.b as CONNECT_INIT_A_B.
func providerChildEnv(workerEnv []string, worker map[string]string) []string {
	env := append([]string(nil), workerEnv...)
	for k, v := range worker {
		if suffix, ok := strings.CutPrefix(k, providerPrefix+"param.env."); ok && suffix != "" {
			env = append(env, workerconfig.OwnEnvPrefix+strings.ToUpper(strings.ReplaceAll(suffix, ".", "_"))+"="+v)
		}
	}
	return env
}

// A plain CONNECT_INIT_REST_PASSWORD (and token) reaches the in-worker
// lock's child, by the hand-over file, never as a worker property or
// variable; the child removes the file once read. Issue 37: the child was
// given the user without the password and exited 2, stopping every worker.
func TestInWorkerSecretsReachTheChildOnly(t *testing.T) {
	const password = "plain-pw-3f9"
	executable := func() (string, error) { return "/usr/local/bin/connect-init", nil }
	for _, mode := range []string{"variables", "properties file"} {
		t.Run(mode, func(t *testing.T) {
			env := append(append([]string(nil), workerEnv...), "CONNECT_INIT_LOCK_JAR="+testJar(t),
				"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD="+password)
			cmd := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"run"}, Env: append([]string(nil), workerEnv...)}
			if mode == "properties file" {
				file := filepath.Join(t.TempDir(), "worker.properties")
				if err := os.WriteFile(file, []byte("plugin.path=/x\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				env = append(env, "CONNECT_INIT_WORKER_CONFIG="+file)
				cmd = &entrypoint.Command{Path: "/opt/kafka/bin/connect-distributed.sh", Argv: []string{"connect-distributed.sh", file}, Env: append([]string(nil), workerEnv...)}
			}
			cfg := loadTestConfig(t, env)
			if inWorker, err := wireInWorkerLockAs(cfg, cmd, executable, discardLog()); err != nil || !inWorker {
				t.Fatalf("wireInWorkerLock = %v, %v", inWorker, err)
			}
			worker := map[string]string(workerconfig.FromEnviron(cmd.Env))
			if mode == "properties file" {
				b, err := os.ReadFile(cmd.Argv[1])
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), password) {
					t.Errorf("the worker's properties file holds the password:\n%s", b)
				}
				props, err := workerconfig.ReadFile(cmd.Argv[1])
				if err != nil {
					t.Fatal(err)
				}
				worker = props
			}
			for _, kv := range cmd.Env {
				if strings.Contains(kv, password) {
					t.Errorf("the worker's environment holds the password in %s", strings.SplitN(kv, "=", 2)[0])
				}
			}
			handover := worker[providerPrefix+"param.env."+childSecretsParam]
			if handover == "" {
				t.Fatalf("no hand-over file among the worker's properties: %v", worker)
			}
			if st, err := os.Stat(handover); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("hand-over file: %v, %v; want mode 0600", st, err)
			}
			if st, err := os.Stat(filepath.Dir(handover)); err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("hand-over directory: %v, %v; want mode 0700", st, err)
			}

			child, err := LockChildEnv(providerChildEnv(cmd.Env, worker))
			if err != nil {
				t.Fatal(err)
			}
			s, err := settings.LoadSettings(child)
			if err != nil {
				t.Fatalf("the child's settings: %v", err)
			}
			if a := s.RESTAuth(); a.Username != "admin" || a.Password != password {
				t.Errorf("the child's credentials: user %q, password given %v", a.Username, a.Password != "")
			}
			if _, err := os.Stat(handover); !os.IsNotExist(err) {
				t.Errorf("the child left the hand-over file: %v", err)
			}
			if _, err := os.Stat(filepath.Dir(handover)); !os.IsNotExist(err) {
				t.Errorf("the child left the hand-over directory: %v", err)
			}
			// A second read (a child started again) is an error naming the
			// variable, never a child without the password.
			if _, err := LockChildEnv(providerChildEnv(cmd.Env, worker)); err == nil || !strings.Contains(err.Error(), childSecretsEnv) {
				t.Errorf("hand-over file gone: err %v, want one naming %s", err, childSecretsEnv)
			}
		})
	}
}

// Without a secret, nothing is handed over by file.
func TestInWorkerNoSecretsNoFile(t *testing.T) {
	executable := func() (string, error) { return "/usr/local/bin/connect-init", nil }
	pw := filepath.Join(t.TempDir(), "p")
	if err := os.WriteFile(pw, []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(append([]string(nil), workerEnv...), "CONNECT_INIT_LOCK_JAR="+testJar(t), "CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD_FILE="+pw)
	cmd := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"run"}}
	if _, err := wireInWorkerLockAs(loadTestConfig(t, env), cmd, executable, discardLog()); err != nil {
		t.Fatal(err)
	}
	seen := workerconfig.FromEnviron(cmd.Env)
	if v, ok := seen[providerPrefix+"param.env."+childSecretsParam]; ok {
		t.Errorf("a hand-over file without secrets: %s", v)
	}
	if seen[providerPrefix+"param.env.rest.password.file"] != pw {
		t.Errorf("the password file's path is not passed: %v", seen)
	}
}

// A plain CONNECT_INIT_REST_TOKEN reaches the child the same way.
func TestInWorkerTokenReachesTheChild(t *testing.T) {
	const token = "plain-token-8d1"
	executable := func() (string, error) { return "/usr/local/bin/connect-init", nil }
	env := append(append([]string(nil), workerEnv...), "CONNECT_INIT_LOCK_JAR="+testJar(t), "CONNECT_INIT_REST_TOKEN="+token)
	cmd := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"run"}}
	if _, err := wireInWorkerLockAs(loadTestConfig(t, env), cmd, executable, discardLog()); err != nil {
		t.Fatal(err)
	}
	for _, kv := range cmd.Env {
		if strings.Contains(kv, token) {
			t.Fatalf("the worker's environment holds the token")
		}
	}
	child, err := LockChildEnv(providerChildEnv(cmd.Env, workerconfig.FromEnviron(cmd.Env)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := settings.LoadSettings(child)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := s.RESTAuth().Current(); a.Token != token {
		t.Errorf("the child has no token")
	}
}
