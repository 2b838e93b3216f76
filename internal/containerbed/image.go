package containerbed

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/internal/testbed"
)

// kafkaScript starts broker $NODE_ID of a 3-node KRaft cluster whose nodes
// are the services kafka-1..3: PLAINTEXT on 9092, SSL on 9093 (stores
// from the secrets kafka.keystore.p12 / kafka.truststore.p12, password
// $STORE_PASSWORD), the controller on 9094.
const kafkaScript = `#!/bin/sh
set -ef
n=$NODE_ID
mkdir -p /tmp/kraft
{
echo "process.roles=broker,controller"
echo "node.id=$n"
echo "controller.quorum.voters=1@kafka-1:9094,2@kafka-2:9094,3@kafka-3:9094"
echo "listeners=PLAINTEXT://:9092,SSL://:9093,CONTROLLER://:9094"
echo "advertised.listeners=PLAINTEXT://kafka-$n:9092,SSL://kafka-$n:9093"
echo "controller.listener.names=CONTROLLER"
echo "inter.broker.listener.name=PLAINTEXT"
echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT"
echo "log.dirs=/tmp/kraft/data"
echo "offsets.topic.replication.factor=3"
echo "transaction.state.log.replication.factor=3"
echo "group.initial.rebalance.delay.ms=0"
echo "ssl.keystore.type=PKCS12"
echo "ssl.keystore.location=/run/secrets/kafka.keystore.p12"
echo "ssl.keystore.password=$STORE_PASSWORD"
echo "ssl.key.password=$STORE_PASSWORD"
echo "ssl.truststore.type=PKCS12"
echo "ssl.truststore.location=/run/secrets/kafka.truststore.p12"
echo "ssl.truststore.password=$STORE_PASSWORD"
} > /tmp/server.properties
J="java -Xms128m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true -Dlog4j2.configurationFile=/etc/kafka/log4j2.properties -cp /opt/kafka/libs/*"
$J kafka.tools.StorageTool format -t "$CLUSTER_ID" -c /tmp/server.properties --ignore-formatted
exec $J kafka.Kafka /tmp/server.properties
`

// apacheRunScript is the stand-in for the apache/kafka image's
// /etc/kafka/docker/run, for the Compose example's brokers: every KAFKA_*
// variable but the JVM options becomes a broker property with that image's
// rule (strip KAFKA_, lower-case, "___" is "-", "__" is "_", "_" is "."),
// the storage is formatted with $CLUSTER_ID, and the broker runs.
const apacheRunScript = `#!/bin/sh
set -ef
awk 'BEGIN {
  for (k in ENVIRON) {
    if (k !~ /^KAFKA_/ || k ~ /^KAFKA_(HEAP_OPTS|OPTS|LOG4J_OPTS|JMX_OPTS|JVM_PERFORMANCE_OPTS|GC_LOG_OPTS|VERSION)$/) continue
    p = tolower(substr(k, 7))
    gsub(/___/, "\001", p); gsub(/__/, "\002", p); gsub(/_/, ".", p); gsub(/\001/, "-", p); gsub(/\002/, "_", p)
    print p "=" ENVIRON[k]
  }
}' > /tmp/server.properties
J="java -Xms128m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true -Dlog4j2.configurationFile=/etc/kafka/log4j2.properties -cp /opt/kafka/libs/*"
$J kafka.tools.StorageTool format -t "$CLUSTER_ID" -c /tmp/server.properties --ignore-formatted
exec $J kafka.Kafka /tmp/server.properties
`

const log4j2 = `status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.reflections.name = org.reflections
logger.reflections.level = error
logger.jetty.name = org.eclipse.jetty
logger.jetty.level = warn
`

