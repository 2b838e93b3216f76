package workerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadOptions says which image's rules to read the settings with.
type LoadOptions struct {
	Flavour Flavour
	// Environ is the process environment ("KEY=value").
	Environ []string
	// File is CONNECT_INIT_WORKER_CONFIG: a worker properties file under
	// the variables (Confluent), Debezium's base file instead of Kafka's
	// connect-distributed.properties, or the only source (apache,
	// properties).
	File string
	// Root is where the image's files are ("" is "/"), for Debezium's
	// base file; tests point it at a directory of their own.
	Root string
	// HostAddress stands for Debezium's HOST_NAME fallback (the address of
	// the last broadcast interface in `ip addr`). Nil uses this machine's.
	HostAddress func() (string, error)
	// NoImageChecks skips the variables the image's scripts require (for
	// healthcheck, which runs beside a worker that already started).
	NoImageChecks bool
}

// Loaded is the worker configuration as the worker will see it.
type Loaded struct {
	Flavour Flavour
	Props   Properties
	Sources Sources
	// WorkerEnviron is the environment the worker process will have after
	// the image's scripts ran (config providers' ${env:...} read it).
	WorkerEnviron []string
	// BaseFile is the file the settings start from ("" for none).
	BaseFile string
	// Ignored lists CONNECT_* variables that are not worker settings
	// under this flavour (apache, properties).
	Ignored []string
}

// Load is LoadFor with Confluent's dub rule, kept for callers that do not
// know the flavour (healthcheck, older tests).
func Load(environ []string, file string) (Properties, error) {
	l, err := LoadFor(LoadOptions{Flavour: ConfluentDub, Environ: environ, File: file, NoImageChecks: true})
	if err != nil {
		return nil, err
	}
	return l.Props, nil
}

// LoadFor reads the worker settings with the rules of o.Flavour, checks the
// variables the image itself requires, and resolves config providers. Every
// error is an *Error whose Setting names what the user set.
func LoadFor(o LoadOptions) (*Loaded, error) {
	env := WithoutOwn(o.Environ)
	var l *Loaded
	var err error
	switch o.Flavour {
	case ConfluentDub, ConfluentUB, "":
		if o.Flavour == "" {
			o.Flavour = ConfluentDub
		}
		l, err = loadConfluent(o, env)
	case Debezium:
		l, err = loadDebezium(o, env)
	case Apache, PropertiesFile:
		l, err = loadPropertiesOnly(o, env)
	default:
		return nil, &Error{Setting: "CONNECT_INIT_IMAGE", Property: "-", Problem: fmt.Sprintf("names an unknown image flavour %q", o.Flavour)}
	}
	if err != nil {
		return nil, err
	}
	resolved, err := ResolveProviders(l.Props, l.WorkerEnviron)
	if err != nil {
		var we *Error
		if errors.As(err, &we) && we.Setting == "" {
			we.Setting = l.Sources.Setting(l.Flavour, we.Property, o.File)
		}
		return nil, err
	}
	l.Props = resolved
	return l, nil
}

// readBase reads a properties file with its line numbers into p and src.
// setting names what chose the file, for the error.
func readBase(path, setting string, p Properties, src Sources) error {
	data, err := readFileFor(path, setting)
	if err != nil {
		return err
	}
	fp, lines, err := ParseLines(data)
	if err != nil {
		return &Error{Setting: setting, Property: "-", Problem: fmt.Sprintf("names %s, which Java cannot read: %v", path, err), Fix: `write a literal backslash as \\`}
	}
	for k, v := range fp {
		p[k] = v
		src[k] = Source{File: path, Line: lines[k]}
	}
	return nil
}

// readFileFor reads a worker file; the error names the setting that chose it.
func readFileFor(path, setting string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		problem := fmt.Sprintf("names %s, which cannot be read: %s", path, pathErr(err))
		if errors.Is(err, fs.ErrNotExist) {
			problem = fmt.Sprintf("names %s, which does not exist", path)
		}
		return nil, &Error{Setting: setting, Property: "-", Problem: problem, Fix: "mount the worker properties file there, or correct the path"}
	}
	return data, nil
}

func pathErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadConfluent follows cp-kafka-connect's run script: apply-mesos-overrides
// (HOST, PORT0, CONNECT_REST_PORT=8083), configure (its ensure list, the
// KAFKA-3988 internal-converter fix), then the template with dub's or ub's
// name rule over an optional file of ours.
func loadConfluent(o LoadOptions, env []string) (*Loaded, error) {
	l := &Loaded{Flavour: o.Flavour, Props: Properties{}, Sources: Sources{}}
	env, origin := confluentScriptEnv(env)
	if !o.NoImageChecks {
		if err := confluentEnsure(o.Flavour, env); err != nil {
			return nil, err
		}
	}
	l.WorkerEnviron = env

	if o.File != "" {
		if err := readBase(o.File, "CONNECT_INIT_WORKER_CONFIG", l.Props, l.Sources); err != nil {
			return nil, err
		}
		l.BaseFile = o.File
	}
	var text string
	var names map[string]string
	if o.Flavour == ConfluentUB {
		text, names = renderUB(env)
	} else {
		text, names = renderDub(env)
	}
	ep, err := parseRendered(text, names, env)
	if err != nil {
		return nil, err
	}
	for k, v := range ep {
		l.Props[k] = v
		l.Sources[k] = renderedSource(k, names, origin)
	}
	return l, nil
}

