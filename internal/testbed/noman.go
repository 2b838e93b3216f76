package testbed

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NoManifestPlugin returns a plugin directory holding noman-2.5.0.jar, a
// real Connect plugin without ServiceLoader manifests, built from
// connect/plugins/testdata/noman-src: javac (--release 11) against d's
// jars, then `jar` with an Implementation-Version: 2.5.0 manifest and no
// META-INF/services. It is a build output, made once per Kafka version in
// CacheDir (never committed) and reused; the source's README says what
// it holds and what a real worker found in it.
func NoManifestPlugin(d *Dist) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "noman-"+d.Version, "noman")
	if _, err := os.Stat(filepath.Join(dir, "noman-2.5.0.jar")); err == nil {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(cache, "noman-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	built, err := buildNoman(filepath.Join(root, "connect", "plugins", "testdata", "noman-src"), d.LibDir, work)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	// A concurrent build may have won: its jar is the same.
	if err := os.Rename(built, dir); err != nil && !exists(dir) {
		return "", fmt.Errorf("noman plugin: %w", err)
	}
	return dir, nil
}

// buildNoman compiles src's classes against libs and packs them into
// work/noman/noman-2.5.0.jar; it returns work/noman.
func buildNoman(src, libs, work string) (string, error) {
	var sources []string
	err := filepath.Walk(filepath.Join(src, "com"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			sources = append(sources, p)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("noman plugin: %w", err)
	}
	classes, out := filepath.Join(work, "classes"), filepath.Join(work, "noman")
	manifest := filepath.Join(work, "manifest.txt")
	if err := os.WriteFile(manifest, []byte("Implementation-Title: noman\nImplementation-Version: 2.5.0\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	for _, argv := range [][]string{
		append([]string{"javac", "--release", "11", "-cp", filepath.Join(libs, "*"), "-d", classes}, sources...),
		{"jar", "--create", "--file", filepath.Join(out, "noman-2.5.0.jar"), "--manifest", manifest, "-C", classes, "."},
	} {
		if b, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("noman plugin: %s: %w\n%s", argv[0], err, b)
		}
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
