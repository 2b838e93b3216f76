// Package testbed runs real Apache Kafka brokers (KRaft, combined
// broker+controller) and real Kafka Connect distributed workers as local
// processes for connect-init's integration tests, benchmarks and demo.
//
// The jars come from Maven Central through testbed/pom.xml, once per machine
// and Kafka version, into the ignored .cache/ folder of the repository (or
// $CITEST_CACHE). Every process the package starts is put in its own
// process group, tied to the parent with PDEATHSIG and registered, so that
// Close/KillAll and even a crashed test binary leave nothing behind.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultVersion is the Kafka version the suite runs on: the newest 4.x line
// for which Maven Central serves every artifact the test bed needs
// (connect-file 4.4.0 is not served there).
const DefaultVersion = "4.3.1"

// LegacyVersion is the 3.x line many cp-kafka-connect 7.x users run; the
// end-to-end smoke test also runs on it.
const LegacyVersion = "3.9.1"

// Dist is one Kafka version's jars on local disk.
type Dist struct {
	Version string
	LibDir  string
}

// Classpath returns the java -cp value that loads every jar of the version.
func (d *Dist) Classpath() string { return filepath.Join(d.LibDir, "*") }

// Version returns the Kafka version selected by $CITEST_KAFKA_VERSION,
// else DefaultVersion.
func Version() string {
	if v := strings.TrimSpace(os.Getenv("CITEST_KAFKA_VERSION")); v != "" {
		return v
	}
	return DefaultVersion
}

// RepoRoot finds the repository root (the directory holding go.mod) from
// the working directory, so tests in any package find testbed/pom.xml.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "testbed", "pom.xml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbed: no testbed/pom.xml above the working directory")
		}
		dir = parent
	}
}

// CacheDir is where downloaded jars live: $CITEST_CACHE, else
// <repo>/.cache.
func CacheDir() (string, error) {
	if d := os.Getenv("CITEST_CACHE"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache"), nil
}

// Fetch makes sure the jars of Kafka version are on disk and returns them.
// The first caller on a machine runs Maven (a few seconds to a minute);
// concurrent callers (test packages run in parallel) wait on a file lock.
func Fetch(ctx context.Context, version string) (*Dist, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	cache, err := CacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, fmt.Errorf("testbed: create cache %s: %w", cache, err)
	}
	dist := &Dist{Version: version, LibDir: filepath.Join(cache, "kafka-"+version, "libs")}
	done := filepath.Join(dist.LibDir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dist, nil
	}

	lockFile, err := os.OpenFile(filepath.Join(cache, "kafka-"+version+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbed: open fetch lock: %w", err)
	}
	defer lockFile.Close()
	if err := syscall.Flock(int(lockFile.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("testbed: take fetch lock: %w", err)
	}
	defer syscall.Flock(int(lockFile.Fd()), syscall.LOCK_UN) //nolint:errcheck
	if _, err := os.Stat(done); err == nil {
		return dist, nil
	}

	tmp := dist.LibDir + ".partial"
	_ = os.RemoveAll(tmp)
	mvn := exec.CommandContext(ctx, "mvn", "-q", "-B", "-f", filepath.Join(root, "testbed", "pom.xml"),
		"-Dkafka.version="+version, "dependency:copy-dependencies", "-DoutputDirectory="+tmp)
	out, err := mvn.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("testbed: fetch Kafka %s with Maven: %w\n%s", version, err, tail(string(out), 3000))
	}
	_ = os.RemoveAll(dist.LibDir)
	if err := os.Rename(tmp, dist.LibDir); err != nil {
		return nil, fmt.Errorf("testbed: install Kafka %s jars: %w", version, err)
	}
	if err := os.WriteFile(done, []byte(version+"\n"), 0o644); err != nil {
		return nil, err
	}
	return dist, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