// confluentScriptEnv is env as apply-mesos-overrides and configure leave
// it, with origin saying where each variable they added came from.
func confluentScriptEnv(env []string) ([]string, map[string]Source) {
	origin := map[string]Source{}
	set := func(name, val string, src Source) {
		if cur, _ := LookupEnv(env, name); cur == "" && val != "" {
			env = append(env, name+"="+val)
			origin[name] = src
		}
	}
	host, _ := LookupEnv(env, "HOST")
	port0, _ := LookupEnv(env, "PORT0")
	set("CONNECT_REST_ADVERTISED_HOST_NAME", host, Source{Var: "HOST", Default: "Confluent's apply-mesos-overrides"})
	set("CONNECT_REST_ADVERTISED_PORT", port0, Source{Var: "PORT0", Default: "Confluent's apply-mesos-overrides"})
	set("CONNECT_REST_PORT", "8083", Source{Default: "cp-kafka-connect default CONNECT_REST_PORT=8083"})
	for _, side := range []string{"KEY", "VALUE"} {
		if v, _ := LookupEnv(env, "CONNECT_INTERNAL_"+side+"_CONVERTER"); v == "org.apache.kafka.connect.json.JsonConverter" {
			for _, s := range []string{"KEY", "VALUE"} {
				name := "CONNECT_INTERNAL_" + s + "_CONVERTER_SCHEMAS_ENABLE"
				env = append(env, name+"=false")
				origin[name] = Source{Var: "CONNECT_INTERNAL_" + side + "_CONVERTER", Default: "Confluent's configure (KAFKA-3988)"}
			}
			break
		}
	}
	return env, origin
}

// parseRendered parses the worker-file text the template rendered; when
// Java could not read it, the error names the variable whose value holds
// the malformed escape.
func parseRendered(text string, names map[string]string, env []string) (Properties, error) {
	ep, err := Parse([]byte(text))
	if err != nil {
		for prop, name := range names {
			v, _ := LookupEnv(env, name)
			if _, lineErr := Parse([]byte(prop + "=" + v + "\n")); lineErr != nil {
				return nil, &Error{Setting: name, Property: prop, Problem: "cannot be read by Java: its value has a malformed \\uXXXX escape",
					Fix: `write a literal backslash as \\ in ` + name}
			}
		}
		return nil, fmt.Errorf("CONNECT_* variables: %w", err)
	}
	return ep, nil
}

// renderedSource is where the rendered property k came from: its variable
// (names), or what derived that variable (origin), or another variable's
// multi-line value.
func renderedSource(k string, names map[string]string, origin map[string]Source) Source {
	name, ok := names[k]
	if !ok {
		return Source{Default: "a line inside the value of another CONNECT_* variable"}
	}
	if src, derived := origin[name]; derived {
		if src.Var == "" {
			src.Var = name
		}
		return src
	}
	return Source{Var: name}
}

// confluentRequired is configure's ensure list, in its order.
var confluentRequired = []string{
	"CONNECT_BOOTSTRAP_SERVERS", "CONNECT_GROUP_ID", "CONNECT_CONFIG_STORAGE_TOPIC",
	"CONNECT_OFFSET_STORAGE_TOPIC", "CONNECT_STATUS_STORAGE_TOPIC", "CONNECT_KEY_CONVERTER",
	"CONNECT_VALUE_CONVERTER", "CONNECT_REST_ADVERTISED_HOST_NAME",
}

// avroConverter is the value configure compares the converters with.
const avroConverter = "io.confluent.connect.avro.AvroConverter"

// confluentEnsure is configure's checks: `dub ensure` wants each variable
// non-empty, `ub ensure` only set; an Avro converter also needs its
// schema.registry.url variable.
func confluentEnsure(f Flavour, env []string) error {
	required := append([]string(nil), confluentRequired...)
	for _, side := range []string{"KEY", "VALUE"} {
		if v, _ := LookupEnv(env, "CONNECT_"+side+"_CONVERTER"); v == avroConverter {
			required = append(required, "CONNECT_"+side+"_CONVERTER_SCHEMA_REGISTRY_URL")
		}
	}
	for _, name := range required {
		v, found := LookupEnv(env, name)
		prop, _ := PropertyName(name)
		if f == ConfluentUB {
			prop, _ = PropertyNameUB(name)
		}
		switch {
		case !found:
			return &Error{Setting: name, Property: prop, Problem: "is not set, and the image's configure script requires it (the worker would not start)",
				Fix: requiredFix(name)}
		case f == ConfluentDub && v == "":
			return &Error{Setting: name, Property: prop, Problem: "is empty, and the image's `dub ensure` requires a value (the worker would not start)",
				Fix: requiredFix(name)}
		}
	}
	return nil
}

