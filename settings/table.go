package settings

import (
	"errors"
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/workerconfig"
)

// Command is a connect-init command, as a Setting names the commands it
// means something for.
type Command string

// The commands that read settings. LockAcquire is `lock acquire`, the
// in-worker lock's waiter.
const (
	Run         Command = "run"
	Prepare     Command = "prepare"
	Doctor      Command = "doctor"
	ShowConfig  Command = "config"
	Healthcheck Command = "healthcheck"
	Apply       Command = "apply"
	Repair      Command = "repair"
	LockAcquire Command = "lock"
	// Offsets is `offsets export|apply|reset`: it talks to one worker's
	// REST API only, so it takes the REST credentials and nothing else.
	Offsets Command = "offsets"
)

// Setting is one of connect-init's own settings: one row of the table
// (Table) that the loader, the flags of every command, their -h, `connect-init
// config` and the table of docs/settings.md are all made from, so that no
// second list can drift from it.
type Setting struct {
	// Env is the variable, CONNECT_INIT_...
	Env string
	// Flag is the command-line flag without dashes ("" for a setting that
	// is a variable only).
	Flag string
	// Default is the value an unset variable takes, written as a user
	// would write it ("" for none, or for one derived at load time).
	Default string
	// DocDefault is how the docs and -h state a default that is not a
	// plain value ("" means Default, or none).
	DocDefault string
	// Commands are the commands the setting means something for: their -h
	// lists it and they take its flag. The variable itself is read by
	// every command (the environment is the container's, shared by all).
	Commands []Command
	// FlagCommands narrows the commands that take the flag (nil: all of
	// Commands): --dir is apply's, though run reads the variable.
	FlagCommands []Command
	// Help is one line: what the setting does.
	Help string
	// HelpFor is, for the commands where the setting means something
	// else than Help says (the timeout bounds other things in each),
	// what it means there: a command's -h shows it (HelpIn).
	HelpFor map[Command]string
	// Secret is never shown: `config` and -h print "[hidden]" (as for a worker secret) for a
	// value it has.
	Secret bool
	// Common puts the setting in the README's short table of the settings
	// most people set.
	Common bool
	// field is the Settings field the value lands in; its type is the
	// setting's type (time.Duration, int, bool, string, []string).
	field func(*Settings) any
	// verbatim keeps the value as given, white space included: a
	// credential's white space is a mistake badCredential refuses, never
	// one to trim silently (the _FILE forms are refused alike).
	verbatim bool
	// max bounds an int setting (0: the type's own range): a count far
	// beyond any cluster is a typo, refused as too large rather than
	// waited for.
	max int
	// notPassed, for a setting of lock acquire, says why run does not
	// pass it to the in-worker lock's child (Settings.Passed); "" passes
	// it whenever it is set.
	notPassed string
	// check refuses a value that parses but makes no sense (nil: none).
	// It sees every setting, for rules between two of them, and names the
	// setting as the user gave it (Settings.Name).
	check func(Settings) error
}

// all is every command that reads settings; loaders are those that read
// the worker's settings and reach the cluster.
var (
	all     = []Command{Run, Prepare, Doctor, ShowConfig, Healthcheck, Apply, Repair, LockAcquire}
	loaders = []Command{Run, Prepare, Doctor, ShowConfig, Apply, Repair, LockAcquire}
	// logging are the commands that log: every command that reads
	// settings but healthcheck, whose one line is its output.
	logging = []Command{Run, Prepare, Doctor, ShowConfig, Apply, Repair, LockAcquire, Offsets}
)

