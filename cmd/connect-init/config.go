package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// configDoc is `connect-init config --json`: what the settings gate read,
// and from where. Its shape is part of the external contract.
type configDoc struct {
	// Flavour is the image flavour the worker settings were read with.
	Flavour struct {
		Name     string `json:"name"`
		Detected bool   `json:"detected"`
		Evidence string `json:"evidence"`
	} `json:"flavour"`
	// BaseFile is the properties file the worker settings start from.
	BaseFile string `json:"base_file,omitempty"`
	// Worker is every worker property as the worker will see it, sorted by
	// key, sensitive values replaced by [hidden].
	Worker []configEntry `json:"worker"`
	// Settings are connect-init's own settings.
	Settings []configEntry `json:"settings"`
	// Derived is what the gates will use.
	Derived *derivedDoc `json:"derived,omitempty"`
	Notes   []string    `json:"notes,omitempty"`
	// Error is the settings gate's verdict ("" when every check passed).
	Error string `json:"error,omitempty"`
}

type configEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

type derivedDoc struct {
	GroupID          string   `json:"group_id"`
	BootstrapServers []string `json:"bootstrap_servers"`
	ExpectedBrokers  int      `json:"expected_brokers"`
	AdvertisedURL    string   `json:"advertised_url"`
	Topics           []struct {
		Role              string `json:"role"`
		Name              string `json:"name"`
		Partitions        int32  `json:"partitions"`
		ReplicationFactor int16  `json:"replication_factor"`
	} `json:"topics"`
	LockTopic string `json:"lock_topic"`
	RESTTLS   bool   `json:"rest_https_server"`
}

// showConfig is `connect-init config [--json]`: the effective worker
// configuration with each value's source, the image flavour, connect-init's
// own settings and what the gates derive from them. It connects to nothing.
// Exit 0 when the settings gate passes, 2 (after printing what it could
// read, and the error) when it does not.
func (c *cli) showConfig(s settings.Settings, log *slog.Logger, asJSON bool) int {
	stdout := c.stdout
	cfg, err := c.options.Inspect(c.env, s)
	startup.LogFlavour(log, cfg)
	doc := buildConfigDoc(c.env, s, cfg, err)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(doc); werr != nil {
			log.Error("write the configuration", "error", werr.Error())
			return startup.ExitGate
		}
	} else {
		writeConfigText(stdout, doc)
	}
	if err != nil {
		logConfigError(log, err)
		return startup.ExitConfig
	}
	return startup.ExitOK
}

func buildConfigDoc(env []string, s settings.Settings, cfg *settings.Config, err error) configDoc {
	var doc configDoc
	doc.Flavour.Name = string(cfg.Flavour)
	doc.Flavour.Detected = cfg.Detection.Found
	doc.Flavour.Evidence = cfg.Detection.Evidence
	doc.BaseFile = cfg.BaseFile
	doc.Notes = cfg.Notes
	doc.Worker = []configEntry{}
	red := cfg.Worker.Redacted()
	for _, k := range cfg.Worker.Keys() {
		doc.Worker = append(doc.Worker, configEntry{Key: k, Value: red[k], Source: cfg.Sources[k].String()})
	}
	doc.Settings = ownSettings(env, s)
	if err != nil {
		doc.Error = err.Error()
		return doc
	}
	d := &derivedDoc{GroupID: cfg.GroupID, BootstrapServers: cfg.BootstrapServers, ExpectedBrokers: cfg.ExpectedBrokers,
		AdvertisedURL: cfg.AdvertisedURL, LockTopic: cfg.LockTopic, RESTTLS: cfg.RESTServerTLS != nil}
	for _, t := range cfg.Topics {
		d.Topics = append(d.Topics, struct {
			Role              string `json:"role"`
			Name              string `json:"name"`
			Partitions        int32  `json:"partitions"`
			ReplicationFactor int16  `json:"replication_factor"`
		}{t.Role, t.Name, t.Partitions, t.ReplicationFactor})
	}
	doc.Derived = d
	return doc
}

