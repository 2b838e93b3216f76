package startup

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// workerEnv is a minimal worker configuration in CONNECT_* variables.
var workerEnv = []string{
	"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1",
	"CONNECT_GROUP_ID=g",
	"CONNECT_CONFIG_STORAGE_TOPIC=c",
	"CONNECT_OFFSET_STORAGE_TOPIC=o",
	"CONNECT_STATUS_STORAGE_TOPIC=s",
	"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
	"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1",
}

func loadTestConfig(t *testing.T, env []string) *settings.Config {
	t.Helper()
	s, err := settings.LoadSettings(env)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := settings.LoadConfig(env, s)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func testJar(t *testing.T) string {
	t.Helper()
	jar := filepath.Join(t.TempDir(), providerJarName)
	if err := os.WriteFile(jar, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	return jar
}

// wireInWorkerLock is run's two steps: the plan before the gates, the
// wiring after them.
func wireInWorkerLock(cfg *settings.Config, cmd *entrypoint.Command, log *slog.Logger) (bool, error) {
	return wireInWorkerLockAs(cfg, cmd, os.Executable, log)
}

// wireInWorkerLockAs is wireInWorkerLock with connect-init installed at
// the path executable returns.
func wireInWorkerLockAs(cfg *settings.Config, cmd *entrypoint.Command, executable func() (string, error), log *slog.Logger) (bool, error) {
	plan, err := planStartupLock(cfg, cmd, executable, log)
	if err != nil || plan == nil {
		return false, err
	}
	return true, plan.apply(cmd)
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestLockModeRejectsBadSettings(t *testing.T) {
	cases := []struct {
		s       settings.Settings
		setting string
	}{
		{settings.Settings{LockMode: "inside"}, "CONNECT_INIT_LOCK_MODE"},
		{settings.Settings{LockJar: "/nonexistent/connect-init-provider.jar"}, "CONNECT_INIT_LOCK_JAR"},
		{settings.Settings{LockJar: t.TempDir()}, "CONNECT_INIT_LOCK_JAR"},
	}
	for _, c := range cases {
		_, _, err := lockMode(c.s)
		var ce *settings.ConfigError
		if !errors.As(err, &ce) || ce.Setting != c.setting {
			t.Errorf("lockMode(%+v) = %v, want a ConfigError naming %s", c.s, err, c.setting)
		}
	}
	mode, jar, err := lockMode(settings.Settings{})
	if err != nil || mode != lockModeAuto {
		t.Errorf("lockMode(zero) = %q, %q, %v; want auto", mode, jar, err)
	}
}

func TestWireInWorkerLockFallsBackOrFails(t *testing.T) {
	cmd := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"/etc/confluent/docker/run"}}
	// No jar anywhere (the default paths do not exist on a build machine).
	for _, p := range defaultProviderJars {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s exists on this machine; the test needs it absent", p)
		}
	}
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	inWorker, err := wireInWorkerLock(loadTestConfig(t, workerEnv), cmd, log)
	if err != nil || inWorker {
		t.Fatalf("auto without a jar: %v, %v; want the pre-exec lock", inWorker, err)
	}
	if !strings.Contains(logBuf.String(), `msg="startup lock mode" mode=exec`) || !strings.Contains(logBuf.String(), "is not installed") {
		t.Errorf("fallback not logged with its reason: %s", logBuf.String())
	}
	_, err = wireInWorkerLock(loadTestConfig(t, append(workerEnv, "CONNECT_INIT_LOCK_MODE=worker")), cmd, log)
	var ce *settings.ConfigError
	if !errors.As(err, &ce) || ce.Setting != "CONNECT_INIT_LOCK_MODE" {
		t.Errorf("worker mode without a jar: %v, want a ConfigError naming CONNECT_INIT_LOCK_MODE", err)
	}
	// A command that reads neither the variables nor the worker file.
	jar := testJar(t)
	other := &entrypoint.Command{Path: "/usr/bin/java", Argv: []string{"java", "-cp", "x", "Main", "/other.properties"}}
	inWorker, err = wireInWorkerLock(loadTestConfig(t, append(workerEnv, "CONNECT_INIT_LOCK_JAR="+jar)), other, log)
	if err != nil || inWorker {
		t.Errorf("unknown launcher: %v, %v; want the pre-exec lock", inWorker, err)
	}
	if len(other.Env) != 0 || other.Argv[4] != "/other.properties" {
		t.Errorf("the fallback changed the command: %+v", other)
	}
	inWorker, err = wireInWorkerLock(loadTestConfig(t, append(workerEnv, "CONNECT_INIT_LOCK_JAR="+jar, "CONNECT_INIT_LOCK_MODE=exec")), cmd, log)
	if err != nil || inWorker || len(cmd.Env) != 0 {
		t.Errorf("exec mode: %v, %v, env %q; want the pre-exec lock and no wiring", inWorker, err, cmd.Env)
	}
}

