// Package settings is connect-init's settings gate: it reads connect-init's
// own CONNECT_INIT_* settings and the worker's configuration exactly as the
// image at hand hands it to the worker, checks every value connect-init will
// use, and derives once what the later gates need (bootstrap servers, the
// internal topics by role, the lock topic, the advertised REST URL, the REST
// TLS configurations). It opens no connection, so a bad setting stops
// connect-init before anything is touched.
//
// It is a leaf: it imports only workerconfig, security and connect/plugins
// (the one reading of CONNECT_INIT_PLUGIN_CHECK), and the gates, the lock
// and the REST checks receive values from it.
package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/connect-init/connect-init/workerconfig"
)

// EnvPrefix is connect-init's own prefix (workerconfig.OwnEnvPrefix
// without its "_"): variables with it are never passed to the worker.
const EnvPrefix = "CONNECT_INIT"

// Settings are connect-init's own settings, read from CONNECT_INIT_*
// variables and overridden by command-line flags. Each field is one row of
// table, which names its variable, flag, default and check: a field
// without a row is never read (TestEveryFieldHasARow).
type Settings struct {
	// Timeout bounds the steps before the startup lock together, and
	// afresh the peers step after it (startup's deadlineCluster and
	// deadlineFresh); the lock's wait is not counted. Unset:
	// CONNECT_CUB_KAFKA_TIMEOUT seconds (Confluent's image), else 5m.
	Timeout time.Duration
	// ExpectedBrokers overrides the computed number of brokers to wait for.
	ExpectedBrokers int
	// WorkerConfig is a worker .properties file read before CONNECT_* variables.
	WorkerConfig string
	// Lock enables the startup lock in run.
	Lock bool
	// LockTopic is the compacted topic holding the startup-lock queue.
	LockTopic string
	// LockLease is how long a holder keeps the lock if it never gets ready.
	LockLease time.Duration
	// LockPermits is how many workers may start at once.
	LockPermits int
	// LockUnavailableAfter is how long run waits in the lock queue while
	// the lock topic cannot be written (no leader, or fewer in-sync
	// replicas than min.insync.replicas) before it starts the worker
	// without the lock, with a warning; 0 waits without bound.
	LockUnavailableAfter time.Duration
	// LockMode is where a worker waits for its turn: auto (in the worker,
	// after its plugin scan, when the provider jar is installed and the
	// command's configuration can be extended), worker, or exec (before
	// the exec).
	LockMode string
	// LockJoins is which joins the startup lock serialises: first (the
	// first worker of a group joins alone; the others go together once
	// the group is open: Stable, every member proven ours) or each (one
	// join at a time, the behaviour before issue 39).
	LockJoins string
	// LockJar is the in-worker lock's ConfigProvider jar; empty means the
	// first one found in the images' classpath directories.
	LockJar string
	// Peers are extra REST peers to check (host or host:port).
	Peers []string
	// PeerCheck is fail, warn or off; empty means the default policy.
	PeerCheck string
	// PluginCheck is fail, warn or off: whether the plugins step refuses a
	// worker that lacks a plugin its peers load (plugins.CheckMode).
	PluginCheck string
	// Strict turns warnings about the coordinator partition, and group
	// members the group gate could not verify, into errors.
	Strict bool
	// RegistryTopic is the compacted topic of the cluster registry (which
	// Connect cluster owns which group.id; see connect/registry).
	RegistryTopic string
	// GroupHandover names the config topic of the Connect cluster that
	// owns the group in the registry, to hand the group over to this
	// cluster on purpose.
	GroupHandover string
	// LogFormat is text or json.
	LogFormat string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// ConnectorsDir is the directory of connector definitions `connect-init
	// apply` reads (its --dir); in run, setting it starts a one-shot
	// `apply --wait-local` beside the worker.
	ConnectorsDir string
	// ApplyWatch keeps run's apply child running as the watcher of the
	// desired state (apply --watch): one active per Connect cluster, the
	// one beside the group's leader.
	ApplyWatch bool
	// ApplyWatchInterval is the watcher's pause between two looks (apply
	// --watch-interval); its default is apply.DefaultWatchInterval's, and
	// ApplyRestartBackoff's apply.DefaultRestartUnit's.
	ApplyWatchInterval time.Duration
	// ApplyRestartBackoff is the unit of the watcher's restart backoff
	// (apply --restart-backoff): restart n+1 of a connector follows
	// restart n by min(n*n+n, 60) units.
	ApplyRestartBackoff time.Duration
	// ApplyMetricsAddr is where the watcher serves its Prometheus metrics
	// (host:port; empty: none): apply --metrics-addr, and run's watcher.
	ApplyMetricsAddr string
	// Image is the image flavour (confluent-dub, confluent-ub, debezium,
	// apache, properties); empty means detect it from the image's files.
	Image string
	// The REST credentials as given: each value directly or as the path of
	// a file holding it (the _FILE variables). RESTAuth resolves them.
	RESTUsername, RESTUsernameFile string
	RESTPassword, RESTPasswordFile string
	RESTToken, RESTTokenFile       string
	// RESTCAFile, RESTCertFile and RESTKeyFile are the REST client's own
	// TLS files (PEM), for apply; RESTTLS reads them.
	RESTCAFile, RESTCertFile, RESTKeyFile string

	// Flags lists the variables whose value came from a command-line flag
	// ("CONNECT_INIT_TIMEOUT" -> "--timeout"), so that messages name what
	// the user actually typed.
	Flags map[string]string

	// set lists the variables and flags that gave a value (a zero from
	// them is not the unset default); bad holds what the environment gave
	// that could not be read, until Validate reports it.
	set map[string]bool
	bad []*ConfigError
}

