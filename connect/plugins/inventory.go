package plugins

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Discovery says how the worker finds a plugin, which decides whether it
// survives plugin.discovery=service_load and what the start costs.
type Discovery string

// The ways a worker finds a plugin.
const (
	// FoundManifest: a META-INF/services manifest lists it (ServiceLoader;
	// fast, and the only way under service_load).
	FoundManifest Discovery = "manifest"
	// FoundScan: no manifest lists it; only the reflective scan finds it
	// ("no manifest: slow scan"), which reads every class of its location.
	FoundScan Discovery = "scan"
	// FoundClasspath: not a discovered plugin, but a class on the worker's
	// classpath, which Connect's DelegatingClassLoader loads by its full
	// name in any mode (aliases do not reach it).
	FoundClasspath Discovery = "classpath"
)

// ClasspathLocation is the Location of the plugins on the worker's
// classpath (Connect's PluginSource prints "classpath").
const ClasspathLocation = "classpath"

// Plugin is one plugin class this worker can load (or, in
// Inventory.Invisible, could load but will not), with where it is and the
// version its jar states.
type Plugin struct {
	// Class is the binary class name (a.b.Outer$Inner), as REST reports it.
	Class string `json:"class"`
	// Kind is the plugin type; "" when a classpath class's hierarchy could
	// not be followed (it counts as any type).
	Kind Kind `json:"type"`
	// Version is what the jar says (see VersionFrom); "" unknown.
	Version string `json:"version,omitempty"`
	// VersionFrom says which part of the jar gave Version.
	VersionFrom VersionSource `json:"versionFrom,omitempty"`
	// Location is the plugin location (a plugin.path child), or
	// ClasspathLocation.
	Location string `json:"location"`
	// File is the jar or class directory holding the class.
	File string `json:"file"`
	// Found says how the worker finds it.
	Found Discovery `json:"found"`
}

// PathEntry is one plugin.path element and what it held, for "where this
// worker looked".
type PathEntry struct {
	// Path is the element, made absolute.
	Path string `json:"path"`
	// Locations counts its plugin locations (plugin directories, jars).
	Locations int `json:"locations"`
	// Problem is set when Connect skips the element (missing, unreadable).
	Problem string `json:"problem,omitempty"`
}

// Stats is what a scan read, for the benchmark and the logs.
type Stats struct {
	// Locations counts the plugin locations (the classpath not included).
	Locations int `json:"locations"`
	// Files counts the jars and class directories, classpath included.
	Files int `json:"files"`
	// Classes counts the classes indexed by name.
	Classes int `json:"classes"`
	// HeadersRead counts the class headers read (inflated).
	HeadersRead int `json:"headersRead"`
	// Duration is the scan's wall time.
	Duration time.Duration `json:"duration"`
}

// Inventory is what this worker can load, found the way its Connect will
// find it. It is plain data: the verdict reads it, tests build it.
type Inventory struct {
	// Member is set when the inventory is another member's REST answer
	// (PeerInventory): its advertised URL. Empty for this worker's scan.
	Member string `json:"member,omitempty"`
	// Discovery is the plugin.discovery the worker runs with.
	Discovery DiscoveryMode `json:"discovery"`
	// Plugins are the loadable plugins, sorted by class, type, location.
	Plugins []Plugin `json:"plugins"`
	// Invisible are plugins in a plugin location without a manifest under
	// plugin.discovery=service_load: there, but never loaded.
	Invisible []Plugin `json:"invisible,omitempty"`
	// PluginPath is each plugin.path element and what it held.
	PluginPath []PathEntry `json:"pluginPath"`
	// ClasspathFiles counts the jars and class directories of the
	// classpath.
	ClasspathFiles int `json:"classpathFiles"`
	// Problems are what the worker will skip or ignore, with why.
	Problems []Problem `json:"problems,omitempty"`
	// Stats is what the scan read.
	Stats Stats `json:"stats"`
}

// Lookup returns the plugins a configuration value (a class name, or one
// of Connect's aliases: the simple name, or the name without the type
// suffix such as FileStreamSource) resolves to on this worker for the
// wanted type, one per version and location. It is empty when the worker
// cannot load it.
func (inv *Inventory) Lookup(classOrAlias string, want Kind) []Plugin {
	return lookup(inv.Plugins, classOrAlias, want)
}

