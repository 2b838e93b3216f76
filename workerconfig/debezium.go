package workerconfig

import (
	"fmt"
	"regexp"
	"strings"
)

// debeziumInputs are the unprefixed variables Debezium's entrypoint turns
// into worker properties, by property.
var debeziumInputs = map[string]string{
	"bootstrap.servers":                 "BOOTSTRAP_SERVERS",
	"group.id":                          "GROUP_ID",
	"config.storage.topic":              "CONFIG_STORAGE_TOPIC",
	"offset.storage.topic":              "OFFSET_STORAGE_TOPIC",
	"status.storage.topic":              "STATUS_STORAGE_TOPIC",
	"rest.advertised.host.name":         "ADVERTISED_HOST_NAME",
	"rest.advertised.port":              "ADVERTISED_PORT",
	"rest.port":                         "REST_PORT",
	"rest.host.name":                    "REST_HOST_NAME",
	"key.converter":                     "KEY_CONVERTER",
	"value.converter":                   "VALUE_CONVERTER",
	"offset.flush.interval.ms":          "OFFSET_FLUSH_INTERVAL_MS",
	"offset.flush.timeout.ms":           "OFFSET_FLUSH_TIMEOUT_MS",
	"task.shutdown.graceful.timeout.ms": "SHUTDOWN_TIMEOUT",
}

// debeziumExport is one `export CONNECT_X=$Y` of the entrypoint.
type debeziumExport struct{ name, from string }

// debeziumExports are the entrypoint's exports, in its order. Each
// overwrites a CONNECT_* variable the user may have set.
var debeziumExports = []debeziumExport{
	{"CONNECT_REST_ADVERTISED_PORT", "ADVERTISED_PORT"},
	{"CONNECT_REST_ADVERTISED_HOST_NAME", "ADVERTISED_HOST_NAME"},
	{"CONNECT_REST_PORT", "REST_PORT"},
	{"CONNECT_REST_HOST_NAME", "REST_HOST_NAME"},
	{"CONNECT_BOOTSTRAP_SERVERS", "BOOTSTRAP_SERVERS"},
	{"CONNECT_GROUP_ID", "GROUP_ID"},
	{"CONNECT_CONFIG_STORAGE_TOPIC", "CONFIG_STORAGE_TOPIC"},
	{"CONNECT_OFFSET_STORAGE_TOPIC", "OFFSET_STORAGE_TOPIC"},
	{"CONNECT_STATUS_STORAGE_TOPIC", "STATUS_STORAGE_TOPIC"}, // only when set
	{"CONNECT_KEY_CONVERTER", "KEY_CONVERTER"},
	{"CONNECT_VALUE_CONVERTER", "VALUE_CONVERTER"},
	{"CONNECT_TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS", "SHUTDOWN_TIMEOUT"},
	{"CONNECT_OFFSET_FLUSH_INTERVAL_MS", "OFFSET_FLUSH_INTERVAL_MS"},
	{"CONNECT_OFFSET_FLUSH_TIMEOUT_MS", "OFFSET_FLUSH_TIMEOUT_MS"},
}

const jsonConverter = "org.apache.kafka.connect.json.JsonConverter"

