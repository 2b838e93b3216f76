package startup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// The in-worker lock's secrets hand-over.
//
// `lock acquire` runs as a child of the worker's JVM, with the JVM's
// environment (from which run removed every CONNECT_INIT_* variable) and
// the provider's parameters, which are worker properties: Connect prints
// its worker configuration at start, so a secret must not be one. Nor can
// an inherited descriptor carry it: run execs the JVM, and the JVM's
// ProcessBuilder closes every descriptor above 2 in the processes it
// starts, so nothing but a path survives two hand-overs. So run writes the
// secret settings (CONNECT_INIT_REST_PASSWORD, CONNECT_INIT_REST_TOKEN)
// into a hand-over file of its own (handover.go: /dev/shm when writable,
// mode 0600 in a directory of mode 0700 made for it) and passes only the
// file's path as a provider parameter; the child reads the file once,
// before its settings, and removes it, so that the secret rests only until
// the worker's turn is asked for. Run removes it when the worker does not
// start; a worker whose child never runs (the JVM died before its
// provider) leaves it until the next start of this user removes it.

const (
	// childSecretsParam is the provider parameter suffix naming the
	// hand-over file; the provider turns it into childSecretsEnv.
	childSecretsParam = "lock.child.secrets"
	// childSecretsEnv is the variable the child finds the file's path in.
	// It is not a setting of the table (no user sets it): LockChildEnv
	// takes it out of the environment before the settings are read.
	childSecretsEnv = workerconfig.OwnEnvPrefix + "LOCK_CHILD_SECRETS"
	// childSecretsName is the file's name in its directory.
	childSecretsName = "secrets.json"
	// childSecretsDirPrefix starts the name of the file's directory
	// (handover.go).
	childSecretsDirPrefix = handoverPrefix + "lock-"
)

// writeChildSecrets writes secrets (variable, value) into a new hand-over
// of kind (handover.go) and returns the file's path and the hand-over; on
// failure nothing of it is left.
func writeChildSecrets(kind string, secrets [][2]string) (string, *handover, error) {
	m := make(map[string]string, len(secrets))
	for _, kv := range secrets {
		m[kv[0]] = kv[1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", nil, fmt.Errorf("in-worker startup lock: encoding the child's secret settings: %w", err)
	}
	h, err := newHandover(kind)
	if err != nil {
		return "", nil, fmt.Errorf("in-worker startup lock: %w", err)
	}
	path, err := h.write(childSecretsName, b)
	if err != nil {
		h.remove()
		return "", nil, fmt.Errorf("in-worker startup lock: %w", err)
	}
	return path, h, nil
}

// LockChildEnv is the environment `lock acquire` reads its settings from:
// environ without run's in-worker wiring (WithoutInWorkerWiring), with the
// secret settings of the hand-over file that childSecretsEnv names, which
// it removes once read. Only secret settings of the table are taken from
// the file. A file that is named but cannot be read is a configuration
// error naming it: a child without the credentials its worker was given
// would otherwise fail later, and for a reason that is not the cause.
func LockChildEnv(environ []string) ([]string, error) {
	env := WithoutInWorkerWiring(environ)
	path := settings.Lookup(env, childSecretsEnv)
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != childSecretsEnv {
			out = append(out, kv)
		}
	}
	if path == "" {
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &settings.ConfigError{Setting: childSecretsEnv, Problem: "names " + path + ", the secret settings run handed over, which cannot be read: " + unwrapPathError(err).Error(),
			Fix: "let connect-init run start the worker (it writes the file just before the worker starts), and keep the container's temporary directory"}
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &settings.ConfigError{Setting: childSecretsEnv, Problem: "names " + path + ", which does not hold run's secret settings: " + err.Error(),
			Fix: "let connect-init run start the worker"}
	}
	for k, v := range m {
		r, ok := settings.Find(k)
		if !ok || !r.Secret {
			return nil, &settings.ConfigError{Setting: childSecretsEnv, Problem: "names " + path + ", which holds " + k + ", not a secret setting",
				Fix: "let connect-init run start the worker"}
		}
		out = append(out, k+"="+v)
	}
	// The secret now lives in this process only. A failed removal leaves
	// the file as run wrote it (0600), so it is not worth failing for.
	_ = os.Remove(path)
	if dir := filepath.Dir(path); strings.HasPrefix(filepath.Base(dir), childSecretsDirPrefix) {
		_ = os.Remove(dir)
	}
	return out, nil
}

// unwrapPathError drops the *PathError's copy of the path and operation.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