// MinLockLease is the shortest CONNECT_INIT_LOCK_LEASE: the lock's own
// minimum waiter lease (lock.MinLease); a shorter one is refused rather than
// silently raised.
const MinLockLease = time.Second

// MinLockUnavailableAfter is the shortest nonzero
// CONNECT_INIT_LOCK_UNAVAILABLE_AFTER: a KRaft cluster replaces a dead
// partition leader after broker.session.timeout.ms (9 s) and an election,
// and a bound shorter than that would start workers without the lock at
// every routine failover.
const MinLockUnavailableAfter = 15 * time.Second

// Name is how messages name the setting whose variable is envName: the flag
// when the value came from one, else the variable.
func (s Settings) Name(envName string) string {
	if f, ok := s.Flags[envName]; ok {
		return f
	}
	return envName
}

// LoadSettings reads Settings from environ and validates them (Read, then
// Validate): every problem at once, as a Problems error.
func LoadSettings(environ []string) (Settings, error) {
	s := Read(environ)
	return s, s.Validate()
}

// Read reads Settings from environ by the table, without failing: what
// cannot be read (a value its type cannot parse, a CONNECT_INIT_* name
// that is no setting) is kept for Validate to report with the rest, so
// that a command can still bind its flags and show what it could read. A
// variable that is set but empty counts as unset; when a name occurs twice
// its last non-empty value counts.
func Read(environ []string) Settings {
	s := Settings{set: map[string]bool{}, Flags: map[string]string{}}
	for _, r := range table {
		if r.Default != "" {
			if err := r.Set(&s, r.Default); err != nil {
				panic(fmt.Sprintf("settings table: %s default %q: %v", r.Env, r.Default, err))
			}
		}
	}
	// The last non-empty value of each name counts (an empty one is unset).
	var names []string
	last := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, workerconfig.OwnEnvPrefix) {
			continue
		}
		if _, seen := last[k]; !seen {
			names = append(names, k)
			last[k] = ""
		}
		if strings.TrimSpace(v) != "" {
			last[k] = v
		}
	}
	bad := map[string]*ConfigError{}
	var unknown []string
	for _, k := range names {
		v := last[k]
		if strings.TrimSpace(v) == "" {
			continue // set but empty counts as unset, known name or not
		}
		r, ok := Find(k)
		switch {
		case !ok:
			unknown = append(unknown, k)
			bad[k] = unknownSetting(k)
			continue
		case strings.TrimSpace(v) == "":
			continue
		}
		s.set[k] = true
		if err := r.Set(&s, v); err != nil {
			ve := err.(*valueError)
			bad[k] = &ConfigError{Setting: k, Problem: ve.Error(), Fix: ve.fix()}
		}
	}
	for _, k := range unknown {
		s.bad = append(s.bad, bad[k])
	}
	for _, r := range table {
		if ce := bad[r.Env]; ce != nil {
			s.bad = append(s.bad, ce)
		}
	}
	if s.set["CONNECT_INIT_TIMEOUT"] && s.Timeout == 0 && bad["CONNECT_INIT_TIMEOUT"] == nil {
		s.bad = append(s.bad, &ConfigError{Setting: "CONNECT_INIT_TIMEOUT", Problem: "is zero, which would leave no time for any gate", Fix: settingHint("time.Duration")})
	}
	if !s.set["CONNECT_INIT_TIMEOUT"] {
		s.Timeout = 5 * time.Minute
		if v := Lookup(environ, "CONNECT_CUB_KAFKA_TIMEOUT"); v != "" {
			if d, err := cubTimeout(v); err != nil {
				s.bad = append(s.bad, err)
			} else {
				s.Timeout = d
			}
		}
	}
	return s
}

// SetFlag sets the setting of row r from its flag: the value wins over the
// variable's, and messages name the flag.
func (s *Settings) SetFlag(r Setting, v string) error {
	if err := r.Set(s, v); err != nil {
		var ve *valueError
		if errors.As(err, &ve) {
			return &ConfigError{Setting: "--" + r.Flag, Problem: ve.Error(), Fix: ve.fix()}
		}
		return err
	}
	if s.Flags == nil {
		s.Flags = map[string]string{}
	}
	if s.set == nil {
		s.set = map[string]bool{}
	}
	s.Flags[r.Env] = "--" + r.Flag
	s.set[r.Env] = true
	return nil
}