// loadDebezium reproduces debezium/connect-base's /docker-entrypoint.sh
// `start`: its defaults for the unprefixed variables (GROUP_ID=1,
// ADVERTISED_HOST_NAME=$HOST_NAME, the container's address...), the
// exports that overwrite CONNECT_*, its required variables, then its
// edit of Kafka's connect-distributed.properties: for each CONNECT_*
// variable (name after the prefix lower-cased, "_" -> "."), a line
// "(#)name=" is replaced by sed (the name is a regular expression, the
// value a sed replacement), else "name=value" is appended. Values come
// through `env | while read -r`, which drops leading and trailing blanks of
// each line and splits values at newlines.
//
// Each step below is one stanza of the script, in the script's order.
func loadDebezium(o LoadOptions, env []string) (*Loaded, error) {
	sh := newDebeziumShell(env)
	if err := sh.linkBootstrap(); err != nil {
		return nil, err
	}
	if err := sh.hostName(o); err != nil {
		return nil, err
	}
	sh.defaults()
	sh.apicurio()
	sh.exports()
	sh.pluginPath()
	if err := sh.requireTopics(); err != nil {
		return nil, err
	}
	if sh.vars["CONNECT_LOG4J_LOGGERS"] != "" {
		delete(sh.vars, "CONNECT_LOG4J_LOGGERS") // the script spends it on log4j and unsets it: no worker property
	}

	base, chosenBy := debeziumBase(o, env)
	f, err := readDebeziumFile(base, chosenBy)
	if err != nil {
		return nil, err
	}
	worker, err := sh.edit(f)
	if err != nil {
		return nil, err
	}
	p, at, err := ParseLines([]byte(strings.Join(f.lines, "\n") + "\n"))
	if err != nil {
		return nil, &Error{Setting: chosenBy, Property: "-", Problem: fmt.Sprintf("the worker file Debezium's entrypoint writes cannot be read by Java: %v", err), Fix: `write a literal backslash as \\`}
	}
	l := &Loaded{Flavour: Debezium, Props: p, Sources: Sources{}, WorkerEnviron: worker, BaseFile: base}
	for k := range p {
		if n := at[k]; n >= 1 && n <= len(f.src) {
			l.Sources[k] = f.src[n-1]
		}
	}
	l.Ignored = sh.warnings
	return l, nil
}

// debeziumShell is the entrypoint's environment while its script runs:
// the steps of loadDebezium change it as the script's stanzas would, and
// remember where each value came from so errors and `config` can name the
// variable the user set.
type debeziumShell struct {
	vars     map[string]string
	order    []string          // of vars, as `env` lists them: first set first
	origin   map[string]Source // of the CONNECT_* variables the script sets
	src      map[string]Source // of the unprefixed inputs
	warnings []string
}

// newDebeziumShell reads the environment the script starts with; a name
// set twice keeps its first place and its last value, as a shell would.
func newDebeziumShell(env []string) *debeziumShell {
	sh := &debeziumShell{vars: map[string]string{}, origin: map[string]Source{}, src: map[string]Source{}}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, seen := sh.vars[k]; !seen {
			sh.order = append(sh.order, k)
		}
		sh.vars[k] = v
	}
	for _, in := range debeziumInputs {
		if sh.vars[in] != "" {
			sh.src[in] = Source{Var: in}
		}
	}
	return sh
}

// userSet reports whether k was in the environment (even empty), which
// is what decides whether an error mentions the overwrite of a CONNECT_*
// variable.
func (sh *debeziumShell) userSet(k string) bool { _, ok := sh.vars[k]; return ok }

// setEnv is the script's `export k=v`, noting which input v came from.
func (sh *debeziumShell) setEnv(k, v string, s Source) {
	if _, seen := sh.vars[k]; !seen {
		sh.order = append(sh.order, k)
	}
	sh.vars[k] = v
	sh.origin[k] = s
}

