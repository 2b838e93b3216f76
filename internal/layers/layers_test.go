package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/connect-init/connect-init"

// imports maps each package directory of the module (relative path) to the
// module packages its non-test files import.
func imports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if after, ok := strings.CutPrefix(p, module+"/"); ok {
				out[rel][after] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d packages under %s", len(out), root)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
	return out
}

// No package imports its parent (or any ancestor): a subpackage is below
// the package it lives in.
func TestNoPackageImportsItsParent(t *testing.T) {
	for pkg, ims := range imports(t) {
		for im := range ims {
			if strings.HasPrefix(pkg, im+"/") {
				t.Errorf("%s imports its ancestor %s", pkg, im)
			}
		}
	}
}

// layer ranks every package of the module, from the bottom: a package may
// import only packages of a lower rank. A package missing here fails the
// test, so a new one is placed on purpose.
var layer = map[string]int{
	// Leaves: no package of ours below them.
	"internal/clock": 0, "exitcode": 0, "checks": 0, "metrics": 0, "workerconfig": 0, "step": 0, "buildinfo": 0, "future": 0,
	"connect/proto": 0, "kafka/kafkalog": 0, "kafka/notyet": 0, "gate/peers/peerstest": 0, "security/securitytest": 0,
	// The pace tests' clock (issue 48), above the clock it wraps; only
	// _test files import it.
	"internal/clocktest": 1,
	// Domain libraries: Kafka's and Connect's formats, TLS and SASL, REST.
	"security": 1, "restclient": 1, "entrypoint": 1, "connect/plugins": 1, "connect/store": 1, "connect/registry": 1,
	"connect/parity": 1, "lock": 1, "repair": 1,
	// connect-init's own settings, read as the image hands them over.
	"settings": 2, "apply": 2,
	// Kafka clients built from those settings.
	"kafka": 3,
	// The gates, each a start-up step's check.
	"gate": 4, "gate/peers": 4,
	// What runs the gates: doctor's snapshot and the start-up pipeline.
	"doctor": 5, "startup": 5,
	// The Connect cluster as apply meets it: its workers proven ours. A
	// tree of its own: under connect/, whose packages are the libraries
	// the gates import, it made connect/ and gate/ import each other.
	"workers": 5,
	// The command: flags, dispatch, printing.
	"cmd/connect-init": 6,
	// Test beds, demo and bench: above everything they drive.
	"internal/testbed": 7, "internal/containerbed": 8, "internal/containerbed/bedctl": 0,
	"internal/bench": 9, "internal/bench/rusage": 0, "internal/bench/standin": 0,
	"internal/demo": 8, "internal/degraded": 8, "internal/monitoring": 8, "internal/chaos": 8, "internal/zkmode": 8, "internal/layers": 0,
	"examples": 8,
}

// tree is the tree a package belongs to: its first path element, and under
// internal/ its first two (internal/clock and internal/testbed are no tree
// together: one is a leaf, the other drives everything).
func tree(pkg string) string {
	parts := strings.Split(pkg, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// No tree imports a package of a tree that imports back into it: a tree
// (connect/, gate/, kafka/) sits at one place in the stack, so that its
// packages can be read together, not in a zigzag between two trees.
func TestNoTreesImportEachOther(t *testing.T) {
	edges := map[[2]string][]string{}
	for pkg, ims := range imports(t) {
		for im := range ims {
			if a, b := tree(pkg), tree(im); a != b {
				edges[[2]string{a, b}] = append(edges[[2]string{a, b}], pkg+" -> "+im)
			}
		}
	}
	for e, why := range edges {
		back, ok := edges[[2]string{e[1], e[0]}]
		if ok && e[0] < e[1] {
			slices.Sort(why)
			slices.Sort(back)
			t.Errorf("the trees %s and %s import each other: %s; and %s", e[0], e[1], strings.Join(why, ", "), strings.Join(back, ", "))
		}
	}
}

// Every package has a rank, and imports only packages below it.
func TestLayers(t *testing.T) {
	for pkg, ims := range imports(t) {
		rank, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer: add it to layer in internal/layers", pkg)
			continue
		}
		for im := range ims {
			if r, ok := layer[im]; ok && r >= rank {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only layers below its own", pkg, rank, im, r)
			}
		}
	}
}

// Some packages are kept narrower than their layer: the startup lock, repair
// and apply run with nothing of the gates, so they can be read and tested
// alone.
func TestNarrowPackages(t *testing.T) {
	allowed := map[string][]string{
		"internal/clock": {},
		"future":         {},
		"checks":         {},
		"entrypoint":     {"workerconfig"},
		"workerconfig":   {},
		"restclient":     {"internal/clock"},
		"lock":           {"internal/clock", "kafka/notyet"},
		"repair":         {"internal/clock", "kafka/notyet"},
		"security":       {"workerconfig"},
		"gate/peers":     {"internal/clock", "restclient", "workerconfig", "security", "step"},
		"apply":          {"internal/clock", "restclient", "workerconfig", "exitcode", "metrics"},
		"metrics":        {},
	}
	all := imports(t)
	for pkg, ok := range allowed {
		ims, found := all[pkg]
		if !found {
			t.Errorf("package %s not found", pkg)
			continue
		}
		for im := range ims {
			if !slices.Contains(ok, im) {
				t.Errorf("%s imports %s; it may import only %v", pkg, im, ok)
			}
		}
	}
}

// No package exports a variable: a rule list, a default or a sentinel error
// that any importer could reassign or edit would change it for every other
// one. They are constants, or functions returning a new value at each call.
func TestNoExportedPackageVariables(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		n++
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if name.IsExported() {
						t.Errorf("%s: package variable %s can be changed by any importer: make it a constant or a function", fset.Position(name.Pos()), name.Name)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("read only %d files under %s", n, root)
	}
}