// Given reports whether the variable (or its flag) gave the value, rather
// than the default.
func (s Settings) Given(env string) bool { return s.set[env] || s.Flags[env] != "" }

// expectedBrokersError refuses an expected broker count below 1: the
// broker gate would have no broker to wait for, and leaving the setting
// unset is how a user asks for the derived number.
func expectedBrokersError(setting string, n int) error {
	return &ConfigError{Setting: setting, Problem: fmt.Sprintf("must be at least 1 (got %d)", n),
		Fix: "set the number of brokers to wait for, or leave it unset to derive it from the bootstrap servers and replication factors"}
}

func settingHint(typeName string) string {
	switch typeName {
	case "time.Duration", "Duration":
		return "use a Go duration such as 90s, 5m or 1h"
	case "bool":
		return "use true or false"
	case "int":
		return "use a whole decimal number such as 3"
	}
	return ""
}

// Validate reports every problem of the settings at once, as Problems:
// the names and values Read could not take (unless a flag replaced the
// value since), then each row's check, in table order. Errors name the flag
// when the value came from one.
func (s Settings) Validate() error {
	var out Problems
	skip := map[string]bool{}
	for _, ce := range s.bad {
		if s.Flags[ce.Setting] != "" {
			continue // a flag replaced the variable's value
		}
		out = append(out, ce)
		skip[ce.Setting] = true
	}
	for _, r := range table {
		if r.check == nil || skip[r.Env] {
			continue
		}
		if err := r.check(s); err != nil {
			out = append(out, err)
		}
	}
	if _, errs := s.resolveRESTAuth(); len(errs) > 0 {
		out = append(out, errs...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// badSetting is the ConfigError for the setting whose variable is env,
// named as the user gave it (see Name).
func (s Settings) badSetting(env, problem, fix string) error {
	return &ConfigError{Setting: s.Name(env), Problem: problem, Fix: fix}
}

// ParseLogLevel reads CONNECT_INIT_LOG_LEVEL (debug, info, warn or
// warning, error; any case): the one reading for validation and logger.
func ParseLogLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return slog.LevelInfo, false
}

func flavourList() string {
	var names []string
	for _, f := range workerconfig.Flavours() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Lookup is the trimmed last value of key in environ (workerconfig.LookupEnv):
// the value the image and the JVM see when a name occurs twice.
func Lookup(environ []string, key string) string {
	v, _ := workerconfig.LookupEnv(environ, key)
	return strings.TrimSpace(v)
}

// ConfigError is bad configuration or usage: connect-init exits 2 and
// touches nothing. It names the setting and never carries a secret.
type ConfigError struct {
	Setting string
	Problem string
	Fix     string
}

// Error names the setting, the problem and the fix, on one line.
func (e *ConfigError) Error() string {
	msg := e.Setting + " " + e.Problem
	if e.Fix != "" {
		msg += ": " + e.Fix
	}
	return msg
}

// AsConfigError reports whether err is bad configuration (exit 2), whether
// it came from connect-init's own settings or from a worker property.
func AsConfigError(err error) bool {
	var ce *ConfigError
	var we *workerconfig.Error
	return errors.As(err, &ce) || errors.As(err, &we)
}

// Problems are every problem the settings step found, in the order found:
// a command reports each (setting, problem, fix) and exits 2.
type Problems []error

// Error lists the problems on one line.
func (p Problems) Error() string {
	msgs := make([]string, len(p))
	for i, e := range p {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap lets errors.As find the first ConfigError.
func (p Problems) Unwrap() []error { return p }

// Each is err as a list of problems: the members of a Problems, else err
// alone (nil: none).
func Each(err error) []error {
	if err == nil {
		return nil
	}
	var p Problems
	if errors.As(err, &p) {
		return p
	}
	return []error{err}
}

// cubTimeout reads Confluent's CONNECT_CUB_KAFKA_TIMEOUT, whole seconds.
// Seconds beyond what a time.Duration holds are refused as too large: the
// product would overflow into a timeout of a few milliseconds, or a
// negative one blamed on CONNECT_INIT_TIMEOUT.
func cubTimeout(v string) (time.Duration, *ConfigError) {
	const maxSecs = int64(MaxDuration / time.Second)
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && secs > 0, err == nil && secs > maxSecs:
		return 0, &ConfigError{Setting: "CONNECT_CUB_KAFKA_TIMEOUT", Problem: fmt.Sprintf("is too large (got %q): at most %d seconds", v, maxSecs),
			Fix: "set it to e.g. 40, or set CONNECT_INIT_TIMEOUT=5m"}
	case err != nil || secs <= 0:
		return 0, &ConfigError{Setting: "CONNECT_CUB_KAFKA_TIMEOUT", Problem: fmt.Sprintf("is not a positive whole number of seconds (got %q)", v),
			Fix: "set it to e.g. 40, or set CONNECT_INIT_TIMEOUT=5m"}
	}
	return time.Duration(secs) * time.Second, nil
}