// linkBootstrap is the script's fallback for an unset BOOTSTRAP_SERVERS:
// the brokers of Docker's legacy links (*PORT_9092_TCP=tcp://host:port).
// Without links the script would point the worker at 0.0.0.0:9092, so
// that is refused here with the variable to set.
func (sh *debeziumShell) linkBootstrap() error {
	if sh.vars["BOOTSTRAP_SERVERS"] != "" {
		return nil
	}
	var links []string
	linkVar := ""
	for _, k := range sh.order {
		for _, l := range strings.Split(k+"="+sh.vars[k], "\n") {
			if !strings.Contains(l, "PORT_9092_TCP=") {
				continue
			}
			if i := strings.LastIndex(l, "tcp://"); i >= 0 {
				l = l[i+len("tcp://"):]
			}
			if len(links) == 0 || links[len(links)-1] != l {
				links = append(links, l)
			}
			if linkVar == "" {
				linkVar = k
			}
		}
	}
	if len(links) == 0 {
		fix := "set BOOTSTRAP_SERVERS to the brokers, e.g. kafka-1:9092,kafka-2:9092"
		if sh.userSet("CONNECT_BOOTSTRAP_SERVERS") {
			fix += " (Debezium's entrypoint overwrites CONNECT_BOOTSTRAP_SERVERS with BOOTSTRAP_SERVERS)"
		}
		return &Error{Setting: "BOOTSTRAP_SERVERS", Property: "bootstrap.servers",
			Problem: "is not set, so Debezium's entrypoint would point the worker at 0.0.0.0:9092", Fix: fix}
	}
	sh.vars["BOOTSTRAP_SERVERS"] = strings.Join(links, ",")
	sh.src["BOOTSTRAP_SERVERS"] = Source{Var: linkVar, Default: "Docker link variable, as Debezium's entrypoint reads it"}
	return nil
}

// hostName is the script's HOST_NAME fallback, the container's own
// address; it is looked up only when a host name is still needed, so a
// container without a usable interface fails only if it would matter.
func (sh *debeziumShell) hostName(o LoadOptions) error {
	if sh.vars["HOST_NAME"] != "" || (sh.vars["REST_HOST_NAME"] != "" && sh.vars["ADVERTISED_HOST_NAME"] != "") {
		return nil
	}
	hostAddr := defaultHostAddress
	if o.HostAddress != nil {
		hostAddr = o.HostAddress
	}
	a, err := hostAddr()
	if err != nil {
		return &Error{Setting: "ADVERTISED_HOST_NAME", Property: "rest.advertised.host.name",
			Problem: "is not set, and this container's address (Debezium's HOST_NAME fallback) cannot be found: " + err.Error(),
			Fix:     "set ADVERTISED_HOST_NAME to a name every worker can resolve"}
	}
	sh.vars["HOST_NAME"] = a
	sh.src["HOST_NAME"] = Source{Var: "HOST_NAME", Default: "Debezium entrypoint: this container's address " + a}
	return nil
}

// defaults are the script's `: ${X:=default}` lines for the unprefixed
// inputs; an empty value counts as unset there too.
func (sh *debeziumShell) defaults() {
	def := func(k, v string, s Source) {
		if sh.vars[k] == "" {
			sh.vars[k] = v
			sh.src[k] = s
		}
	}
	hostSrc := sh.src["HOST_NAME"]
	if hostSrc.Var == "" {
		hostSrc = Source{Var: "HOST_NAME"}
	}
	def("REST_PORT", "8083", Source{Var: "REST_PORT", Default: "Debezium entrypoint default 8083"})
	def("REST_HOST_NAME", sh.vars["HOST_NAME"], hostSrc)
	def("ADVERTISED_PORT", "8083", Source{Var: "ADVERTISED_PORT", Default: "Debezium entrypoint default 8083"})
	def("ADVERTISED_HOST_NAME", sh.vars["HOST_NAME"], hostSrc)
	def("GROUP_ID", "1", Source{Var: "GROUP_ID", Default: "Debezium entrypoint default 1"})
	def("OFFSET_FLUSH_INTERVAL_MS", "60000", Source{Var: "OFFSET_FLUSH_INTERVAL_MS", Default: "Debezium entrypoint default 60000"})
	def("OFFSET_FLUSH_TIMEOUT_MS", "5000", Source{Var: "OFFSET_FLUSH_TIMEOUT_MS", Default: "Debezium entrypoint default 5000"})
	def("SHUTDOWN_TIMEOUT", "10000", Source{Var: "SHUTDOWN_TIMEOUT", Default: "Debezium entrypoint default 10000"})
	def("KEY_CONVERTER", jsonConverter, Source{Var: "KEY_CONVERTER", Default: "Debezium entrypoint default"})
	def("VALUE_CONVERTER", jsonConverter, Source{Var: "VALUE_CONVERTER", Default: "Debezium entrypoint default"})
}