// ownSettings lists connect-init's settings with their effective values
// and where each came from: a flag, its variable, or the default.
func ownSettings(env []string, s settings.Settings) []configEntry {
	values := map[string]string{
		"CONNECT_INIT_TIMEOUT":               s.Timeout.String(),
		"CONNECT_INIT_EXPECTED_BROKERS":      fmt.Sprint(s.ExpectedBrokers),
		"CONNECT_INIT_WORKER_CONFIG":         s.WorkerConfig,
		"CONNECT_INIT_LOCK":                  fmt.Sprint(s.Lock),
		"CONNECT_INIT_LOCK_TOPIC":            s.LockTopic,
		"CONNECT_INIT_LOCK_LEASE":            s.LockLease.String(),
		"CONNECT_INIT_LOCK_PERMITS":          fmt.Sprint(s.LockPermits),
		"CONNECT_INIT_PEERS":                 strings.Join(s.Peers, ","),
		"CONNECT_INIT_PEER_CHECK":            s.PeerCheck,
		"CONNECT_INIT_PLUGIN_CHECK":          s.PluginCheck,
		"CONNECT_INIT_STRICT":                fmt.Sprint(s.Strict),
		"CONNECT_INIT_LOG_FORMAT":            s.LogFormat,
		"CONNECT_INIT_LOG_LEVEL":             s.LogLevel,
		"CONNECT_INIT_IMAGE":                 s.Image,
		"CONNECT_INIT_CONNECTORS_DIR":        s.ConnectorsDir,
		"CONNECT_INIT_APPLY_WATCH":           fmt.Sprint(s.ApplyWatch),
		"CONNECT_INIT_APPLY_WATCH_INTERVAL":  s.ApplyWatchInterval.String(),
		"CONNECT_INIT_APPLY_RESTART_BACKOFF": s.ApplyRestartBackoff.String(),
	}
	set := map[string]bool{}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); strings.TrimSpace(v) != "" {
			set[k] = true
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]configEntry, 0, len(keys))
	for _, k := range keys {
		src := "default"
		switch {
		case s.Flags[k] != "":
			src = s.Flags[k]
		case set[k]:
			src = k
		case k == "CONNECT_INIT_TIMEOUT" && set["CONNECT_CUB_KAFKA_TIMEOUT"]:
			src = "CONNECT_CUB_KAFKA_TIMEOUT"
		}
		out = append(out, configEntry{Key: k, Value: values[k], Source: src})
	}
	return out
}

func writeConfigText(w io.Writer, doc configDoc) {
	how := "detected"
	switch {
	case strings.HasPrefix(doc.Flavour.Evidence, "CONNECT_INIT_IMAGE=") || strings.HasPrefix(doc.Flavour.Evidence, "--image="):
		how = "set"
	case !doc.Flavour.Detected:
		how = "not detected"
	}
	fmt.Fprintf(w, "image flavour: %s (%s: %s)\n", doc.Flavour.Name, how, doc.Flavour.Evidence)
	if doc.BaseFile != "" {
		fmt.Fprintf(w, "base file: %s\n", doc.BaseFile)
	}
	fmt.Fprintln(w, "\nworker configuration, as the worker will see it:")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range doc.Worker {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Key, tableValue(e.Value), e.Source)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nconnect-init settings:")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, e := range doc.Settings {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Key, tableValue(e.Value), e.Source)
	}
	tw.Flush()
	if d := doc.Derived; d != nil {
		fmt.Fprintln(w, "\nderived:")
		fmt.Fprintf(w, "  group.id %s, bootstrap %s, expected brokers %d\n", d.GroupID, strings.Join(d.BootstrapServers, ","), d.ExpectedBrokers)
		fmt.Fprintf(w, "  advertised URL %s\n", d.AdvertisedURL)
		for _, t := range d.Topics {
			fmt.Fprintf(w, "  %s topic %s: %d partitions, replication factor %d\n", t.Role, t.Name, t.Partitions, t.ReplicationFactor)
		}
		fmt.Fprintf(w, "  lock topic %s\n", d.LockTopic)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if doc.Error != "" {
		fmt.Fprintf(w, "\nsettings gate: FAILED: %s\n", doc.Error)
	} else {
		fmt.Fprintln(w, "\nsettings gate: ok")
	}
}

// tableValue keeps a value with line breaks on one table row.
func tableValue(v string) string {
	if v == "" {
		return `""`
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(v)
}
