package plugins

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
)

// Options says what to scan, as the worker is configured: its plugin.path,
// its classpath and its plugin.discovery.
type Options struct {
	// PluginPath is the worker's plugin.path, as set (comma-separated);
	// empty for none. (Connect scans its working directory when the
	// setting is present but empty; pass "." for that.)
	PluginPath string
	// Classpath is the worker JVM's classpath entries (jars, class
	// directories, "dir/*" wildcards), as the image's launcher builds
	// them; see SplitClasspath and ClasspathFromArgs.
	Classpath []string
	// Discovery is the worker's plugin.discovery; empty means Connect's
	// default (hybrid_warn).
	Discovery DiscoveryMode
	// WorkDir resolves relative entries (the worker's working directory);
	// empty means this process's.
	WorkDir string
	// Want lists classes or aliases (what the cluster's connectors name)
	// to look for even where the scan does not read every class: a
	// plugin location with manifests and the classpath are indexed by
	// name, and only the classes wanted are read.
	Want []string
	// FullScan reads the header of every class of every plugin location
	// and of the classpath, as Connect's reflective scan loads them all:
	// complete (every plugin without a manifest is listed) and slower.
	// Without it, only the plugin locations that have no manifest at all
	// are read in full (under a reflective plugin.discovery).
	FullScan bool
	// Parallelism bounds the files read at once; 0 means GOMAXPROCS.
	Parallelism int
}

// source is one plugin source being scanned: a plugin location or the
// classpath, with its files' indexes and the class headers read so far.
type source struct {
	loc      location
	files    []*fileIndex
	owner    map[string]int // class -> index in files (the first file wins, as in a URLClassLoader)
	headers  map[string]*classHeader
	kinds    map[string]resolved // memo of kindsOf
	full     bool                // every class header was read
	manifest bool                // a reflective plugin type's manifest is present
	problems []Problem
}

// classpath reports whether src is the classpath source.
func (src *source) classpath() bool { return src.loc.path == "" }

// name is the source's Location in results.
func (src *source) name() string {
	if src.classpath() {
		return ClasspathLocation
	}
	return src.loc.path
}

// Scan finds what this worker can load, as Connect will find it, without
// a JVM: plugin.path's locations and the classpath, their ServiceLoader
// manifests, and, under a reflective plugin.discovery, the classes a
// reflective scan would find (their headers are read to follow the type
// hierarchy). Files that cannot be read become Problems, as Connect skips
// them; Scan fails only on a bad option or a cancelled ctx. It never
// writes.
func Scan(ctx context.Context, opts Options) (*Inventory, error) {
	start := time.Now()
	s, err := newScanner(opts)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if err := s.index(ctx); err != nil {
		return nil, err
	}
	s.collectManifests()
	s.enumerate()
	if err := s.resolveWanted(ctx); err != nil {
		return nil, err
	}
	return s.inventory(time.Since(start)), nil
}

// scanner is one Scan's state.
type scanner struct {
	opts      Options
	mode      DiscoveryMode
	workDir   string
	sources   []*source // plugin locations in order, then the classpath
	cp        *source
	entries   []PathEntry
	problems  []Problem
	zips      map[string]*zip.ReadCloser // opened on demand, closed by close
	scratch   classScratch
	plugins   []Plugin
	invisible []Plugin
	headers   int
	kafka     string // kafka-clients' version on the classpath
}

// newScanner checks the options and lays out the sources.
func newScanner(opts Options) (*scanner, error) {
	mode, err := ParseDiscoveryMode(string(opts.Discovery))
	if err != nil {
		return nil, err
	}
	workDir := opts.WorkDir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("plugins: working directory for relative plugin.path entries: %w", err)
		}
	}
	s := &scanner{opts: opts, mode: mode, workDir: workDir, zips: map[string]*zip.ReadCloser{}}
	locs, entries, problems := pluginLocations(opts.PluginPath, workDir)
	s.entries, s.problems = entries, problems
	for _, loc := range locs {
		urls, classDir, probs := pluginURLs(loc.path)
		loc.files = urls
		if classDir {
			loc.classDirs = map[string]bool{loc.path: true}
		}
		s.sources = append(s.sources, &source{loc: loc, problems: probs})
	}
	files, dirs := classpathFiles(opts.Classpath, workDir)
	s.cp = &source{loc: location{files: files, classDirs: dirs}}
	s.sources = append(s.sources, s.cp)
	return s, nil
}

// close closes the archives opened on demand.
func (s *scanner) close() {
	for _, z := range s.zips {
		z.Close()
	}
}