func requiredFix(name string) string {
	switch name {
	case "CONNECT_REST_ADVERTISED_HOST_NAME":
		return "set it to a name every worker can resolve, e.g. the container's host name"
	case "CONNECT_KEY_CONVERTER", "CONNECT_VALUE_CONVERTER":
		return "set it, e.g. to org.apache.kafka.connect.json.JsonConverter"
	case "CONNECT_KEY_CONVERTER_SCHEMA_REGISTRY_URL", "CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL":
		return "set it to the Schema Registry URL, e.g. http://schema-registry:8081"
	}
	return "set it in the container's environment"
}

// renderDub is the worker-file text dub's template writes: variables in
// environment order, a later duplicate name keeping the first position
// (Python dict); names maps each property to its variable.
func renderDub(env []string) (string, map[string]string) {
	var order []string
	vals, names := map[string]string{}, map[string]string{}
	for _, kv := range env {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			continue
		}
		name, ok := PropertyName(k)
		if !ok {
			continue
		}
		if _, seen := vals[name]; !seen {
			order = append(order, name)
		}
		vals[name], names[name] = v, k
	}
	return renderLines(order, vals), names
}

// renderUB is the worker-file text ub's template writes: a Go map ranged
// in key order; for two variables with the same property the later one in
// the environment wins (ub builds a map from os.Environ).
func renderUB(env []string) (string, map[string]string) {
	vals, names := map[string]string{}, map[string]string{}
	byName := map[string]string{}
	var envOrder []string
	for _, kv := range env {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			continue
		}
		if _, seen := byName[k]; !seen {
			envOrder = append(envOrder, k)
		}
		byName[k] = v
	}
	for _, k := range envOrder {
		name, ok := PropertyNameUB(k)
		if !ok {
			continue
		}
		vals[name], names[name] = byName[k], k
	}
	order := make([]string, 0, len(vals))
	for k := range vals {
		order = append(order, k)
	}
	sort.Strings(order)
	return renderLines(order, vals), names
}

func renderLines(order []string, vals map[string]string) string {
	var b strings.Builder
	for _, name := range order {
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(vals[name])
		b.WriteByte('\n')
	}
	return b.String()
}

// loadPropertiesOnly is the apache and properties flavours: the file is
// the only source; CONNECT_* variables are listed as ignored.
func loadPropertiesOnly(o LoadOptions, env []string) (*Loaded, error) {
	l := &Loaded{Flavour: o.Flavour, Props: Properties{}, Sources: Sources{}, WorkerEnviron: env}
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, EnvPrefix) {
			l.Ignored = append(l.Ignored, k)
		}
	}
	if o.File == "" {
		return nil, &Error{Setting: "CONNECT_INIT_WORKER_CONFIG", Property: "-",
			Problem: fmt.Sprintf("is not set, and the %s image reads worker settings only from a properties file (CONNECT_* variables are not worker settings there)", o.Flavour),
			Fix:     "set CONNECT_INIT_WORKER_CONFIG to the file the worker command reads, e.g. /etc/kafka-connect/worker.properties"}
	}
	if err := readBase(o.File, "CONNECT_INIT_WORKER_CONFIG", l.Props, l.Sources); err != nil {
		return nil, err
	}
	l.BaseFile = o.File
	return l, nil
}

// defaultHostAddress is Debezium's `ip addr | grep 'BROADCAST' -A2 | tail
// -n1 | awk '{print $2}' | cut -f1 -d'/'`: the first address of the last
// broadcast interface.
func defaultHostAddress() (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	addr := ""
	for _, i := range ifs {
		if i.Flags&net.FlagBroadcast == 0 {
			continue
		}
		as, err := i.Addrs()
		if err != nil || len(as) == 0 {
			continue
		}
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				addr = n.IP.String()
				break
			}
		}
	}
	if addr == "" {
		return "", errors.New("no broadcast interface with an IPv4 address")
	}
	return addr, nil
}

// debeziumBase finds the file Debezium's entrypoint edits: $KAFKA_HOME/config
// /connect-distributed.properties, copied from config.orig on first start.
func debeziumBase(o LoadOptions, env []string) (string, string) {
	if o.File != "" {
		return o.File, "CONNECT_INIT_WORKER_CONFIG"
	}
	home, _ := LookupEnv(env, "KAFKA_HOME")
	if home == "" {
		home = DebeziumKafkaHome
	}
	root := o.Root
	if root == "" {
		root = "/"
	}
	p := filepath.Join(root, home, "config", "connect-distributed.properties")
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join(root, home, "config.orig", "connect-distributed.properties")
	}
	return p, "KAFKA_HOME"
}
