package plugins

import (
	"sort"
	"strings"
)

// Use is one plugin class a connector's configuration names: what the
// worker that runs the connector (or one of its tasks) must load.
type Use struct {
	// Connector is the connector's name.
	Connector string `json:"connector"`
	// Key is the configuration key that names the class
	// (connector.class, transforms.<alias>.type, value.converter, ...).
	Key string `json:"key"`
	// Kind is the plugin type the key asks for (KindConnector for
	// connector.class: a source or a sink).
	Kind Kind `json:"kind"`
	// Class is the value as written: a class name or one of Connect's
	// aliases (FileStreamSource, Filter, JsonConverter...).
	Class string `json:"class"`
	// Version is the KIP-891 version requirement set beside it
	// (connector.plugin.version, <prefix>.plugin.version); "" for none.
	Version string `json:"version,omitempty"`
}

// UsedClasses returns every plugin class the connectors' configurations
// name, per connector (sorted by name) in a fixed order: connector.class
// (with connector.plugin.version), the key, value and header converter
// overrides (with key.converter.plugin.version etc.), then each
// transformation and predicate listed in transforms and predicates, in
// list order (with transforms.<alias>.plugin.version etc.). Aliases a list
// does not name are ignored, as Connect ignores them; an alias without a
// type is Connect's configuration error, not a plugin to load, and is left
// out.
func UsedClasses(configs map[string]map[string]string) []Use {
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	sort.Strings(names)
	var uses []Use
	for _, name := range names {
		uses = append(uses, connectorUses(name, configs[name])...)
	}
	return uses
}

// connectorUses lists one connector's classes.
func connectorUses(name string, cfg map[string]string) []Use {
	var uses []Use
	add := func(key string, kind Kind, versionKey string) {
		if v := strings.TrimSpace(cfg[key]); v != "" {
			uses = append(uses, Use{Connector: name, Key: key, Kind: kind, Class: v, Version: strings.TrimSpace(cfg[versionKey])})
		}
	}
	add("connector.class", KindConnector, "connector.plugin.version")
	add("key.converter", KindConverter, "key.converter.plugin.version")
	add("value.converter", KindConverter, "value.converter.plugin.version")
	add("header.converter", KindHeaderConverter, "header.converter.plugin.version")
	for _, list := range []struct {
		key  string
		kind Kind
	}{{"transforms", KindTransformation}, {"predicates", KindPredicate}} {
		for _, alias := range configList(cfg[list.key]) {
			prefix := list.key + "." + alias + "."
			add(prefix+"type", list.kind, prefix+"plugin.version")
		}
	}
	return uses
}

// configList splits a ConfigDef LIST value: comma-separated, blanks around
// the items ignored, an empty value an empty list.
func configList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Classes returns the distinct class names and aliases of uses, for
// Options.Want.
func Classes(uses []Use) []string {
	seen := map[string]bool{}
	var out []string
	for _, u := range uses {
		if !seen[u.Class] {
			seen[u.Class] = true
			out = append(out, u.Class)
		}
	}
	return out
}