// The variables wiring, read back through the image's rule (dub), gives
// Connect the provider; the child, after withoutInWorkerWiring, sees the
// worker configuration run saw.
func TestInWorkerWiringThroughVariables(t *testing.T) {
	executable := func() (string, error) { return "/usr/local/bin/connect-init", nil }
	jar := testJar(t)
	env := append(append([]string(nil), workerEnv...),
		"CONNECT_CONFIG_PROVIDERS=file",
		"CONNECT_CONFIG_PROVIDERS_FILE_CLASS="+workerconfig.FileConfigProviderClass,
		"CONNECT_INIT_LOCK_JAR="+jar, "CONNECT_INIT_LOCK_TOPIC=my-lock", "CONNECT_INIT_LOCK_LEASE=90s",
		"CLASSPATH=/opt/extra.jar")
	cfg := loadTestConfig(t, env)
	cmd, err := entrypoint.Resolve([]string{"/bin/true"}, env)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path = "/etc/confluent/docker/run" // as the Confluent image resolves it
	inWorker, err := wireInWorkerLockAs(cfg, cmd, executable, discardLog())
	if err != nil || !inWorker {
		t.Fatalf("wireInWorkerLock = %v, %v; want the in-worker lock", inWorker, err)
	}
	seen := workerconfig.FromEnviron(cmd.Env)
	want := map[string]string{
		"config.providers":                                  "file," + providerName,
		"config.providers.connectinit.class":                providerClass,
		"config.providers.connectinit.param.command":        "/usr/local/bin/connect-init",
		"config.providers.connectinit.param.env.lock.topic": "my-lock",
		"config.providers.connectinit.param.env.lock.lease": "1m30s",
		gateProperty: gateRef,
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("worker sees %s=%q, want %q", k, seen[k], v)
		}
	}
	if cp := settings.Lookup(cmd.Env, "CLASSPATH"); cp != jar+":/opt/extra.jar" {
		t.Errorf("CLASSPATH=%q, want the jar first", cp)
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "CONNECT_INIT_") {
			t.Errorf("the worker's environment has %s", kv)
		}
	}

	// The child: the worker's environment plus the settings the provider
	// passes back as CONNECT_INIT_* variables.
	child := WithoutInWorkerWiring(append(cmd.Env, "CONNECT_INIT_LOCK_TOPIC=my-lock"))
	childCfg := loadTestConfig(t, child)
	for _, k := range cfg.Worker.Keys() {
		if childCfg.Worker[k] != cfg.Worker[k] {
			t.Errorf("child sees %s=%q, run saw %q", k, childCfg.Worker[k], cfg.Worker[k])
		}
	}
	for _, k := range childCfg.Worker.Keys() {
		if _, ok := cfg.Worker[k]; !ok {
			t.Errorf("child sees %s, which run did not", k)
		}
	}
}

// The file wiring writes a copy (the user's file untouched) that Java's
// properties reader reads as the original plus the provider.
func TestInWorkerWiringThroughPropertiesFile(t *testing.T) {
	executable := func() (string, error) { return `/opt/connect init\bin/connect-init`, nil }
	dir := t.TempDir()
	file := filepath.Join(dir, "worker.properties")
	orig := "bootstrap.servers=127.0.0.1:1\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\nconfig.providers=env\nconfig.providers.env.class=" +
		workerconfig.EnvVarConfigProviderClass + "\nsasl.jaas.config=x\\\n  continued"
	if err := os.WriteFile(file, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	jar := testJar(t)
	env := []string{"CONNECT_INIT_WORKER_CONFIG=" + file, "CONNECT_INIT_LOCK_JAR=" + jar, "CONNECT_INIT_LOCK_MODE=worker"}
	cfg := loadTestConfig(t, env)
	cmd := &entrypoint.Command{Path: "/opt/kafka/bin/connect-distributed.sh", Argv: []string{"connect-distributed.sh", file}}
	inWorker, err := wireInWorkerLockAs(cfg, cmd, executable, discardLog())
	if err != nil || !inWorker {
		t.Fatalf("wireInWorkerLock = %v, %v", inWorker, err)
	}
	if cmd.Argv[1] == file {
		t.Fatal("the command still names the user's file")
	}
	if b, _ := os.ReadFile(file); string(b) != orig {
		t.Errorf("the user's file was changed:\n%s", b)
	}
	copied, err := workerconfig.ReadFile(cmd.Argv[1])
	if err != nil {
		t.Fatal(err)
	}
	user, err := workerconfig.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range user {
		if k != "config.providers" && copied[k] != v {
			t.Errorf("copy has %s=%q, want %q", k, copied[k], v)
		}
	}
	if copied["config.providers"] != "env,"+providerName || copied[gateProperty] != gateRef ||
		copied["config.providers.connectinit.param.command"] != `/opt/connect init\bin/connect-init` ||
		copied["config.providers.connectinit.param.env.worker.config"] != file {
		t.Errorf("copy lacks the wiring: %v", copied)
	}
	if st, err := os.Stat(cmd.Argv[1]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("copy mode: %v %v, want 0600 (it may hold secrets)", st.Mode(), err)
	}
}

func TestWithoutInWorkerWiringKeepsOtherProviders(t *testing.T) {
	got := WithoutInWorkerWiring([]string{"CONNECT_CONFIG_PROVIDERS=a,connectinit", "CONNECT_CONFIG_PROVIDERS_CONNECTINIT_CLASS=x", "CONNECT_CONFIG_PROVIDERS_A_CLASS=y", "OTHER=1"})
	want := []string{"CONNECT_CONFIG_PROVIDERS=a", "CONNECT_CONFIG_PROVIDERS_A_CLASS=y", "OTHER=1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := WithoutInWorkerWiring([]string{"CONNECT_CONFIG_PROVIDERS=connectinit"}); len(got) != 1 || got[0] != "CONNECT_CONFIG_PROVIDERS=" {
		t.Errorf("only our provider: got %q", got)
	}
}
