package plugins

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// readHeaders reads the header of every class of one file. A class whose
// header names another class than its path (a jar that nests classes under
// a prefix, such as Spring Boot's BOOT-INF/classes/) is not loadable by
// that name and is left out.
func readHeaders(fi *fileIndex, zr *zip.ReadCloser, sc *classScratch) (map[string]*classHeader, []Problem) {
	out := make(map[string]*classHeader, len(fi.classes))
	var problems []Problem
	read := func(class string, open func() (io.ReadCloser, error)) {
		h, err := readHeaderWith(open, sc)
		if err != nil {
			problems = append(problems, Problem{Path: fi.path, Detail: fmt.Sprintf("class %s unreadable, the scan skips it: %v", class, err), Fix: fixCorrupt})
			return
		}
		if h.name == class {
			out[class] = h
		}
	}
	if zr == nil {
		for _, c := range fi.classes {
			p := filepath.Join(fi.path, filepath.FromSlash(strings.ReplaceAll(c, ".", "/")+".class"))
			read(c, func() (io.ReadCloser, error) { return os.Open(p) })
		}
		return out, problems
	}
	for _, f := range zr.File {
		if c, ok := classEntryName(f.Name); ok {
			read(c, f.Open)
		}
	}
	return out, problems
}

// readHeaderWith opens a class file, reads its header and closes it.
func readHeaderWith(open func() (io.ReadCloser, error), sc *classScratch) (*classHeader, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h, err := readClassHeader(rc, sc)
	if err != nil {
		return nil, err
	}
	return &h, nil
}

// header returns a class's header from src, reading it on demand (the
// archive stays open for the rest of the scan).
func (s *scanner) header(src *source, class string) *classHeader {
	if h, ok := src.headers[class]; ok {
		return h
	}
	src.headers[class] = nil // a failed read is not retried
	i, ok := src.owner[class]
	if !ok {
		return nil
	}
	fi := src.files[i]
	entry := strings.ReplaceAll(class, ".", "/") + ".class"
	open := func() (io.ReadCloser, error) { return os.Open(filepath.Join(fi.path, filepath.FromSlash(entry))) }
	if !fi.dir {
		zr, err := s.zip(fi.path)
		if err != nil {
			return nil
		}
		open = func() (io.ReadCloser, error) { return zr.Open(entry) }
	}
	h, err := readHeaderWith(open, &s.scratch)
	s.headers++
	if err != nil || h.name != class {
		return nil
	}
	src.headers[class] = h
	return h
}

// zip opens an archive once per scan.
func (s *scanner) zip(p string) (*zip.ReadCloser, error) {
	if z, ok := s.zips[p]; ok {
		return z, nil
	}
	z, err := zip.OpenReader(p)
	if err != nil {
		return nil, err
	}
	s.zips[p] = z
	return z, nil
}

// resolved is the plugin types a class implements, and whether part of its
// hierarchy could not be found (then the answer may be incomplete).
type resolved struct {
	kinds      []Kind
	unresolved bool
}

// kindsOf follows a class's superclass and interfaces, as the reflective
// scan's class graph does, until it reaches the plugin types' base
// interfaces and classes. A plugin location's classes are looked up there
// first (its loader is child first), then on the classpath; the
// classpath's on the classpath only. JDK classes end the walk.
func (s *scanner) kindsOf(src *source, class string, depth int) resolved {
	if k, ok := kindOfService(class); ok {
		return resolved{kinds: []Kind{k}}
	}
	if r, ok := src.kinds[class]; ok {
		return r
	}
	if _, own := src.owner[class]; !own || (!src.classpath() && !loadsInIsolation(class)) {
		if !src.classpath() {
			if _, ok := s.cp.owner[class]; ok {
				return s.kindsOf(s.cp, class, depth)
			}
		}
		return resolved{unresolved: !isJDKClass(class)}
	}
	if depth > 100 {
		return resolved{unresolved: true}
	}
	src.kinds[class] = resolved{} // cycle guard
	h := s.header(src, class)
	if h == nil {
		src.kinds[class] = resolved{unresolved: true}
		return src.kinds[class]
	}
	var r resolved
	for _, super := range append([]string{h.super}, h.interfaces...) {
		if super == "" {
			continue
		}
		sr := s.kindsOf(src, super, depth+1)
		r.unresolved = r.unresolved || sr.unresolved
		for _, k := range sr.kinds {
			if !slices.Contains(r.kinds, k) {
				r.kinds = append(r.kinds, k)
			}
		}
	}
	src.kinds[class] = r
	return r
}

