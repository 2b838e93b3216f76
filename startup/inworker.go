package startup

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// The in-worker startup lock.
//
// In exec mode connect-init waits for the worker's turn before it execs
// the JVM, so the whole JVM start (class loading, plugin scan) is
// serialised, while only the group join needs to be. Connect resolves
// ${provider:key} references in the worker configuration while it builds
// its DistributedConfig: in AbstractConnectCli.startConnect after
// `new Plugins(workerProps)` (the plugin scan) and before the herder is
// created and started (DistributedHerder.run: startServices reads the
// internal topics, then tick joins the group). That order is the same in
// Kafka 3.9.1 and 4.3.1 (checked in their connect-runtime bytecode) and in
// the sources since 2.0.
//
// So in "worker" mode run execs the JVM at once, with the worker
// configuration wired to connect-init's ConfigProvider
// (java/connect-init-provider): one property refers to
// ${connectinit:startup.lock}, and the provider's get() runs
// `connect-init lock acquire --watch-stdin`, which is this file's command.
// The child learns connect-init's settings from the provider's parameters
// (config.providers.connectinit.param.env.*, turned back into
// CONNECT_INIT_* variables by the provider), and the worker settings from
// the worker's own environment and properties file, as run did.

// Lock modes, CONNECT_INIT_LOCK_MODE.
const (
	lockModeAuto   = "auto"   // worker when possible, else exec
	lockModeWorker = "worker" // in the worker, or fail
	lockModeExec   = "exec"   // before the exec, connect-init waits before it execs the worker
)

// Names of the in-worker wiring.
const (
	// providerName is the config provider's name in config.providers.
	providerName = "connectinit"
	// providerClass is java/connect-init-provider's class.
	providerClass = "com.github.connectinit.provider.StartupLockConfigProvider"
	// providerPrefix starts every property the wiring adds but
	// config.providers itself.
	providerPrefix = "config.providers." + providerName + "."
	// gateProperty is the property whose value refers to the provider. It
	// lives in the provider's own namespace, which Connect resolves like
	// any other property and which no client or plugin reads.
	gateProperty = providerPrefix + "param.gate"
	gateRef      = "${" + providerName + ":startup.lock}"
	// providerJarName is the jar `make jar` builds.
	providerJarName = "connect-init-provider.jar"
)

// defaultProviderJars are where the Dockerfile installs the jar: a
// directory each image's launcher puts on the worker's classpath
// (cp-kafka-connect, apache/kafka, Debezium), first found wins.
var defaultProviderJars = []string{
	"/usr/share/java/kafka/" + providerJarName,
	"/opt/kafka/libs/" + providerJarName,
	"/kafka/libs/" + providerJarName,
}

// envRenderingLaunchers are worker commands that write the CONNECT_*
// variables into the worker properties file before starting Connect:
// Confluent's run script (dub/ub template) and Debezium's entrypoint.
var envRenderingLaunchers = map[string]bool{
	"/etc/confluent/docker/run": true,
	"/docker-entrypoint.sh":     true,
}

// planStartupLock decides, before any gate, where this worker will wait
// for its turn, and logs the decision with its reason. A nil plan means
// before the exec (run takes the lock itself); otherwise run applies the
// plan to command after the gates and execs at once. A bad
// CONNECT_INIT_LOCK_MODE or CONNECT_INIT_LOCK_JAR, or mode worker when the
// in-worker lock is not possible, is a configuration error.
func planStartupLock(cfg *settings.Config, command *entrypoint.Command, executable func() (string, error), log *slog.Logger) (*inWorkerPlan, error) {
	mode, jar, err := lockMode(cfg.Settings)
	if err != nil {
		return nil, err
	}
	if mode == lockModeExec {
		log.Info("startup lock mode", "mode", lockModeExec, "why", "CONNECT_INIT_LOCK_MODE=exec")
		return nil, nil
	}
	plan, why := planInWorker(cfg, command, jar, executable)
	if plan == nil {
		if mode == lockModeWorker {
			return nil, &settings.ConfigError{Setting: "CONNECT_INIT_LOCK_MODE", Problem: "is worker, but the in-worker lock is not possible: " + why,
				Fix: "install " + providerJarName + " on the worker's classpath and set CONNECT_INIT_LOCK_JAR, or use CONNECT_INIT_LOCK_MODE=auto or exec"}
		}
		log.Info("startup lock mode", "mode", lockModeExec, "why", why)
		return nil, nil
	}
	log.Info("startup lock mode", "mode", lockModeWorker, "jar", jar, "wiring", plan.rule, "why", "the worker waits for its turn in "+providerClass+" after its plugin scan, before it joins the group")
	return plan, nil
}

