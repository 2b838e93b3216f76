package workerconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Flavour is the image connect-init runs in, which decides how the worker
// gets its settings: each image turns environment variables into the worker
// file by its own rule (or not at all), and connect-init must read the
// settings the way the worker it starts will.
type Flavour string

// The flavours connect-init knows.
const (
	// ConfluentDub is cp-kafka-connect up to CP 8.0: the Python dub renders
	// CONNECT_* variables (env_to_props) into the worker file.
	ConfluentDub Flavour = "confluent-dub"
	// ConfluentUB is cp-kafka-connect from CP 8.1: the Go ub renders them
	// (envToProps), with its own name rule.
	ConfluentUB Flavour = "confluent-ub"
	// Debezium is debezium/connect: /docker-entrypoint.sh maps its own
	// unprefixed variables and CONNECT_* into Kafka's
	// connect-distributed.properties.
	Debezium Flavour = "debezium"
	// Apache is apache/kafka: the worker reads a properties file given on
	// its command line; no variable is a worker setting (Kubernetes service
	// links inject CONNECT_* variables into such pods).
	Apache Flavour = "apache"
	// PropertiesFile is any other image whose worker reads only a
	// properties file (CONNECT_INIT_WORKER_CONFIG).
	PropertiesFile Flavour = "properties"
)

// Flavours lists every flavour, for messages and CONNECT_INIT_IMAGE (a new
// slice at each call: no caller changes it for the others).
func Flavours() []Flavour {
	return []Flavour{ConfluentDub, ConfluentUB, Debezium, Apache, PropertiesFile}
}

// ParseFlavour reads a CONNECT_INIT_IMAGE value.
func ParseFlavour(s string) (Flavour, bool) {
	for _, f := range Flavours() {
		if strings.EqualFold(strings.TrimSpace(s), string(f)) {
			return f, true
		}
	}
	return "", false
}

// UsesEnv reports whether the flavour turns CONNECT_* variables into
// worker settings.
func (f Flavour) UsesEnv() bool { return f != Apache && f != PropertiesFile }

// Files the detection looks at, relative to the image root.
const (
	confluentTemplate  = "etc/confluent/docker/kafka-connect.properties.template"
	debeziumEntrypoint = "docker-entrypoint.sh"
	apacheConnectStart = "opt/kafka/bin/connect-distributed.sh"
	// DebeziumKafkaHome is KAFKA_HOME in Debezium's images.
	DebeziumKafkaHome = "/kafka"
)

// Detection is what Detect found.
type Detection struct {
	Flavour Flavour
	// Evidence names the file (and content) that decided, or says that
	// nothing was found.
	Evidence string
	// Found is false when no image file matched and the default was taken.
	Found bool
}

// Detect looks at the image's own files under root ("" is "/") to find its
// flavour: Confluent's worker template (its content says which renderer:
// env_to_props is dub, envToProps is ub), Debezium's /docker-entrypoint.sh
// (it maps OFFSET_STORAGE_TOPIC into connect-distributed.properties), or
// Kafka's own /opt/kafka/bin/connect-distributed.sh. With none of them it
// returns ConfluentDub, the rule connect-init always followed, with Found
// false so that the caller can say so.
func Detect(root string) Detection {
	if root == "" {
		root = "/"
	}
	if data, err := os.ReadFile(filepath.Join(root, confluentTemplate)); err == nil {
		p := "/" + confluentTemplate
		switch {
		case bytes.Contains(data, []byte("envToProps")):
			return Detection{ConfluentUB, p + " uses envToProps (Go ub)", true}
		case bytes.Contains(data, []byte("env_to_props")):
			return Detection{ConfluentDub, p + " uses env_to_props (Python dub)", true}
		}
	}
	if data, err := os.ReadFile(filepath.Join(root, debeziumEntrypoint)); err == nil &&
		bytes.Contains(data, []byte("OFFSET_STORAGE_TOPIC")) && bytes.Contains(data, []byte("connect-distributed.properties")) {
		return Detection{Debezium, "/" + debeziumEntrypoint + " maps OFFSET_STORAGE_TOPIC into connect-distributed.properties", true}
	}
	if _, err := os.Stat(filepath.Join(root, apacheConnectStart)); err == nil {
		return Detection{Apache, "/" + apacheConnectStart + " exists and no image renders CONNECT_* variables", true}
	}
	return Detection{ConfluentDub, "no Confluent, Debezium or Apache image files found; following Confluent's dub rule", false}
}

// Source says where a worker property's value comes from, so that every
// message names what the user set: a variable, a file and line, or a
// default of the image.
type Source struct {
	// Var is the environment variable the user set (or would set).
	Var string `json:"variable,omitempty"`
	// File and Line locate the value in a properties file.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Default describes an image default ("Debezium entrypoint: GROUP_ID=1").
	Default string `json:"default,omitempty"`
}

// String is the source as messages show it.
func (s Source) String() string {
	switch {
	case s.Var != "" && s.Default != "":
		return s.Var + " (" + s.Default + ")"
	case s.Var != "":
		return s.Var
	case s.File != "":
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.Default != "":
		return s.Default
	}
	return "unknown"
}

// Sources maps property names to their sources.
type Sources map[string]Source

// Setting is what a message about prop should name: its source, or, when
// the property is not set at all, the variable (or file) that would set it
// under flavour f.
func (s Sources) Setting(f Flavour, prop, file string) string {
	if src, ok := s[prop]; ok {
		if src.Var != "" {
			return src.Var
		}
		if src.File != "" {
			return fmt.Sprintf("%s:%d (%s)", src.File, src.Line, prop)
		}
		if src.Default != "" {
			return prop + " (" + src.Default + ")"
		}
	}
	if f == Debezium {
		if v, ok := debeziumInputs[prop]; ok {
			return v
		}
	}
	if v := EnvNameFor(f, prop); v != "" {
		return v
	}
	if file == "" {
		file = "CONNECT_INIT_WORKER_CONFIG"
	}
	return file + " (" + prop + ")"
}