// isJDKClass reports the JDK's own packages, which no plugin source holds.
func isJDKClass(class string) bool {
	for _, p := range []string{"java.", "javax.", "jdk.", "sun.", "com.sun."} {
		if strings.HasPrefix(class, p) {
			return true
		}
	}
	return false
}

// collectManifests turns every manifest entry into a plugin, as
// ServiceLoaderScanner (and, for config providers, REST extensions and
// client config policies, every mode) finds them. An entry names a class
// of its own source: one its location leaves to the classpath is not a
// plugin of the location; one that is nowhere is a broken manifest.
func (s *scanner) collectManifests() {
	for _, src := range s.sources {
		for _, fi := range src.files {
			if fi == nil {
				continue
			}
			for _, service := range sortedKeys(fi.services) {
				s.manifestEntries(src, fi, service)
			}
		}
	}
}

// manifestEntries handles one manifest of one file.
func (s *scanner) manifestEntries(src *source, fi *fileIndex, service string) {
	kind, ok := kindOfService(service)
	if !ok {
		src.problems = append(src.problems, Problem{Path: fi.path, Detail: fmt.Sprintf(
			"manifest META-INF/services/%s, which Connect does not read (it reads %s and %s): it lists %s",
			service, "org.apache.kafka.connect.source.SourceConnector", "org.apache.kafka.connect.sink.SinkConnector",
			strings.Join(fi.services[service], ", ")),
			Fix: "name the manifest after SourceConnector or SinkConnector (bin/connect-plugin-path.sh sync-manifests writes the right ones)"})
		return
	}
	for _, class := range fi.services[service] {
		if _, own := src.owner[class]; own && (src.classpath() || loadsInIsolation(class)) {
			s.plugins = append(s.plugins, s.plugin(src, class, kind, FoundManifest))
			continue
		}
		if _, onCP := s.cp.owner[class]; onCP {
			continue // the classpath's class, not this location's: Connect excludes it here
		}
		src.problems = append(src.problems, Problem{Path: fi.path, Detail: fmt.Sprintf(
			"manifest META-INF/services/%s lists %s, which is not there: Connect logs a ServiceConfigurationError and skips it", service, class),
			Fix: "add the jar that holds the class to the plugin's directory, or correct the manifest"})
	}
}

// plugin describes class of src as a plugin of kind, with its version.
func (s *scanner) plugin(src *source, class string, kind Kind, found Discovery) Plugin {
	fi := src.files[src.owner[class]]
	p := Plugin{Class: class, Kind: kind, Location: src.name(), File: fi.path, Found: found}
	switch {
	case strings.HasPrefix(class, "org.apache.kafka.") && s.kafka != "":
		p.Version, p.VersionFrom = s.kafka, VersionKafka
	case fi.implVersion != "":
		p.Version, p.VersionFrom = fi.implVersion, VersionManifest
	case fi.nameVersion != "":
		p.Version, p.VersionFrom = fi.nameVersion, VersionFileName
	}
	return p
}

// enumerate lists the plugins of the sources read in full that no
// manifest lists: what the reflective scan (ReflectionScanner) finds,
// public concrete classes of the connector, converter, header converter,
// transformation and predicate types.
func (s *scanner) enumerate() {
	listed := map[string]bool{}
	for _, p := range s.plugins {
		listed[p.Location+"\x00"+p.Class+"\x00"+string(p.Kind)] = true
	}
	for _, src := range s.sources {
		if !src.full {
			continue
		}
		for _, class := range sortedKeys(src.owner) {
			for _, p := range s.scanned(src, class) {
				if !listed[p.Location+"\x00"+p.Class+"\x00"+string(p.Kind)] {
					s.add(src, p)
				}
			}
		}
	}
}