// lockMode reads CONNECT_INIT_LOCK_MODE and CONNECT_INIT_LOCK_JAR (jar ""
// when none is found).
func lockMode(s settings.Settings) (mode, jar string, err error) {
	mode = strings.ToLower(strings.TrimSpace(s.LockMode))
	switch mode {
	case "":
		mode = lockModeAuto
	case lockModeAuto, lockModeWorker, lockModeExec:
	default:
		return "", "", &settings.ConfigError{Setting: s.Name("CONNECT_INIT_LOCK_MODE"), Problem: fmt.Sprintf("must be auto, worker or exec (got %q)", mode),
			Fix: "leave it unset (auto: in the worker when its jar is installed, else before the exec)"}
	}
	if j := strings.TrimSpace(s.LockJar); j != "" {
		if st, err := os.Stat(j); err != nil || !st.Mode().IsRegular() {
			return "", "", &settings.ConfigError{Setting: s.Name("CONNECT_INIT_LOCK_JAR"), Problem: fmt.Sprintf("names %q, which is not a readable file", j),
				Fix: "point it at " + providerJarName + " on the worker's classpath, or unset it"}
		}
		return mode, j, nil
	}
	for _, j := range defaultProviderJars {
		if st, err := os.Stat(j); err == nil && st.Mode().IsRegular() {
			return mode, j, nil
		}
	}
	return mode, "", nil
}

// inWorkerPlan is the wiring for one worker: the properties to add and
// where Connect will read them.
type inWorkerPlan struct {
	rule  string // "properties file" or "CONNECT_* variables"
	jar   string
	props [][2]string // in order
	// secrets are the child's secret settings (variable, value), written
	// by apply into a hand-over file only the child reads (secretsFile).
	secrets [][2]string
	// file mode: the worker's properties file and its index in argv.
	file    string
	fileArg int
}