// apicurio is the script's APICURIO_REGISTRY stanza: both converters
// become Apicurio's Avro converter, pointed at the registry.
func (sh *debeziumShell) apicurio() {
	reg := sh.vars["APICURIO_REGISTRY"]
	if reg == "" {
		return
	}
	a := Source{Var: "APICURIO_REGISTRY", Default: "Debezium entrypoint"}
	sh.vars["KEY_CONVERTER"] = "io.apicurio.registry.utils.converter.AvroConverter"
	sh.vars["VALUE_CONVERTER"] = "io.apicurio.registry.utils.converter.AvroConverter"
	sh.src["KEY_CONVERTER"], sh.src["VALUE_CONVERTER"] = a, a
	for _, side := range []string{"KEY", "VALUE"} {
		sh.setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_URL", reg, a)
		sh.setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_AUTO_REGISTER", "true", a)
		sh.setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_FIND_LATEST", "true", a)
	}
}

// exports are the script's `export CONNECT_X=$Y`: each overwrites what
// the user set, which is worth a warning because the user's value is lost
// without a word from the image.
func (sh *debeziumShell) exports() {
	for _, e := range debeziumExports {
		if e.name == "CONNECT_STATUS_STORAGE_TOPIC" && sh.vars[e.from] == "" {
			continue
		}
		if sh.userSet(e.name) && sh.vars[e.name] != sh.vars[e.from] && sh.origin[e.name].Var == "" {
			sh.warnings = append(sh.warnings, fmt.Sprintf("%s is overwritten by Debezium's entrypoint with %s", e.name, e.from))
		}
		s, ok := sh.src[e.from]
		if !ok {
			s = Source{Var: e.from}
		}
		sh.setEnv(e.name, sh.vars[e.from], s)
	}
}

// pluginPath is the script's default for a CONNECT_PLUGIN_PATH that is
// set but empty: the image's plugin directory.
func (sh *debeziumShell) pluginPath() {
	if cur, found := sh.vars["CONNECT_PLUGIN_PATH"]; found && cur == "" {
		sh.vars["CONNECT_PLUGIN_PATH"] = sh.vars["KAFKA_CONNECT_PLUGINS_DIR"]
		sh.origin["CONNECT_PLUGIN_PATH"] = Source{Var: "KAFKA_CONNECT_PLUGINS_DIR", Default: "Debezium entrypoint"}
	}
}

// requireTopics is the script's check of the variables it cannot start
// without; the container would exit, so the error names the unprefixed
// variable the user must set (the CONNECT_ one is overwritten).
func (sh *debeziumShell) requireTopics() error {
	for _, in := range []string{"CONFIG_STORAGE_TOPIC", "OFFSET_STORAGE_TOPIC"} {
		if sh.vars["CONNECT_"+in] != "" {
			continue
		}
		fix := "set " + in + " to the topic's name"
		if sh.userSet("CONNECT_" + in) {
			fix += " (Debezium's entrypoint overwrites CONNECT_" + in + " with " + in + ")"
		}
		prop, _ := PropertyNameDebezium("CONNECT_" + in)
		return &Error{Setting: in, Property: prop, Problem: "is not set, and Debezium's entrypoint requires it (the container would exit)", Fix: fix}
	}
	return nil
}

// debeziumFile is connect-distributed.properties as the script edits it,
// with the source of each line: the file's own line, or the variable
// whose sed or append wrote it.
type debeziumFile struct {
	lines []string
	src   []Source
}

