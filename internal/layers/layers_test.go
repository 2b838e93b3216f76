package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
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

// The low layers import only what is below them.
func TestLowLayers(t *testing.T) {
	allowed := map[string][]string{
		"internal/clock":      {},
		"checks":              {},
		"restclient":          {"internal/clock"},
		"lock":                {"internal/clock"},
		"bootstrap/restcheck": {"internal/clock", "restclient", "bootstrap/workerconfig", "bootstrap/security"},
		"entrypoint":          {},
		"apply":               {"internal/clock", "restclient", "bootstrap/workerconfig"},
	}
	all := imports(t)
	for pkg, ok := range allowed {
		ims, found := all[pkg]
		if !found {
			t.Errorf("package %s not found", pkg)
			continue
		}
		for im := range ims {
			if !contains(ok, im) {
				t.Errorf("%s imports %s; it may import only %v", pkg, im, ok)
			}
		}
	}
	// Nothing but the command and doctor may import the gates' package.
	for pkg, ims := range all {
		if ims["bootstrap"] && pkg != "cmd/connect-init" && pkg != "doctor" {
			t.Errorf("%s imports bootstrap", pkg)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
