package plugins

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Problem is a plugin.path entry, location or file this worker skipped, as
// the worker skips it (Connect logs "Could not get listing for plugin
// path: ... Ignoring." and goes on): evidence for "where this worker
// looked" when a plugin is missing.
type Problem struct {
	// Path is the entry, location or file concerned.
	Path string `json:"path"`
	// Detail says what is wrong with it.
	Detail string `json:"detail"`
	// Fix says what to do about it.
	Fix string `json:"fix"`
}

// The fixes several problems share.
const (
	fixMount   = "check plugin.path for a typo, and that the image has the plugin or the volume holding it is mounted in this container"
	fixCorrupt = "replace the damaged archive (a partial download or copy)"
)

// location is one of Connect's plugin sources (PluginSource): a plugin.path
// child with its own class loader, or the classpath.
type location struct {
	path      string   // the location; "" for the classpath
	files     []string // its URLs: archives, or class directories
	classDirs map[string]bool
}

// pluginLocations splits plugin.path and lists each element's plugin
// locations as PluginUtils.pluginLocations does: a directory contributes
// each child that is a directory, a .jar/.zip or a .class file; an archive
// is a location by itself; a missing or unreadable element is reported and
// skipped. Relative elements are resolved against workDir, the worker's
// working directory. The locations come sorted by name within an element
// (Connect takes the directory's order, which the file system decides).
func pluginLocations(pluginPath, workDir string) ([]location, []PathEntry, []Problem) {
	if strings.TrimSpace(pluginPath) == "" {
		return nil, nil, nil
	}
	var locs []location
	var entries []PathEntry
	var problems []Problem
	seen := map[string]bool{}
	for _, el := range strings.Split(strings.TrimSpace(pluginPath), ",") {
		el = strings.TrimSpace(el) // with the Split: PluginUtils' COMMA_WITH_WHITESPACE
		abs := absPath(el, workDir)
		if el == "" {
			problems = append(problems, Problem{Path: abs, Detail: "empty plugin.path element: Connect evaluates it to the working directory", Fix: "remove the empty element from plugin.path"})
		}
		children, problem := elementLocations(abs)
		entry := PathEntry{Path: abs, Locations: len(children)}
		if problem != nil {
			entry.Problem = problem.Detail
			problems = append(problems, *problem)
		}
		entries = append(entries, entry)
		for _, c := range children {
			if !seen[c] {
				seen[c] = true
				locs = append(locs, location{path: c})
			}
		}
	}
	return locs, entries, problems
}

// elementLocations lists one plugin.path element's plugin locations.
func elementLocations(abs string) ([]string, *Problem) {
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Problem{Path: abs, Detail: "plugin.path entry does not exist: Connect skips it", Fix: fixMount}
	}
	if err != nil {
		return nil, &Problem{Path: abs, Detail: "plugin.path entry unreadable, Connect skips it: " + err.Error(), Fix: fixMount}
	}
	if !st.IsDir() {
		if isArchive(abs) {
			return []string{abs}, nil
		}
		return nil, &Problem{Path: abs, Detail: "plugin.path entry is neither a directory nor a .jar/.zip: Connect ignores it", Fix: "list directories of plugins, or .jar/.zip files, in plugin.path"}
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, &Problem{Path: abs, Detail: "cannot list plugin.path entry, Connect skips it: " + err.Error(), Fix: fixMount}
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(abs, e.Name())
		if isArchive(p) || isClassFile(p) || isDirFollow(p, e) {
			out = append(out, p)
		}
	}
	return out, nil
}

// absPath resolves a path against the worker's working directory.
func absPath(p, workDir string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(workDir, p)
}

// isDirFollow is Files.isDirectory: true for a directory or a symbolic
// link to one.
func isDirFollow(p string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// isArchive is PluginUtils.isArchive: a .jar or .zip name, any case.
func isArchive(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".jar") || strings.HasSuffix(l, ".zip")
}

// isClassFile is PluginUtils.isClassFile: a .class name, any case.
func isClassFile(p string) bool {
	return strings.HasSuffix(strings.ToLower(p), ".class")
}

