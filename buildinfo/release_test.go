//go:build release

package buildinfo

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRelease checks what make release left in dist/ (CITEST_DIST;
// make release-check runs it): SHA256SUMS names every artefact and
// sha256sum -c verifies it; each binary is static, for its architecture,
// and records its commit; and each binary's SBOM lists every module of
// go.mod that the binary links, at go.mod's version (test-only modules,
// which no binary links, are rightly absent), the Go standard library and
// the main module.
func TestRelease(t *testing.T) {
	dist := os.Getenv("CITEST_DIST")
	if dist == "" {
		t.Fatal("CITEST_DIST is not set: run make release-check")
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			listed[f[1]] = true
		}
	}
	cmd := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
	cmd.Dir = dist
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	mods := goModRequires(t)
	if !listed["connect-init-provider.jar"] {
		t.Errorf("SHA256SUMS does not list connect-init-provider.jar: %q", sums)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		bin := "connect-init-linux-" + arch
		sbom := bin + ".cdx.json"
		if !listed[bin] || !listed[sbom] {
			t.Errorf("SHA256SUMS lists %v, want %s and %s among them", listed, bin, sbom)
		}
		bi, err := buildinfo.ReadFile(filepath.Join(dist, bin))
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		settings := map[string]string{}
		for _, s := range bi.Settings {
			settings[s.Key] = s.Value
		}
		if settings["GOARCH"] != arch || settings["GOOS"] != "linux" || settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" || len(settings["vcs.revision"]) != 40 {
			t.Errorf("%s build settings %v: want linux/%s, CGO_ENABLED=0, -trimpath, a vcs.revision", bin, settings, arch)
		}
		listedMods := sbomModules(t, filepath.Join(dist, sbom))
		linked := map[string]string{}
		for _, d := range bi.Deps {
			linked[d.Path] = d.Version
			if listedMods[d.Path] != d.Version {
				t.Errorf("%s: the binary links %s %s, the SBOM lists %q", sbom, d.Path, d.Version, listedMods[d.Path])
			}
		}
		n := 0
		for path, version := range mods {
			if _, ok := linked[path]; !ok {
				continue
			}
			n++
			if listedMods[path] != version {
				t.Errorf("%s: go.mod requires %s %s, the SBOM lists %q", sbom, path, version, listedMods[path])
			}
		}
		if n < 5 {
			t.Errorf("%s: only %d modules of go.mod are linked into %s: the build information is not what make release builds", sbom, n, bin)
		}
		if _, ok := listedMods["std"]; !ok {
			t.Errorf("%s lists no Go standard library (cyclonedx-gomod -std)", sbom)
		}
		if _, ok := listedMods[bi.Main.Path]; !ok {
			t.Errorf("%s does not name the main module %s", sbom, bi.Main.Path)
		}
		t.Logf("%s: %d modules, %d of go.mod's linked; revision %s", sbom, len(listedMods), n, settings["vcs.revision"])
	}
}

// goModRequires are go.mod's requirements, path to version.
func goModRequires(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", "../go.mod").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	reqs := map[string]string{}
	for _, r := range mod.Require {
		reqs[r.Path] = r.Version
	}
	return reqs
}

// sbomModules are the modules a CycloneDX document names, path to
// version: its metadata component and its components, at any depth.
func sbomModules(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type component struct {
		Name       string      `json:"name"`
		Version    string      `json:"version"`
		Components []component `json:"components"`
	}
	var doc struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component component `json:"component"`
		} `json:"metadata"`
		Components []component `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.BOMFormat != "CycloneDX" {
		t.Fatalf("%s: bomFormat %q, want CycloneDX", path, doc.BOMFormat)
	}
	mods := map[string]string{}
	var walk func([]component)
	walk = func(cs []component) {
		for _, c := range cs {
			mods[c.Name] = c.Version
			walk(c.Components)
		}
	}
	walk(append([]component{doc.Metadata.Component}, doc.Components...))
	return mods
}
