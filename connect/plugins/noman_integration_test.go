//go:build integration

package plugins

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	nomanOnce sync.Once
	nomanDir  string
	nomanErr  error
	// nomanWork is the build's directory, removed when the tests end.
	nomanWork string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if nomanWork != "" {
		os.RemoveAll(nomanWork)
	}
	os.Exit(code)
}

// nomanJarDir builds, once per test binary, the real plugin without
// ServiceLoader manifests from testdata/noman-src: javac (--release 11)
// against the test bed's Kafka jars, then `jar` with an
// Implementation-Version: 2.5.0 manifest and no META-INF/services. It
// returns the plugin directory holding noman-2.5.0.jar (built, never
// committed).
func nomanJarDir(t *testing.T) string {
	t.Helper()
	libs, _ := kafkaLibs(t)
	nomanOnce.Do(func() { nomanDir, nomanErr = buildNoman(libs) })
	if nomanErr != nil {
		t.Fatal(nomanErr)
	}
	return nomanDir
}

// buildNoman compiles and packs the plugin into a directory of its own.
func buildNoman(libs string) (string, error) {
	src, err := filepath.Abs(filepath.Join("testdata", "noman-src"))
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "connect-init-noman-")
	if err != nil {
		return "", err
	}
	nomanWork = work
	var sources []string
	err = filepath.Walk(filepath.Join(src, "com"), func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			sources = append(sources, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	classes, dir := filepath.Join(work, "classes"), filepath.Join(work, "noman")
	manifest := filepath.Join(work, "manifest.txt")
	if err := os.WriteFile(manifest, []byte("Implementation-Title: noman\nImplementation-Version: 2.5.0\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	steps := [][]string{
		append([]string{"javac", "--release", "11", "-cp", libs + "/*", "-d", classes}, sources...),
		{"jar", "--create", "--file", filepath.Join(dir, "noman-2.5.0.jar"), "--manifest", manifest, "-C", classes, "."},
	}
	for _, argv := range steps {
		if out, err := exec.CommandContext(context.Background(), argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return "", &buildError{argv: argv, out: string(out), err: err}
		}
	}
	return dir, nil
}

// buildError is a failed javac or jar run, with its output.
type buildError struct {
	argv []string
	out  string
	err  error
}

func (e *buildError) Error() string {
	return e.argv[0] + ": " + e.err.Error() + "\n" + e.out
}

// TestScanJavacPlugin scans noman-2.5.0.jar, a plugin compiled by javac
// without manifests (nomanJarDir), and expects exactly the plugins a real
// Kafka 4.1.1 worker listed for it as "missing ServiceLoader manifests"
// under plugin.discovery=hybrid_warn: the connector behind an abstract
// base, the public nested transformations; not the abstract,
// package-private or helper classes.
func TestScanJavacPlugin(t *testing.T) {
	pp := t.TempDir()
	mustSymlink(t, nomanJarDir(t), filepath.Join(pp, "noman"))
	inv, err := Scan(context.Background(), Options{PluginPath: pp})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range inv.Plugins {
		got = append(got, p.Class+" "+string(p.Kind)+" "+p.Version+" "+string(p.VersionFrom)+" "+string(p.Found))
	}
	want := []string{
		"com.example.noman.NoManifestSourceConnector source 2.5.0 manifest scan",
		"com.example.noman.Upper$Key transformation 2.5.0 manifest scan",
		"com.example.noman.Upper$Value transformation 2.5.0 manifest scan",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plugins:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(inv.Problems) > 0 {
		t.Errorf("problems: %v", inv.Problems)
	}
}
