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
func loadDebezium(o LoadOptions, env []string) (*Loaded, error) {
	vars := map[string]string{}
	var order []string
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, seen := vars[k]; !seen {
			order = append(order, k)
		}
		vars[k] = v
	}
	userSet := func(k string) bool { _, ok := vars[k]; return ok }
	origin := map[string]Source{}
	src := map[string]Source{} // of the unprefixed inputs
	for _, in := range debeziumInputs {
		if vars[in] != "" {
			src[in] = Source{Var: in}
		}
	}
	var warnings []string

	if vars["BOOTSTRAP_SERVERS"] == "" {
		var links []string
		linkVar := ""
		for _, k := range order {
			line := k + "=" + vars[k]
			for _, l := range strings.Split(line, "\n") {
				if strings.Contains(l, "PORT_9092_TCP=") {
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
		}
		if len(links) == 0 {
			fix := "set BOOTSTRAP_SERVERS to the brokers, e.g. kafka-1:9092,kafka-2:9092"
			if userSet("CONNECT_BOOTSTRAP_SERVERS") {
				fix += " (Debezium's entrypoint overwrites CONNECT_BOOTSTRAP_SERVERS with BOOTSTRAP_SERVERS)"
			}
			return nil, &Error{Setting: "BOOTSTRAP_SERVERS", Property: "bootstrap.servers",
				Problem: "is not set, so Debezium's entrypoint would point the worker at 0.0.0.0:9092", Fix: fix}
		}
		vars["BOOTSTRAP_SERVERS"] = strings.Join(links, ",")
		src["BOOTSTRAP_SERVERS"] = Source{Var: linkVar, Default: "Docker link variable, as Debezium's entrypoint reads it"}
	}
	hostAddr := func() (string, error) {
		if o.HostAddress != nil {
			return o.HostAddress()
		}
		return defaultHostAddress()
	}
	needHost := vars["HOST_NAME"] == "" && (vars["REST_HOST_NAME"] == "" || vars["ADVERTISED_HOST_NAME"] == "")
	if needHost {
		a, err := hostAddr()
		if err != nil {
			return nil, &Error{Setting: "ADVERTISED_HOST_NAME", Property: "rest.advertised.host.name",
				Problem: "is not set, and this container's address (Debezium's HOST_NAME fallback) cannot be found: " + err.Error(),
				Fix:     "set ADVERTISED_HOST_NAME to a name every worker can resolve"}
		}
		vars["HOST_NAME"] = a
		src["HOST_NAME"] = Source{Var: "HOST_NAME", Default: "Debezium entrypoint: this container's address " + a}
	}
	def := func(k, v string, s Source) {
		if vars[k] == "" {
			vars[k] = v
			src[k] = s
		}
	}
	hostSrc := src["HOST_NAME"]
	if hostSrc.Var == "" {
		hostSrc = Source{Var: "HOST_NAME"}
	}
	def("REST_PORT", "8083", Source{Var: "REST_PORT", Default: "Debezium entrypoint default 8083"})
	def("REST_HOST_NAME", vars["HOST_NAME"], hostSrc)
	def("ADVERTISED_PORT", "8083", Source{Var: "ADVERTISED_PORT", Default: "Debezium entrypoint default 8083"})
	def("ADVERTISED_HOST_NAME", vars["HOST_NAME"], hostSrc)
	def("GROUP_ID", "1", Source{Var: "GROUP_ID", Default: "Debezium entrypoint default 1"})
	def("OFFSET_FLUSH_INTERVAL_MS", "60000", Source{Var: "OFFSET_FLUSH_INTERVAL_MS", Default: "Debezium entrypoint default 60000"})
	def("OFFSET_FLUSH_TIMEOUT_MS", "5000", Source{Var: "OFFSET_FLUSH_TIMEOUT_MS", Default: "Debezium entrypoint default 5000"})
	def("SHUTDOWN_TIMEOUT", "10000", Source{Var: "SHUTDOWN_TIMEOUT", Default: "Debezium entrypoint default 10000"})
	def("KEY_CONVERTER", jsonConverter, Source{Var: "KEY_CONVERTER", Default: "Debezium entrypoint default"})
	def("VALUE_CONVERTER", jsonConverter, Source{Var: "VALUE_CONVERTER", Default: "Debezium entrypoint default"})

	setEnv := func(k, v string, s Source) {
		if _, seen := vars[k]; !seen {
			order = append(order, k)
		}
		vars[k] = v
		origin[k] = s
	}
	if reg := vars["APICURIO_REGISTRY"]; reg != "" {
		a := Source{Var: "APICURIO_REGISTRY", Default: "Debezium entrypoint"}
		vars["KEY_CONVERTER"] = "io.apicurio.registry.utils.converter.AvroConverter"
		vars["VALUE_CONVERTER"] = "io.apicurio.registry.utils.converter.AvroConverter"
		src["KEY_CONVERTER"], src["VALUE_CONVERTER"] = a, a
		for _, side := range []string{"KEY", "VALUE"} {
			setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_URL", reg, a)
			setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_AUTO_REGISTER", "true", a)
			setEnv("CONNECT_"+side+"_CONVERTER_APICURIO_REGISTRY_FIND_LATEST", "true", a)
		}
	}
	for _, e := range debeziumExports {
		if e.name == "CONNECT_STATUS_STORAGE_TOPIC" && vars[e.from] == "" {
			continue
		}
		if userSet(e.name) && vars[e.name] != vars[e.from] && origin[e.name].Var == "" {
			warnings = append(warnings, fmt.Sprintf("%s is overwritten by Debezium's entrypoint with %s", e.name, e.from))
		}
		s, ok := src[e.from]
		if !ok {
			s = Source{Var: e.from}
		}
		setEnv(e.name, vars[e.from], s)
	}
	if cur, found := vars["CONNECT_PLUGIN_PATH"]; found && cur == "" {
		vars["CONNECT_PLUGIN_PATH"] = vars["KAFKA_CONNECT_PLUGINS_DIR"]
		origin["CONNECT_PLUGIN_PATH"] = Source{Var: "KAFKA_CONNECT_PLUGINS_DIR", Default: "Debezium entrypoint"}
	}
	for _, in := range []string{"CONFIG_STORAGE_TOPIC", "OFFSET_STORAGE_TOPIC"} {
		if vars["CONNECT_"+in] == "" {
			fix := "set " + in + " to the topic's name"
			if userSet("CONNECT_" + in) {
				fix += " (Debezium's entrypoint overwrites CONNECT_" + in + " with " + in + ")"
			}
			prop, _ := PropertyNameDebezium("CONNECT_" + in)
			return nil, &Error{Setting: in, Property: prop, Problem: "is not set, and Debezium's entrypoint requires it (the container would exit)", Fix: fix}
		}
	}
	if vars["CONNECT_LOG4J_LOGGERS"] != "" {
		delete(vars, "CONNECT_LOG4J_LOGGERS")
	}

	base, chosenBy := debeziumBase(o, env)
	text, err := readText(base, chosenBy)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	lineSrc := make([]Source, len(lines))
	for i := range lines {
		lineSrc[i] = Source{File: base, Line: i + 1}
	}
	var worker []string
	for _, k := range order {
		v, ok := vars[k]
		if !ok {
			continue
		}
		worker = append(worker, k+"="+v)
		if !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		s, ok := origin[k]
		if !ok {
			s = Source{Var: k}
		}
		for _, l := range strings.Split(k+"="+v, "\n") {
			l = strings.Trim(l, " \t")
			if !strings.HasPrefix(l, EnvPrefix) {
				continue
			}
			name, value := l, l
			if i := strings.IndexByte(l, '='); i >= 0 {
				name, value = l[len(EnvPrefix):i], l[i+1:]
			}
			prop := debeziumTr(name)
			re, err := regexp.Compile("^(|#)(" + ereName(prop) + ")=(.*)$")
			if err != nil {
				return nil, &Error{Setting: k, Property: prop, Problem: "has a name Debezium's entrypoint cannot use as a pattern", Fix: "rename the variable"}
			}
			hit := false
			for i, line := range lines {
				m := re.FindStringSubmatchIndex(line)
				if m == nil {
					continue
				}
				if !hit && (strings.Contains(value, "@") || strings.Contains(prop, "@")) {
					return nil, &Error{Setting: k, Property: prop, Problem: "contains '@', which Debezium's entrypoint cannot write (its sed command fails and the container exits)",
						Fix: "avoid '@' here, e.g. with a config provider: ${file:/path:key}"}
				}
				hit = true
				lines[i] = line[m[4]:m[5]] + "=" + sedReplacement(value, line, m)
				lineSrc[i] = s
			}
			if !hit {
				lines = append(lines, prop+"="+value)
				lineSrc = append(lineSrc, s)
			}
		}
	}
	rendered := strings.Join(lines, "\n") + "\n"
	p, at, err := ParseLines([]byte(rendered))
	if err != nil {
		return nil, &Error{Setting: chosenBy, Property: "-", Problem: fmt.Sprintf("the worker file Debezium's entrypoint writes cannot be read by Java: %v", err), Fix: `write a literal backslash as \\`}
	}
	l := &Loaded{Flavour: Debezium, Props: p, Sources: Sources{}, WorkerEnviron: worker, BaseFile: base}
	for k := range p {
		if n := at[k]; n >= 1 && n <= len(lineSrc) {
			l.Sources[k] = lineSrc[n-1]
		}
	}
	l.Ignored = warnings
	return l, nil
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