// pluginURLs lists a location's URLs as PluginUtils.pluginUrls does: an
// archive is its own URL; a directory is walked depth first, following
// symbolic links (a broken one is skipped) and never visiting a directory
// twice, collecting its archives sorted by path; a directory that holds
// class files and no archive is a class hierarchy, its own single URL;
// with both, the class files are ignored (Connect warns).
func pluginURLs(loc string) (urls []string, classDir bool, problems []Problem) {
	if isArchive(loc) {
		return []string{loc}, false, nil
	}
	w := walker{visited: map[string]bool{loc: true}}
	if err := w.walk(loc); err != nil {
		return nil, false, append(w.problems, Problem{Path: loc, Detail: "cannot list plugin location, Connect skips it: " + err.Error(), Fix: fixMount})
	}
	slices.Sort(w.archives)
	if w.classFiles {
		if len(w.archives) == 0 {
			return []string{loc}, true, w.problems
		}
		w.problems = append(w.problems, Problem{Path: loc, Detail: "plugin location holds both archives and class files: Connect uses only the archives", Fix: "put the class files in a jar, or in a plugin directory of their own"})
	}
	if len(w.archives) == 0 && !w.classFiles {
		w.problems = append(w.problems, Problem{Path: loc, Detail: "plugin location holds no .jar, .zip or .class file: nothing to load", Fix: fixMount})
	}
	return w.archives, false, w.problems
}

// walker is pluginUrls' depth-first search state.
type walker struct {
	visited    map[string]bool
	archives   []string
	classFiles bool
	problems   []Problem
}

// walk visits one directory; an error means the top directory cannot be
// listed (Connect then skips the whole location).
func (w *walker) walk(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !isArchive(p) && !isClassFile(p) && !isDirFollow(p, e) {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				w.problems = append(w.problems, Problem{Path: p, Detail: "cannot resolve symbolic link, Connect ignores it: " + err.Error(), Fix: "repair or remove the link (its target may live on a volume that is not mounted)"})
				continue
			}
			p = real
		}
		if w.visited[p] {
			continue
		}
		w.visited[p] = true
		switch {
		case isArchive(p):
			w.archives = append(w.archives, p)
		case isClassFile(p):
			w.classFiles = true
		default:
			if err := w.walk(p); err != nil {
				w.problems = append(w.problems, Problem{Path: p, Detail: "cannot list directory: " + err.Error(), Fix: fixMount})
			}
		}
	}
	return nil
}

// classpathFiles expands the JVM classpath entries as the java launcher
// does: "dir/*" (or "*") stands for the dir's .jar and .JAR files, not
// recursive, in name order; any other entry is a jar or a class directory.
// Entries that do not exist are dropped silently, as the JVM drops them
// (launch scripts add many that never exist).
func classpathFiles(entries []string, workDir string) (files []string, classDirs map[string]bool) {
	classDirs = map[string]bool{}
	seen := map[string]bool{}
	add := func(p string, dir bool) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
			if dir {
				classDirs[p] = true
			}
		}
	}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if e == "*" || strings.HasSuffix(e, string(filepath.Separator)+"*") {
			dir := absPath(strings.TrimSuffix(e, "*"), workDir)
			list, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, f := range list {
				if n := f.Name(); strings.HasSuffix(n, ".jar") || strings.HasSuffix(n, ".JAR") {
					add(filepath.Join(dir, n), false)
				}
			}
			continue
		}
		p := absPath(e, workDir)
		if st, err := os.Stat(p); err == nil {
			add(p, st.IsDir())
		}
	}
	return files, classDirs
}

// SplitClasspath splits a JVM classpath (-cp, CLASSPATH) on the list
// separator (':'), dropping empty entries; Scan expands the wildcards.
func SplitClasspath(cp string) []string {
	var out []string
	for _, e := range filepath.SplitList(cp) {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// ClasspathFromArgs returns the classpath of a java command line: the
// value of its -cp, -classpath or --class-path option (the last one wins,
// as with the launcher), else classpathEnv (the CLASSPATH variable), which
// the launcher reads only when no option is given. The options end at the
// main class: what follows belongs to the program.
func ClasspathFromArgs(argv []string, classpathEnv string) []string {
	cp, found := "", false
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "-cp" || a == "-classpath" || a == "--class-path":
			if i+1 < len(argv) {
				cp, found = argv[i+1], true
			}
			i++
		case strings.HasPrefix(a, "--class-path="):
			cp, found = strings.TrimPrefix(a, "--class-path="), true
		case takesValue(a):
			i++
		case i > 0 && !strings.HasPrefix(a, "-"):
			i = len(argv) // the main class: the JVM's options end here
		}
	}
	if !found {
		cp = classpathEnv
	}
	return SplitClasspath(cp)
}

// takesValue reports the java launcher options that take their value as
// the next argument (besides the classpath's), so that the value is not
// taken for the main class.
func takesValue(opt string) bool {
	switch opt {
	case "-p", "--module-path", "--upgrade-module-path", "--add-modules", "--add-opens",
		"--add-exports", "--add-reads", "--patch-module", "--limit-modules", "--enable-native-access":
		return true
	}
	return false
}