// planInWorker returns the wiring, or nil and why it is not possible.
func planInWorker(cfg *settings.Config, command *entrypoint.Command, jar string, executable func() (string, error)) (*inWorkerPlan, string) {
	if jar == "" {
		return nil, "the provider jar " + providerJarName + " is not installed (looked for CONNECT_INIT_LOCK_JAR and " + strings.Join(defaultProviderJars, ", ") + ")"
	}
	self, err := executable()
	if err != nil {
		return nil, "connect-init cannot find its own binary for the worker to run: " + err.Error()
	}
	for _, name := range strings.Split(cfg.Worker["config.providers"], ",") {
		if strings.TrimSpace(name) == providerName {
			return nil, "config.providers already lists a provider named " + providerName
		}
	}
	p := &inWorkerPlan{jar: jar, fileArg: -1}
	if f := cfg.Settings.WorkerConfig; f != "" {
		for i, a := range command.Argv[1:] {
			if a == f || sameFile(a, f) {
				p.rule, p.file, p.fileArg = "properties file", f, i+1
				break
			}
		}
	}
	if p.fileArg < 0 {
		if !envRenderingLaunchers[command.Path] {
			return nil, fmt.Sprintf("the worker command %s neither reads CONNECT_INIT_WORKER_CONFIG (not among its arguments) nor writes CONNECT_* variables into the worker configuration", command.Path)
		}
		p.rule = "CONNECT_* variables"
	}
	providers := cfg.Worker["config.providers"]
	if strings.TrimSpace(providers) == "" {
		providers = providerName
	} else {
		providers = strings.TrimRight(providers, ",") + "," + providerName
	}
	p.props = append(p.props,
		[2]string{"config.providers", providers},
		[2]string{providerPrefix + "class", providerClass},
		[2]string{providerPrefix + "param.command", self},
	)
	params, secrets := childSettings(cfg.Settings)
	for _, kv := range params {
		p.props = append(p.props, [2]string{providerPrefix + "param.env." + kv[0], kv[1]})
	}
	p.secrets = secrets
	return p, ""
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// childSettings are the settings `lock acquire` needs, from the settings
// table (settings.Passed): params, the plain ones, as provider parameter
// suffixes (lock.topic for CONNECT_INIT_LOCK_TOPIC; the provider maps them
// back), dotted lower case only, so that every image's rule (dub, ub,
// Debezium) maps the CONNECT_* variable to the same property; and secrets,
// by variable. A provider parameter is a worker property, and Connect logs
// its worker properties: a secret's value never becomes one, it goes to
// the child through the hand-over file (writeChildSecrets).
func childSettings(s settings.Settings) (params, secrets [][2]string) {
	for _, p := range s.Passed(settings.LockAcquire) {
		if p.Secret {
			secrets = append(secrets, [2]string{p.Env, p.Value})
			continue
		}
		name := strings.TrimPrefix(p.Env, workerconfig.OwnEnvPrefix)
		params = append(params, [2]string{strings.ToLower(strings.ReplaceAll(name, "_", ".")), p.Value})
	}
	return params, secrets
}

// apply rewires command: a copy of the properties file with the wiring
// appended (the user's file is never written), or CONNECT_* variables; and
// the jar first on CLASSPATH, which Kafka's launch scripts keep.
// A failure after the secrets' hand-over was written removes it: no
// worker starts to read it (issue 48).
func (p *inWorkerPlan) apply(command *entrypoint.Command) (err error) {
	props := p.props
	if len(p.secrets) > 0 {
		path, h, err := writeChildSecrets("lock", p.secrets)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				h.remove()
			}
		}()
		props = append(slices.Clone(props), [2]string{providerPrefix + "param.env." + childSecretsParam, path})
	}
	props = append(slices.Clone(props), [2]string{gateProperty, gateRef})
	if p.fileArg >= 0 {
		orig, err := os.ReadFile(p.file)
		if err != nil {
			return &settings.ConfigError{Setting: "CONNECT_INIT_WORKER_CONFIG", Problem: "cannot be read: " + err.Error()}
		}
		var b bytes.Buffer
		b.Write(orig)
		b.WriteString("\n# Added by connect-init: the worker waits for its turn in the startup lock (CONNECT_INIT_LOCK_MODE).\n")
		for _, kv := range props {
			b.WriteString(kv[0] + "=" + workerconfig.EscapeValue(kv[1]) + "\n")
		}
		dir, err := os.MkdirTemp("", "connect-init-")
		if err != nil {
			return fmt.Errorf("in-worker startup lock: %w", err)
		}
		// The copy holds the worker's settings, its passwords included:
		// a half-written one (a full disk) is removed at once, a written
		// one when the worker does not start (pending, run.go), as the
		// hand-over is (issue 48). The started worker reads it for its
		// whole life.
		copied := &handover{dir: dir}
		pending.add(copied)
		out := filepath.Join(dir, filepath.Base(p.file))
		if err := os.WriteFile(out, b.Bytes(), 0o600); err != nil {
			copied.remove()
			return fmt.Errorf("in-worker startup lock: writing the copy of the worker's properties file: %w", err)
		}
		command.Argv[p.fileArg] = out
	} else {
		for _, kv := range props {
			command.Env = setEnv(command.Env, workerconfig.EnvName(kv[0]), workerconfig.EscapeValue(kv[1]))
		}
	}
	cp := p.jar
	if cur := settings.Lookup(command.Env, "CLASSPATH"); cur != "" {
		cp += ":" + cur
	}
	command.Env = setEnv(command.Env, "CLASSPATH", cp)
	return nil
}

func setEnv(env []string, key, val string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+val)
}

// WithoutInWorkerWiring is environ as run found it: the worker's
// environment, which `lock acquire` inherits, without the CONNECT_*
// variables the wiring added (connect-init cannot evaluate its own
// provider, and the variables would otherwise look like user settings).
func WithoutInWorkerWiring(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		prop, ok := workerconfig.PropertyName(k)
		switch {
		case ok && strings.HasPrefix(prop, providerPrefix):
			continue
		case ok && prop == "config.providers":
			var keep []string
			for _, name := range strings.Split(v, ",") {
				if name != providerName {
					keep = append(keep, name)
				}
			}
			kv = k + "=" + strings.Join(keep, ",")
		}
		out = append(out, kv)
	}
	return out
}