// BuildImage builds the test bed's stand-in images (Standins()) from one
// context, each tagged tag plus its suffix and labelled Label: tag itself
// is the cp-kafka-connect 7.9 stand-in. dir is a scratch directory for
// the build context.
func BuildImage(ctx context.Context, dir, tag string, dist *testbed.Dist) error {
	root := filepath.Join(dir, "rootfs")
	if _, err := testbed.BuildConnectInit(mkdir(filepath.Join(root, "usr/bin")), "containerbed"); err != nil {
		return err
	}
	if err := buildBedctl(ctx, filepath.Join(root, "usr/bin")); err != nil {
		return err
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("containerbed: static busybox not found (apt-get install busybox-static): %w", err)
	}
	if err := copyFile(busybox, filepath.Join(root, "bin/busybox"), 0o755); err != nil {
		return err
	}
	javaBin, err := exec.LookPath("java")
	if err != nil {
		return fmt.Errorf("containerbed: no java on PATH: %w", err)
	}
	if javaBin, err = filepath.EvalSymlinks(javaBin); err != nil {
		return err
	}
	javaHome := filepath.Dir(filepath.Dir(javaBin))
	jre := filepath.Join(root, "usr/lib/jvm/jre")
	for _, sub := range []string{"bin", "lib", "conf"} {
		if err := copyTree(filepath.Join(javaHome, sub), filepath.Join(jre, sub)); err != nil {
			return err
		}
	}
	libs, err := sharedLibs(ctx, javaHome)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if err := copyFile(l, filepath.Join(root, l), 0o755); err != nil {
			return err
		}
	}
	if err := splitJars(dist.LibDir, filepath.Join(dir, "jars")); err != nil {
		return err
	}
	files := map[string]string{
		"rootfs/etc/kafka/log4j2.properties": log4j2,
		"rootfs/etc/passwd":                  "root:x:0:0:root:/root:/bin/sh\n",
		"rootfs/etc/group":                   "root:x:0:\n",
		"rootfs/etc/nsswitch.conf":           "hosts: files dns\n",
		"Dockerfile":                         standinDockerfile,
	}
	for image, fs := range standinFiles {
		for name, content := range fs {
			files[filepath.Join("files", image, name)] = content
		}
	}
	for name, content := range files {
		mode := os.FileMode(0o644)
		if isExecutable(name) {
			mode = 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			return err
		}
	}
	for _, s := range Standins() {
		if _, err := Docker(ctx, "build", "-q", "--label", Label, "--target", s.Target, "-t", tag+s.Suffix, dir); err != nil {
			return fmt.Errorf("containerbed: build stand-in %s: %w", s.Target, err)
		}
	}
	return nil
}

// isExecutable says which of the stand-ins' files are programs: scripts
// in a bin directory, the launchers, and the entry scripts.
func isExecutable(name string) bool {
	base := filepath.Base(name)
	switch {
	case strings.Contains(name, "/bin/"), strings.HasSuffix(name, ".sh"):
		return true
	case strings.Contains(name, "etc/confluent/docker/") && !strings.Contains(base, ".") && base != "bash-config" && base != "apply-mesos-overrides":
		return true
	case strings.HasSuffix(name, "etc/kafka/docker/run"):
		return true
	}
	return false
}

// splitJars copies Kafka's jars to out/kafka and the file connectors'
// (connect-file-*.jar) to out/file: every image keeps them apart, on the
// classpath or not, as its own layout does.
func splitJars(libDir, out string) error {
	entries, err := os.ReadDir(libDir)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jar") {
			continue
		}
		sub := "kafka"
		if strings.HasPrefix(e.Name(), "connect-file-") {
			sub = "file"
			n++
		}
		if err := copyFile(filepath.Join(libDir, e.Name()), filepath.Join(out, sub, e.Name()), 0o644); err != nil {
			return err
		}
	}
	if n != 1 {
		return fmt.Errorf("containerbed: %d connect-file jars in %s, want 1", n, libDir)
	}
	return nil
}

func mkdir(p string) string {
	_ = os.MkdirAll(p, 0o755)
	return p
}

func buildBedctl(ctx context.Context, outDir string) error {
	root, err := testbed.RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(outDir, "bedctl"), "./internal/containerbed/bedctl")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("containerbed: build bedctl: %w\n%s", err, out)
	}
	return nil
}

var lddPath = regexp.MustCompile(`(?m)(/\S+)\s+\(0x`)

// sharedLibs lists the host libraries the Java runtime's executables and
// shared objects load (ldd), the dynamic loader included.
func sharedLibs(ctx context.Context, javaHome string) ([]string, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(javaHome, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(p, ".so") && filepath.Base(filepath.Dir(p)) != "bin" {
			return nil
		}
		out, _ := exec.CommandContext(ctx, "ldd", p).Output()
		for _, m := range lddPath.FindAllStringSubmatch(string(out), -1) {
			if !strings.Contains(m[1], "/jvm/") {
				seen[m[1]] = true
			}
		}
		return nil
	})
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) == 0 && err == nil {
		err = fmt.Errorf("containerbed: ldd found no libraries for %s", javaHome)
	}
	return out, err
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src) // follows symlinks: the image gets the file
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

// copyTree copies src to dst, following symlinks (Debian's JDK links its
// conf files to /etc/java-17-openjdk).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := os.Stat(p)
		if err != nil {
			return nil // a dangling link: Debian ships a few
		}
		if info.IsDir() {
			if d.Type()&fs.ModeSymlink != 0 {
				return copyTree(p+"/", target)
			}
			return os.MkdirAll(target, 0o755)
		}
		if filepath.Base(p) == "src.zip" {
			return nil
		}
		return copyFile(p, target, info.Mode().Perm())
	})
}