// scanned returns the plugins the reflective scan finds for one class of
// src: one per plugin type it implements (a class can be both a converter
// and a header converter).
func (s *scanner) scanned(src *source, class string) []Plugin {
	h := s.header(src, class)
	if h == nil || !h.instantiable() || (!src.classpath() && !loadsInIsolation(class)) {
		return nil
	}
	var out []Plugin
	for _, k := range s.kindsOf(src, class, 0).kinds {
		if ki, ok := k.info(); ok && ki.reflective {
			out = append(out, s.plugin(src, class, k, FoundScan))
		}
	}
	return out
}

// add records a plugin found without a manifest: loadable under a
// reflective discovery; under service_load a plugin location's is
// invisible, and the classpath's is loadable by its full name only.
func (s *scanner) add(src *source, p Plugin) {
	switch {
	case s.mode.Reflective():
		s.plugins = append(s.plugins, p)
	case src.classpath():
		p.Found = FoundClasspath
		s.plugins = append(s.plugins, p)
	default:
		s.invisible = append(s.invisible, p)
	}
}

// resolveWanted looks for each wanted class or alias that the scan has not
// found yet: by its full name in every source, then as an alias among the
// classes whose simple name matches; only those classes are read.
func (s *scanner) resolveWanted(ctx context.Context) error {
	for _, w := range s.opts.Want {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("plugins: scan interrupted: %w", err)
		}
		w = strings.TrimSpace(w)
		if w == "" || len(lookup(s.plugins, w, "")) > 0 || len(lookup(s.invisible, w, "")) > 0 {
			continue
		}
		if !s.wantClass(w) {
			s.wantAlias(w)
		}
	}
	return nil
}

// wantClass looks for a wanted full class name; it reports whether any
// source holds the class.
func (s *scanner) wantClass(class string) bool {
	held := false
	for _, src := range s.sources {
		if _, ok := src.owner[class]; !ok || src.full && !src.classpath() {
			continue
		}
		held = true
		ps := s.scanned(src, class)
		for _, p := range ps {
			s.add(src, p)
		}
		if len(ps) == 0 && src.classpath() {
			// Loadable by name; its type is unknown when the hierarchy
			// could not be followed (counted as any type then).
			if r := s.kindsOf(src, class, 0); r.unresolved && len(r.kinds) == 0 {
				s.plugins = append(s.plugins, s.plugin(src, class, "", FoundClasspath))
			}
		}
	}
	return held
}

// wantAlias reads the classes whose simple name is the alias, or the alias
// and a type suffix, so that computeAliases can see them.
func (s *scanner) wantAlias(alias string) {
	names := aliasCandidates(alias)
	for _, src := range s.sources {
		if src.full && !src.classpath() {
			continue
		}
		for _, class := range sortedKeys(src.owner) {
			if names[simpleName(class)] {
				for _, p := range s.scanned(src, class) {
					s.add(src, p)
				}
			}
		}
	}
}

// aliasCandidates are the simple names that could carry alias: itself,
// and itself with a type's suffix.
func aliasCandidates(alias string) map[string]bool {
	names := map[string]bool{alias: true}
	for _, ki := range kinds() {
		names[alias+ki.suffix] = true
	}
	return names
}

// inventory assembles the result.
func (s *scanner) inventory(took time.Duration) *Inventory {
	inv := &Inventory{
		Discovery:      s.mode,
		Plugins:        sortPlugins(s.plugins),
		Invisible:      sortPlugins(s.invisible),
		PluginPath:     s.entries,
		ClasspathFiles: len(s.cp.loc.files),
		Problems:       s.problems,
	}
	for _, src := range s.sources {
		inv.Problems = append(inv.Problems, src.problems...)
		inv.Stats.Files += len(src.loc.files)
		inv.Stats.Classes += len(src.owner)
	}
	inv.Stats.Locations = len(s.sources) - 1
	inv.Stats.HeadersRead = s.headers
	inv.Stats.Duration = took
	return inv
}

// sortedKeys returns a map's keys in order, for deterministic results.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