// readDebeziumFile reads the file the script starts from; every line is
// the file's own until a variable rewrites it.
func readDebeziumFile(base, chosenBy string) (*debeziumFile, error) {
	text, err := readText(base, chosenBy)
	if err != nil {
		return nil, err
	}
	f := &debeziumFile{}
	if text != "" {
		f.lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	f.src = make([]Source, len(f.lines))
	for i := range f.lines {
		f.src[i] = Source{File: base, Line: i + 1}
	}
	return f, nil
}

// edit is the script's `env | while read -r` loop over the environment:
// each CONNECT_* line edits f (see writeLine). It returns the
// environment the worker is started with, in `env`'s order.
func (sh *debeziumShell) edit(f *debeziumFile) ([]string, error) {
	var worker []string
	for _, k := range sh.order {
		v, ok := sh.vars[k]
		if !ok {
			continue
		}
		worker = append(worker, k+"="+v)
		if !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		s, ok := sh.origin[k]
		if !ok {
			s = Source{Var: k}
		}
		// read -r sees one line at a time: a value with newlines is
		// several lines, and only those that start with CONNECT_ count.
		for _, l := range strings.Split(k+"="+v, "\n") {
			l = strings.Trim(l, " \t")
			if !strings.HasPrefix(l, EnvPrefix) {
				continue
			}
			if err := f.writeLine(k, l, s); err != nil {
				return nil, err
			}
		}
	}
	return worker, nil
}

// writeLine is one pass of the loop for a line "CONNECT_name=value" read
// from variable k: sed replaces every line "(#)prop=..." with
// "prop=value", else the line is appended. What makes sed fail (a name
// that is no pattern; an '@', sed's delimiter there, when a line is
// rewritten) is refused here, since the container would exit.
func (f *debeziumFile) writeLine(k, l string, s Source) error {
	name, value := l, l
	if i := strings.IndexByte(l, '='); i >= 0 {
		name, value = l[len(EnvPrefix):i], l[i+1:]
	}
	prop := debeziumTr(name)
	re, err := regexp.Compile("^(|#)(" + ereName(prop) + ")=(.*)$")
	if err != nil {
		return &Error{Setting: k, Property: prop, Problem: "has a name Debezium's entrypoint cannot use as a pattern", Fix: "rename the variable"}
	}
	hit := false
	for i, line := range f.lines {
		m := re.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		if !hit && (strings.Contains(value, "@") || strings.Contains(prop, "@")) {
			return &Error{Setting: k, Property: prop, Problem: "contains '@', which Debezium's entrypoint cannot write (its sed command fails and the container exits)",
				Fix: "avoid '@' here, e.g. with a config provider: ${file:/path:key}"}
		}
		hit = true
		f.lines[i] = line[m[4]:m[5]] + "=" + sedReplacement(value, line, m)
		f.src[i] = s
	}
	if !hit {
		f.lines = append(f.lines, prop+"="+value)
		f.src = append(f.src, s)
	}
	return nil
}

// RenderedWarnings are notes for the log: for Debezium, the CONNECT_*
// variables its entrypoint overwrites; for apache and properties, the
// CONNECT_* variables that are not worker settings there.
func (l *Loaded) RenderedWarnings() []string { return l.Ignored }

func readText(path, setting string) (string, error) {
	data, err := readFileFor(path, setting)
	return string(data), err
}

// debeziumTr is `tr '[:upper:]' '[:lower:]' | tr _ .`.
func debeziumTr(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == '_':
			b[i] = '.'
		}
	}
	return string(b)
}

// ereName turns a property name into the extended regular expression the
// entrypoint builds from it: "." matches any character, the rest is taken
// literally (names of shell variables hold nothing else special).
func ereName(prop string) string {
	parts := strings.Split(prop, ".")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, ".")
}

// sedReplacement expands a GNU sed replacement: & is the whole match,
// \1..\9 the groups, \n a newline, \t a tab, \x any other character x.
func sedReplacement(repl, line string, m []int) string {
	group := func(n int) string {
		if 2*n+1 < len(m) && m[2*n] >= 0 {
			return line[m[2*n]:m[2*n+1]]
		}
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '&':
			b.WriteString(group(0))
		case c == '\\' && i+1 < len(repl):
			i++
			d := repl[i]
			switch {
			case d >= '0' && d <= '9':
				b.WriteString(group(int(d - '0')))
			case d == 'n':
				b.WriteByte('\n')
			case d == 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(d)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