// index reads every source's files in parallel: a plugin location in one
// task (its files are read in full when it has no manifest), each
// classpath file in its own task.
func (s *scanner) index(ctx context.Context) error {
	var tasks []func(*classScratch)
	for _, src := range s.sources[:len(s.sources)-1] {
		tasks = append(tasks, func(sc *classScratch) { s.indexLocation(src, sc) })
	}
	s.cp.files = make([]*fileIndex, len(s.cp.loc.files))
	cpHeaders := make([]map[string]*classHeader, len(s.cp.loc.files))
	cpProblems := make([][]Problem, len(s.cp.loc.files))
	for i, f := range s.cp.loc.files {
		tasks = append(tasks, func(sc *classScratch) {
			s.cp.files[i], cpHeaders[i], cpProblems[i] = s.indexOne(f, s.cp.loc.classDirs[f], s.opts.FullScan, sc)
		})
	}
	if err := runTasks(ctx, s.parallelism(), tasks); err != nil {
		return err
	}
	s.cp.full = s.opts.FullScan
	s.cp.finish(cpHeaders, cpProblems)
	for _, fi := range s.cp.files {
		if fi != nil && fi.kafkaVersion != "" && s.kafka == "" {
			s.kafka = fi.kafkaVersion
		}
	}
	for _, src := range s.sources {
		s.headers += len(src.headers)
	}
	return nil
}

// parallelism is how many files are read at once.
func (s *scanner) parallelism() int {
	if s.opts.Parallelism > 0 {
		return s.opts.Parallelism
	}
	return runtime.GOMAXPROCS(0)
}

// indexLocation indexes one plugin location's files, then reads all its
// class headers if it has no manifest (under a reflective discovery) or
// for a full scan.
func (s *scanner) indexLocation(src *source, sc *classScratch) {
	n := len(src.loc.files)
	src.files = make([]*fileIndex, n)
	zips := make([]*zip.ReadCloser, n)
	defer func() {
		for _, z := range zips {
			if z != nil {
				z.Close()
			}
		}
	}()
	for i, f := range src.loc.files {
		fi, zr, err := indexFile(f, src.loc.classDirs[f], s.mode.Reflective() || s.opts.FullScan)
		if err != nil {
			src.problems = append(src.problems, Problem{Path: f, Detail: "cannot read, Connect cannot load from it: " + err.Error(), Fix: fixCorrupt})
			continue
		}
		src.files[i], zips[i] = fi, zr
		src.manifest = src.manifest || fi.hasPluginManifest()
	}
	src.full = s.opts.FullScan || (s.mode.Reflective() && !src.manifest)
	headers := make([]map[string]*classHeader, n)
	problems := make([][]Problem, n)
	if src.full {
		for i, fi := range src.files {
			if fi != nil {
				headers[i], problems[i] = readHeaders(fi, zips[i], sc)
			}
		}
	}
	src.finish(headers, problems)
}

// indexOne indexes one classpath file, reading its class headers too when
// full is set.
func (s *scanner) indexOne(f string, dir, full bool, sc *classScratch) (*fileIndex, map[string]*classHeader, []Problem) {
	fi, zr, err := indexFile(f, dir, full)
	if err != nil {
		return nil, nil, []Problem{{Path: f, Detail: "cannot read classpath entry: " + err.Error(), Fix: fixCorrupt}}
	}
	if !full {
		return fi, nil, nil
	}
	if zr != nil {
		defer zr.Close()
	}
	h, probs := readHeaders(fi, zr, sc)
	return fi, h, probs
}

// finish builds a source's class index (the first file holding a class
// wins) and merges the headers read per file.
func (src *source) finish(headers []map[string]*classHeader, problems [][]Problem) {
	src.owner = map[string]int{}
	src.headers = map[string]*classHeader{}
	src.kinds = map[string]resolved{}
	for i, fi := range src.files {
		if fi == nil {
			continue
		}
		for _, c := range fi.classes {
			if _, dup := src.owner[c]; !dup {
				src.owner[c] = i
				if h := headers[i][c]; h != nil {
					src.headers[c] = h
				}
			}
		}
		src.problems = append(src.problems, problems[i]...)
	}
}

// hasPluginManifest reports a manifest for one of the plugin types the
// reflective scan looks for: a location with one was migrated (KIP-898's
// sync-manifests, or its build writes them), so its classes are read on
// demand only.
func (fi *fileIndex) hasPluginManifest() bool {
	for service, classes := range fi.services {
		if k, ok := kindOfService(service); ok && len(classes) > 0 {
			if ki, _ := k.info(); ki.reflective {
				return true
			}
		}
	}
	return false
}

// runTasks runs tasks on n goroutines, each with its own scratch buffers,
// and stops handing out tasks once ctx is done.
func runTasks(ctx context.Context, n int, tasks []func(*classScratch)) error {
	ch := make(chan func(*classScratch))
	var wg sync.WaitGroup
	for range min(n, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc classScratch
			for t := range ch {
				t(&sc)
			}
		}()
	}
	var err error
	for _, t := range tasks {
		if err = ctx.Err(); err != nil {
			break
		}
		ch <- t
	}
	close(ch)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("plugins: scan interrupted: %w", err)
	}
	return nil
}
