package layers

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated layer table of docs/architecture.md from the imports")

const (
	beginMark = "<!-- BEGIN layers: generated from the imports by `go test ./internal/layers -update`; TestArchitectureDoc fails when it differs -->"
	endMark   = "<!-- END layers -->"
)

// drawn is a package the architecture page draws: connect-init's own code,
// not the test beds and tools under internal/ (the page names those in
// prose) nor the examples.
func drawn(pkg string) bool {
	return pkg == "internal/clock" || (!strings.HasPrefix(pkg, "internal/") && pkg != "examples" &&
		!strings.HasSuffix(pkg, "test"))
}

// architecture is the generated part of docs/architecture.md: the stack
// by layer, top first, and each package's imports of the module.
func architecture(all map[string]map[string]bool) string {
	byRank := map[int][]string{}
	var pkgs []string
	for pkg := range all {
		if drawn(pkg) {
			byRank[layer[pkg]] = append(byRank[layer[pkg]], pkg)
			pkgs = append(pkgs, pkg)
		}
	}
	var ranks []int
	for r := range byRank {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	slices.Reverse(ranks)
	var b strings.Builder
	b.WriteString(beginMark + "\n\n```\nlayer  packages (each imports only packages of a lower layer)\n")
	for _, r := range ranks {
		slices.Sort(byRank[r])
		fmt.Fprintf(&b, "%5d  %s\n", r, strings.Join(byRank[r], "  "))
	}
	b.WriteString("```\n\n| Package | Layer | Imports of this module |\n|---|---|---|\n")
	slices.SortFunc(pkgs, func(a, b string) int {
		if layer[a] != layer[b] {
			return layer[b] - layer[a]
		}
		return strings.Compare(a, b)
	})
	for _, pkg := range pkgs {
		var ims []string
		for im := range all[pkg] {
			ims = append(ims, im)
		}
		slices.Sort(ims)
		list := "none"
		if len(ims) > 0 {
			list = "`" + strings.Join(ims, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", pkg, layer[pkg], list)
	}
	b.WriteString("\n" + endMark)
	return b.String()
}

// docs/architecture.md draws the layers from the real imports: the part
// between its markers is generated, and this test fails when a package,
// its layer or its imports changed without the page (-update rewrites it).
func TestArchitectureDoc(t *testing.T) {
	path, err := filepath.Abs("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no generated layer table between %q and %q", path, beginMark, endMark)
	}
	all := imports(t)
	// The page's table of jobs names every package it draws.
	for pkg := range all {
		if drawn(pkg) && !strings.Contains(doc[end:], "\n| `"+pkg+"` |") {
			t.Errorf("%s: the table of the packages' jobs has no row for %s", path, pkg)
		}
	}
	have := doc[begin : end+len(endMark)]
	want := architecture(all)
	if have == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:begin]+want+doc[end+len(endMark):]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the layer table of %s", path)
		return
	}
	t.Errorf("the layer table of %s differs from the imports: run go test ./internal/layers -update and review the change\nhave:\n%s\nwant:\n%s", path, have, want)
}