// table is connect-init's settings, one row each, in the order the docs
// and `connect-init config` list them. To add a setting: add its field to
// Settings and one row here (the field accessor, the variable, the flag if
// any, the default, the commands, one line of help, and a check if a
// parsable value can still be wrong), then run `go test ./settings -run
// TestDocsTable -update` to rewrite the table in docs/settings.md.
var table = []Setting{
	{Env: "CONNECT_INIT_TIMEOUT", Common: true, Flag: "timeout", DocDefault: "`5m` (or `CONNECT_CUB_KAFKA_TIMEOUT` seconds)", Commands: append(slices.Clone(all), Offsets),
		Help: "bound on the steps before the startup lock together (brokers to plugins), and afresh on the peers step after it; the wait in the lock queue is not counted (at most about position × `CONNECT_INIT_LOCK_LEASE`)",
		HelpFor: map[Command]string{
			Prepare:     "bound on the steps brokers to group together",
			Doctor:      "bound on each look at the cluster and the worker group (with --watch, on every look)",
			ShowConfig:  "not used by config, which connects to nothing: shown, and checked like every setting",
			Healthcheck: "bound on the one look at the local worker: 5s by default; the variable can only shorten it (its 5m is meant for the gates, and Docker kills a HEALTHCHECK that outlives its own timeout), the flag sets it",
			Apply:       "bound on finding a worker of the group that answers and proving it ours, or with --url on reaching that worker (the wait for the connectors is --wait)",
			Repair:      "bound on the whole repair: reading the cluster, and with --execute the reassignment and its verification",
			LockAcquire: "bound on the brokers step before the lock, and afresh on the group and peers checks after it; the wait in the lock queue is not counted",
			Offsets:     "bound on the whole: reaching the worker, stopping the connector, writing, reading back and putting its state back; 2m unless set",
		},
		field: func(s *Settings) any { return &s.Timeout }, check: Settings.checkTimeout},
	{Env: "CONNECT_INIT_EXPECTED_BROKERS", Common: true, Flag: "expected-brokers", DocDefault: "largest of: distinct bootstrap addresses, highest internal-topic replication factor, `CONNECT_CUB_KAFKA_MIN_BROKERS`", Commands: loaders,
		Help:  "brokers to wait for",
		field: func(s *Settings) any { return &s.ExpectedBrokers }, check: Settings.checkExpectedBrokers, max: MaxCount},
	{Env: "CONNECT_INIT_WORKER_CONFIG", Common: true, Flag: "worker-config", Commands: all,
		Help:  "worker `.properties` file; `CONNECT_*` variables override it",
		field: func(s *Settings) any { return &s.WorkerConfig }},
	{Env: "CONNECT_INIT_STRICT", Common: true, Flag: "strict", Default: "false", Commands: []Command{Run, Prepare, Doctor, ShowConfig, LockAcquire},
		Help:  "coordinator-partition warnings and unverified group members become errors",
		field: func(s *Settings) any { return &s.Strict }},
	{Env: "CONNECT_INIT_REGISTRY_TOPIC", Default: "_connect-init-registry", Commands: []Command{Run, Prepare, Doctor, ShowConfig},
		Help:  "the cluster registry's compacted topic",
		field: func(s *Settings) any { return &s.RegistryTopic }, check: Settings.checkRegistryTopic},
	{Env: "CONNECT_INIT_GROUP_HANDOVER", Commands: []Command{Run, Prepare, Doctor, ShowConfig},
		Help:  "the config topic of the Connect cluster that owns the group in the registry: hand the group over to this cluster on purpose",
		field: func(s *Settings) any { return &s.GroupHandover }, check: Settings.checkGroupHandover},
	{Env: "CONNECT_INIT_LOCK", Common: true, Flag: "lock", Default: "true", Commands: []Command{Run, ShowConfig},
		Help:  "take the startup lock in `run`",
		field: func(s *Settings) any { return &s.Lock }},
	{Env: "CONNECT_INIT_LOCK_TOPIC", Flag: "lock-topic", Default: "_connect-init-lock", Commands: []Command{Run, Prepare, Doctor, ShowConfig, Apply, LockAcquire},
		Help:  "the lock's compacted topic (also `apply`'s lease)",
		field: func(s *Settings) any { return &s.LockTopic }, check: Settings.checkLockTopic},
	{Env: "CONNECT_INIT_LOCK_LEASE", Common: true, Flag: "lock-lease", Default: "3m", Commands: []Command{Run, Prepare, Doctor, ShowConfig, LockAcquire},
		Help:  "how long a holder may take to get ready before the next worker goes",
		field: func(s *Settings) any { return &s.LockLease }, check: Settings.checkLockLease},
	{Env: "CONNECT_INIT_LOCK_PERMITS", Common: true, Flag: "lock-permits", Default: "1", Commands: []Command{Run, Prepare, Doctor, ShowConfig, LockAcquire},
		Help:  "workers allowed to start at once",
		field: func(s *Settings) any { return &s.LockPermits }, check: Settings.checkLockPermits, max: MaxCount},
	{Env: "CONNECT_INIT_LOCK_UNAVAILABLE_AFTER", Flag: "lock-unavailable-after", Default: "2m", Commands: []Command{Run, ShowConfig, LockAcquire},
		Help:  "while the lock topic cannot be written (no leader, or fewer in-sync replicas than `min.insync.replicas`), how long `run` waits in the queue before it starts the worker without the lock, with a warning naming the topic and partition; `0` waits without bound",
		field: func(s *Settings) any { return &s.LockUnavailableAfter }, check: Settings.checkLockUnavailableAfter},
	{Env: "CONNECT_INIT_LOCK_MODE", Default: "auto", Commands: []Command{Run, ShowConfig},
		Help:  "where a worker waits for its turn: `auto` (in the worker, after its plugin scan, when the provider jar is installed and connect-init can extend the command's configuration; else before the exec), `worker` (in the worker or exit 2), `exec` (before the exec)",
		field: func(s *Settings) any { return &s.LockMode }, check: Settings.checkLockMode},
	{Env: "CONNECT_INIT_LOCK_JOINS", Default: "first", Commands: []Command{Run, ShowConfig, LockAcquire},
		Help:  "which joins the startup lock takes one at a time: `first` (the first worker of the group joins alone; a worker stops waiting in the queue as soon as the group is open: Stable, with every member proven ours as the group gate proves it) or `each` (every worker waits for the one before it to be ready; measured cost in docs/startup-lock.md)",
		field: func(s *Settings) any { return &s.LockJoins }, check: Settings.checkLockJoins},
	{Env: "CONNECT_INIT_LOCK_JAR", DocDefault: "the first `connect-init-provider.jar` in `/usr/share/java/kafka/`, `/opt/kafka/libs/`, `/kafka/libs/`", Commands: []Command{Run, ShowConfig},
		Help:  "the in-worker lock's ConfigProvider jar",
		field: func(s *Settings) any { return &s.LockJar }},
	{Env: "CONNECT_INIT_PEERS", Common: true, Flag: "peers", Commands: []Command{Run, Doctor, ShowConfig, Apply, LockAcquire},
		Help:  "extra REST peers (`host` or `host:port`, comma-separated; names with several addresses such as `tasks.connect` are expanded)",
		field: func(s *Settings) any { return &s.Peers }, check: Settings.checkPeers},
	{Env: "CONNECT_INIT_PEER_CHECK", Common: true, Flag: "peer-check", DocDefault: "fail for own URL and leader, warn for others", Commands: []Command{Run, ShowConfig, LockAcquire},
		Help:  "`fail`, `warn` or `off`",
		field: func(s *Settings) any { return &s.PeerCheck }, check: Settings.checkPeerCheck},
	{Env: "CONNECT_INIT_PLUGIN_CHECK", Common: true, Default: "fail", Commands: []Command{Run, ShowConfig},
		Help:  "the `plugins` step: `fail` refuses a worker that lacks a plugin the cluster's connectors use and its peers load; `warn` logs it and starts; `off` skips the step",
		field: func(s *Settings) any { return &s.PluginCheck }, check: Settings.checkPluginCheck},
	{Env: "CONNECT_INIT_LOG_FORMAT", Common: true, Flag: "log-format", Default: "text", Commands: logging,
		Help:  "`text` or `json` (`log/slog`, to stderr, one event a line)",
		field: func(s *Settings) any { return &s.LogFormat }, check: Settings.checkLogFormat},
	{Env: "CONNECT_INIT_LOG_LEVEL", Flag: "log-level", Default: "info", Commands: logging,
		Help:  "`debug`, `info`, `warn`, `error`",
		field: func(s *Settings) any { return &s.LogLevel }, check: Settings.checkLogLevel},
	{Env: "CONNECT_INIT_IMAGE", Flag: "image", DocDefault: "detected", Commands: all,
		Help:  "the image flavour: `confluent-dub`, `confluent-ub`, `debezium`, `apache`, `properties`",
		field: func(s *Settings) any { return &s.Image }, check: Settings.checkImage,
		notPassed: "the child reads the worker's own configuration, rendered by the image's launcher, and detects its layout itself"},
	{Env: "CONNECT_INIT_CONNECTORS_DIR", Common: true, Flag: "dir", Commands: []Command{Run, Prepare, ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "connector definitions (`*.json`, `*.properties`) for `apply`; in `run`, a one-shot `apply --wait-local` beside the worker",
		field: func(s *Settings) any { return &s.ConnectorsDir }},
	{Env: "CONNECT_INIT_APPLY_WATCH", Common: true, Default: "false", Commands: []Command{Run, ShowConfig},
		Help:  "in `run`, keep the apply beside the worker running as the watcher of the desired state (`apply --watch`); the watcher beside the group's leader acts, the others stand by; needs `CONNECT_INIT_CONNECTORS_DIR`",
		field: func(s *Settings) any { return &s.ApplyWatch }, check: Settings.checkApplyWatch},
	{Env: "CONNECT_INIT_APPLY_WATCH_INTERVAL", Flag: "watch-interval", Default: "30s", Commands: []Command{Run, ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "the watcher's pause between two looks",
		field: func(s *Settings) any { return &s.ApplyWatchInterval }, check: Settings.checkApplyWatchInterval},
	{Env: "CONNECT_INIT_APPLY_RESTART_BACKOFF", Flag: "restart-backoff", Default: "1m", Commands: []Command{Run, ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "the unit of the watcher's restart backoff: restart n+1 follows restart n by min(n*n+n, 60) units",
		field: func(s *Settings) any { return &s.ApplyRestartBackoff }, check: Settings.checkApplyRestartBackoff},
	{Env: "CONNECT_INIT_APPLY_METRICS_ADDR", Flag: "metrics-addr", Commands: []Command{Run, ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "where the watcher (`apply --watch`, and `run`'s with `CONNECT_INIT_APPLY_WATCH`) serves its Prometheus metrics at `/metrics`, as `host:port` (e.g. `:9464`); unset: none",
		field: func(s *Settings) any { return &s.ApplyMetricsAddr }, check: Settings.checkApplyMetricsAddr},
	// The REST credentials (restauth.go checks them together). The secrets
	// have no flag: a command line is visible to every process.
	{Env: RESTUsername, Flag: "rest-username", Commands: rest,
		Help:  "HTTP basic user for every call to a worker's REST API (Kafka's `BasicAuthSecurityRestExtension`); with `CONNECT_INIT_REST_PASSWORD`",
		field: func(s *Settings) any { return &s.RESTUsername }, verbatim: true},
	{Env: RESTUsername + fileSuffix, Flag: "rest-username-file", Commands: rest,
		Help:  "a file holding `CONNECT_INIT_REST_USERNAME` (a mounted secret)",
		field: func(s *Settings) any { return &s.RESTUsernameFile }},
	{Env: RESTPassword, Secret: true, Commands: rest,
		Help:  "HTTP basic password for the REST API; prefer `CONNECT_INIT_REST_PASSWORD_FILE`",
		field: func(s *Settings) any { return &s.RESTPassword }, verbatim: true},
	{Env: RESTPassword + fileSuffix, Flag: "rest-password-file", Commands: rest,
		Help:  "a file holding the REST password, such as a Docker or Swarm secret under `/run/secrets/`",
		field: func(s *Settings) any { return &s.RESTPasswordFile }},
	{Env: RESTToken, Secret: true, Commands: rest,
		Help:  "a bearer token for the REST API instead of a user; prefer `CONNECT_INIT_REST_TOKEN_FILE`",
		field: func(s *Settings) any { return &s.RESTToken }, verbatim: true},
	{Env: RESTToken + fileSuffix, Flag: "rest-token-file", Commands: rest,
		Help:  "a file holding the REST bearer token",
		field: func(s *Settings) any { return &s.RESTTokenFile }},
	// The REST client's own TLS files (resttls.go), for apply from a CI
	// runner that has no worker settings to derive them from.
	{Env: RESTCAFile, Flag: "cacert", Commands: []Command{ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "`apply`: a PEM file of the CA certificates trusted for an https REST URL (a private CA), instead of the system roots or the worker's REST TLS settings",
		field: func(s *Settings) any { return &s.RESTCAFile }, check: Settings.checkRESTTLS},
	{Env: RESTCertFile, Flag: "cert", Commands: []Command{ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "`apply`: a PEM client certificate for the REST API (an https listener with `ssl.client.auth=required`); with `CONNECT_INIT_REST_KEY_FILE`",
		field: func(s *Settings) any { return &s.RESTCertFile }},
	{Env: RESTKeyFile, Flag: "key", Commands: []Command{ShowConfig, Apply}, FlagCommands: []Command{Apply},
		Help:  "`apply`: the unencrypted PEM private key of `CONNECT_INIT_REST_CERT_FILE`",
		field: func(s *Settings) any { return &s.RESTKeyFile }},
}

// Redacted stands for a secret's value wherever settings are shown.
const Redacted = "[hidden]"

// rest are the commands that call a worker's REST API, and so send the
// REST credentials.
var rest = []Command{Run, Doctor, ShowConfig, Healthcheck, Apply, LockAcquire, Offsets}

// Table is the settings table, a copy: no caller can change the rows
// every command reads.
func Table() []Setting { return slices.Clone(table) }

// Find returns the row of the variable env.
func Find(env string) (Setting, bool) {
	for _, r := range table {
		if r.Env == env {
			return r, true
		}
	}
	return Setting{}, false
}

// Passed are the settings of cmd as s holds them, for a child process of
// that command that reads them back from its environment (the in-worker
// lock's `lock acquire`): every row of cmd, in the table's order, with a
// default or set to a value that is not its type's zero, but a row that
// says why it is not passed (NotPassed). Secrets are passed too, with
// their real value and Secret set: the caller must hand them over by a path
// that is never logged (a child that lacks the password its user was given
// with it fails, and with it every worker start).
func (s Settings) Passed(cmd Command) []PassedSetting {
	var out []PassedSetting
	for _, r := range table {
		if !r.AppliesTo(cmd) || r.notPassed != "" {
			continue
		}
		v := r.Value(&s)
		if p, ok := r.field(&s).(*string); ok && r.Secret {
			v = *p
		}
		if r.Default == "" && (v == "" || r.Type() == "int" && v == "0") {
			continue
		}
		out = append(out, PassedSetting{Env: r.Env, Value: v, Secret: r.Secret})
	}
	return out
}

// HelpIn is what the setting means for cmd: its HelpFor entry, else Help.
func (r Setting) HelpIn(cmd Command) string {
	if h, ok := r.HelpFor[cmd]; ok {
		return h
	}
	return r.Help
}

// PassedSetting is one setting handed to a child process: its variable,
// its value as a user would write it, and whether the value is a secret.
type PassedSetting struct {
	Env, Value string
	Secret     bool
}

// NotPassed is why the setting is not handed to `lock acquire`, the
// in-worker lock's child ("" when it is).
func (r Setting) NotPassed() string { return r.notPassed }

// AppliesTo reports whether the setting means something for cmd.
func (r Setting) AppliesTo(cmd Command) bool { return hasCommand(r.Commands, cmd) }

// FlagFor reports whether cmd takes the setting's flag.
func (r Setting) FlagFor(cmd Command) bool {
	if r.Flag == "" || !r.AppliesTo(cmd) {
		return false
	}
	return r.FlagCommands == nil || hasCommand(r.FlagCommands, cmd)
}

func hasCommand(cmds []Command, cmd Command) bool {
	for _, c := range cmds {
		if c == cmd {
			return true
		}
	}
	return false
}

// ShownDefault is the default as docs and -h state it ("" for none).
func (r Setting) ShownDefault() string {
	if r.DocDefault != "" {
		return r.DocDefault
	}
	if r.Default != "" {
		return "`" + r.Default + "`"
	}
	return ""
}

// Type is the setting's type as help and errors name it.
func (r Setting) Type() string {
	switch r.field(&Settings{}).(type) {
	case *time.Duration:
		return "duration"
	case *int:
		return "int"
	case *bool:
		return "bool"
	case *[]string:
		return "list"
	}
	return "string"
}

// Value is the setting's value in s, written as a user would write it; a
// Secret one that is set is "(redacted)".
func (r Setting) Value(s *Settings) string {
	if v, ok := r.field(s).(*string); ok && r.Secret && *v != "" {
		return Redacted
	}
	switch p := r.field(s).(type) {
	case *time.Duration:
		return p.String()
	case *int:
		return fmt.Sprint(*p)
	case *bool:
		return fmt.Sprint(*p)
	case *[]string:
		return strings.Join(*p, ",")
	case *string:
		return *p
	}
	return ""
}

// Set parses v into the setting's field of s. The error is what is wrong
// with v, for a ConfigError that names the variable or the flag.
func (r Setting) Set(s *Settings, v string) error {
	if !r.verbatim {
		v = strings.TrimSpace(v)
	}
	switch p := r.field(s).(type) {
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil && !strings.HasPrefix(v, "-") && durationSyntax.MatchString(v) {
			return &valueError{typeName: "time.Duration", value: v, tooLarge: MaxDuration.String()}
		}
		if err != nil {
			return parseError("time.Duration", v)
		}
		*p = d
	case *int:
		// Decimal only, as the docs say: base 0 (envconfig's) read
		// CONNECT_INIT_EXPECTED_BROKERS=010 as 8 and 0x3 as 3.
		n, err := strconv.ParseInt(v, 10, strconv.IntSize)
		switch {
		case errors.Is(err, strconv.ErrRange) && n > 0, err == nil && r.max > 0 && n > int64(r.max):
			limit := r.max
			if limit == 0 {
				limit = math.MaxInt
			}
			return &valueError{typeName: "int", value: v, tooLarge: strconv.Itoa(limit)}
		case err != nil:
			return parseError("int", v)
		}
		*p = int(n)
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return parseError("bool", v)
		}
		*p = b
	case *[]string:
		*p = nil
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				*p = append(*p, e)
			}
		}
	case *string:
		*p = v
	}
	return nil
}

// valueError is a value a setting's type cannot read, or a number that is
// only too large (tooLarge is then the largest allowed, as written).
type valueError struct {
	typeName, value, tooLarge string
}

func (e *valueError) Error() string {
	if e.tooLarge != "" {
		return fmt.Sprintf("is too large (got %q): at most %s", e.value, e.tooLarge)
	}
	return fmt.Sprintf("cannot be parsed as %s (got %q)", e.typeName, e.value)
}

// fix is what to give instead.
func (e *valueError) fix() string {
	if e.tooLarge != "" {
		return "use a value up to " + e.tooLarge
	}
	return settingHint(e.typeName)
}

// MaxCount bounds the int settings that count brokers or workers.
const MaxCount = 10000

// MaxDuration is the largest duration a setting can hold (Go's
// time.Duration, about 292 years).
const MaxDuration = time.Duration(math.MaxInt64)

// durationSyntax is a Go duration's form: a value that has it but does
// not parse is too large, not malformed.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

func parseError(typeName, v string) error { return &valueError{typeName: typeName, value: v} }

// checkTimeout: the gates need time.
func (s Settings) checkTimeout() error {
	if s.Timeout <= 0 {
		return s.badSetting("CONNECT_INIT_TIMEOUT", fmt.Sprintf("must be positive (got %s)", s.Timeout), "use a Go duration such as 90s, 5m or 1h")
	}
	return nil
}

// checkExpectedBrokers: at least one broker; 0 from a flag or a variable
// (not the unset default) is refused.
func (s Settings) checkExpectedBrokers() error {
	if s.ExpectedBrokers < 0 || s.ExpectedBrokers == 0 && s.Given("CONNECT_INIT_EXPECTED_BROKERS") {
		return expectedBrokersError(s.Name("CONNECT_INIT_EXPECTED_BROKERS"), s.ExpectedBrokers)
	}
	return nil
}

func (s Settings) checkLockPermits() error {
	if s.LockPermits < 1 {
		return s.badSetting("CONNECT_INIT_LOCK_PERMITS", fmt.Sprintf("must be at least 1 (got %d)", s.LockPermits), "use 1 to start workers one at a time")
	}
	return nil
}

func (s Settings) checkLockLease() error {
	switch {
	case s.LockLease <= 0:
		return s.badSetting("CONNECT_INIT_LOCK_LEASE", fmt.Sprintf("must be positive (got %s)", s.LockLease), "use e.g. 3m")
	case s.LockLease < MinLockLease:
		return s.badSetting("CONNECT_INIT_LOCK_LEASE", fmt.Sprintf("is %s, below the lock's minimum of %s", s.LockLease, MinLockLease),
			"use at least 1s; the lease should cover a worker's start, e.g. 3m")
	}
	return nil
}

func (s Settings) checkLockUnavailableAfter() error {
	if s.LockUnavailableAfter < 0 || s.LockUnavailableAfter > 0 && s.LockUnavailableAfter < MinLockUnavailableAfter {
		return s.badSetting("CONNECT_INIT_LOCK_UNAVAILABLE_AFTER", fmt.Sprintf("is %s; it must be 0 (wait without bound) or at least %s, longer than a broker failover", s.LockUnavailableAfter, MinLockUnavailableAfter),
			"use e.g. 2m, or 0 to never start without the lock")
	}
	return nil
}

func (s Settings) checkPeerCheck() error {
	switch s.PeerCheck {
	case "", "fail", "warn", "off":
		return nil
	}
	return s.badSetting("CONNECT_INIT_PEER_CHECK", fmt.Sprintf("must be fail, warn or off (got %q)", s.PeerCheck), "use fail, warn or off, or leave it unset")
}

func (s Settings) checkPluginCheck() error {
	if _, err := plugins.ParseCheckMode(s.PluginCheck); err != nil {
		return s.badSetting("CONNECT_INIT_PLUGIN_CHECK", fmt.Sprintf("must be fail, warn or off (got %q)", s.PluginCheck), "use fail (refuse a worker that lacks a plugin its peers load), warn or off, or leave it unset")
	}
	return nil
}

func (s Settings) checkLogFormat() error {
	switch s.LogFormat {
	case "text", "json":
		return nil
	}
	return s.badSetting("CONNECT_INIT_LOG_FORMAT", fmt.Sprintf("must be text or json (got %q)", s.LogFormat), "use text or json")
}

func (s Settings) checkLogLevel() error {
	if _, ok := ParseLogLevel(s.LogLevel); !ok {
		return s.badSetting("CONNECT_INIT_LOG_LEVEL", fmt.Sprintf("must be debug, info, warn or error (got %q)", s.LogLevel), "use debug, info, warn or error")
	}
	return nil
}

func (s Settings) checkImage() error {
	if s.Image == "" {
		return nil
	}
	if _, ok := workerconfig.ParseFlavour(s.Image); !ok {
		return s.badSetting("CONNECT_INIT_IMAGE", fmt.Sprintf("names no known image flavour (got %q)", s.Image), "use one of "+flavourList()+", or leave it unset to detect the image")
	}
	return nil
}

func (s Settings) checkLockTopic() error {
	return checkTopicName(s.LockTopic, s.Name("CONNECT_INIT_LOCK_TOPIC"))
}

func (s Settings) checkLockMode() error {
	switch strings.ToLower(strings.TrimSpace(s.LockMode)) {
	case "", "auto", "worker", "exec":
		return nil
	}
	return s.badSetting("CONNECT_INIT_LOCK_MODE", fmt.Sprintf("must be auto, worker or exec (got %q)", s.LockMode), "leave it unset (auto: in the worker when its jar is installed, else before the exec)")
}

// Values of CONNECT_INIT_LOCK_JOINS.
const (
	LockJoinsFirst = "first"
	LockJoinsEach  = "each"
)

// LockJoinsPolicy is CONNECT_INIT_LOCK_JOINS read: first (also when unset)
// or each; checkLockJoins refuses anything else before it is used.
func (s Settings) LockJoinsPolicy() string {
	if strings.ToLower(strings.TrimSpace(s.LockJoins)) == LockJoinsEach {
		return LockJoinsEach
	}
	return LockJoinsFirst
}

func (s Settings) checkLockJoins() error {
	switch strings.ToLower(strings.TrimSpace(s.LockJoins)) {
	case "", LockJoinsFirst, LockJoinsEach:
		return nil
	}
	return s.badSetting("CONNECT_INIT_LOCK_JOINS", fmt.Sprintf("must be first or each (got %q)", s.LockJoins),
		"leave it unset (first: only the first worker of a group joins alone) or set each to let the workers join one at a time")
}

// checkRegistryTopic: a legal name, and not the lock's topic.
func (s Settings) checkRegistryTopic() error {
	if err := checkTopicName(s.RegistryTopic, s.Name("CONNECT_INIT_REGISTRY_TOPIC")); err != nil {
		return err
	}
	if collisionKey(s.RegistryTopic) == collisionKey(s.LockTopic) {
		return &ConfigError{Setting: s.Name("CONNECT_INIT_REGISTRY_TOPIC"),
			Problem: fmt.Sprintf("is %q, the startup lock's topic (CONNECT_INIT_LOCK_TOPIC %q) or one Kafka cannot tell from it", s.RegistryTopic, s.LockTopic),
			Fix:     "leave CONNECT_INIT_REGISTRY_TOPIC unset (default _connect-init-registry) or name a topic of its own"}
	}
	return nil
}

func (s Settings) checkGroupHandover() error {
	if s.GroupHandover == "" {
		return nil
	}
	return checkTopicName(s.GroupHandover, s.Name("CONNECT_INIT_GROUP_HANDOVER"))
}

func (s Settings) checkApplyWatch() error {
	if s.ApplyWatch && strings.TrimSpace(s.ConnectorsDir) == "" {
		return s.badSetting("CONNECT_INIT_APPLY_WATCH", "is true, but CONNECT_INIT_CONNECTORS_DIR is not set: there is no desired state to keep",
			"set CONNECT_INIT_CONNECTORS_DIR to the directory of connector definitions, or leave CONNECT_INIT_APPLY_WATCH unset")
	}
	return nil
}

func (s Settings) checkApplyMetricsAddr() error {
	if s.ApplyMetricsAddr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(s.ApplyMetricsAddr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		return s.badSetting("CONNECT_INIT_APPLY_METRICS_ADDR", fmt.Sprintf("is not host:port (got %q)", s.ApplyMetricsAddr), "use e.g. :9464 (every address) or 127.0.0.1:9464")
	}
	return nil
}

func (s Settings) checkApplyWatchInterval() error {
	if s.ApplyWatchInterval <= 0 {
		return s.badSetting("CONNECT_INIT_APPLY_WATCH_INTERVAL", fmt.Sprintf("must be positive (got %s)", s.ApplyWatchInterval), "use a Go duration such as 30s")
	}
	return nil
}

func (s Settings) checkApplyRestartBackoff() error {
	if s.ApplyRestartBackoff <= 0 {
		return s.badSetting("CONNECT_INIT_APPLY_RESTART_BACKOFF", fmt.Sprintf("must be positive (got %s)", s.ApplyRestartBackoff), "use a Go duration such as 1m (Strimzi's unit)")
	}
	return nil
}

// checkPeers: each extra REST peer is a host or host:port.
func (s Settings) checkPeers() error {
	for _, p := range s.Peers {
		if err := checkPeer(p); err != nil {
			return &ConfigError{Setting: s.Name("CONNECT_INIT_PEERS"), Problem: fmt.Sprintf("entry %q %s", restclient.RedactUserinfo(p), err.Error()),
				Fix: "list peers as host or host:port (e.g. tasks.connect or connect-1:8083), comma-separated"}
		}
	}
	return nil
}