// Where tells in one line where this worker looked: each plugin.path
// element and the classpath.
func (inv *Inventory) Where() string {
	if inv.Member != "" {
		return "GET /connector-plugins of " + inv.Member
	}
	var parts []string
	for _, e := range inv.PluginPath {
		if e.Problem != "" {
			parts = append(parts, fmt.Sprintf("%s (%s)", e.Path, e.Problem))
		} else {
			parts = append(parts, fmt.Sprintf("%s (%s)", e.Path, plural(e.Locations, "plugin location")))
		}
	}
	where := "no plugin.path"
	if len(parts) > 0 {
		where = "plugin.path " + strings.Join(parts, ", ")
	}
	return where + fmt.Sprintf(", the classpath (%s)", plural(inv.ClasspathFiles, "jar or directory", "jars and directories"))
}

// plural renders "1 thing" or "n things" (or the given plural form).
func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// lookup resolves classOrAlias among plugins as Connect's
// DelegatingClassLoader does (aliases first, then the full name), then,
// for a connector, with Plugins.connectorClass' fallback: the one
// connector whose simple name is the value or the value plus "Connector".
func lookup(plugins []Plugin, classOrAlias string, want Kind) []Plugin {
	name := strings.TrimSpace(classOrAlias)
	if full, ok := computeAliases(plugins)[name]; ok {
		name = full
	}
	var out []Plugin
	for _, p := range plugins {
		if p.Class == name && (p.Kind == "" || p.Kind.Satisfies(want)) {
			out = append(out, p)
		}
	}
	if len(out) > 0 || want != KindConnector {
		return out
	}
	classes := map[string]bool{}
	for _, p := range plugins {
		if s := simpleName(p.Class); p.Found != FoundClasspath && p.Kind.Satisfies(KindConnector) &&
			(s == classOrAlias || s == classOrAlias+"Connector") {
			classes[p.Class] = true
			out = append(out, p)
		}
	}
	if len(classes) != 1 {
		return nil // none, or ambiguous: Connect refuses "More than one connector matches alias"
	}
	return out
}

// computeAliases is PluginUtils.computeAliases over discovered plugins:
// each plugin's simple name and pruned name (the simple name up to the
// last occurrence of its type's suffix) is an alias when it names one
// class only.
func computeAliases(plugins []Plugin) map[string]string {
	classes := map[string]map[string]bool{}
	add := func(alias, class string) {
		if classes[alias] == nil {
			classes[alias] = map[string]bool{}
		}
		classes[alias][class] = true
	}
	for _, p := range plugins {
		if p.Found == FoundClasspath || p.Kind == "" {
			continue
		}
		s := simpleName(p.Class)
		add(s, p.Class)
		add(prunedName(s, p.Kind), p.Class)
	}
	aliases := map[string]string{}
	for alias, set := range classes {
		if len(set) == 1 {
			for c := range set {
				aliases[alias] = c
			}
		}
	}
	return aliases
}

// simpleName is Class.getSimpleName for a binary name: the part after the
// package and after the enclosing classes ("Cast$Key" gives "Key").
func simpleName(class string) string {
	s := class[strings.LastIndexByte(class, '.')+1:]
	return s[strings.LastIndexByte(s, '$')+1:]
}

// prunedName is PluginUtils.prunedName: the simple name cut at the last
// occurrence of the type's suffix ("Connector" for connectors), unless
// that occurrence starts the name.
func prunedName(simple string, k Kind) string {
	suffix := "Connector"
	if ki, ok := k.info(); ok {
		suffix = ki.suffix
	}
	if pos := strings.LastIndex(simple, suffix); pos > 0 {
		return simple[:pos]
	}
	return simple
}

// sortPlugins orders plugins by class, type and location, and drops exact
// duplicates.
func sortPlugins(ps []Plugin) []Plugin {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Class != b.Class {
			return a.Class < b.Class
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Location < b.Location
	})
	var out []Plugin
	for _, p := range ps {
		if len(out) == 0 || p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return out
}
