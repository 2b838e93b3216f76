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

// BuildImage builds the test bed's images, all labelled Label: the
// stand-ins of the vendors' images (Standins()) from one context, a
// release image of this tree (the binary and the provider jar, as the
// Dockerfile's release target lays them out), and on each stand-in the
// project Dockerfile's own target, tagged tag plus the stand-in's suffix:
// tag itself is the confluent target on the cp-kafka-connect 7.9
// stand-in. dir is a scratch directory for the build contexts.
func BuildImage(ctx context.Context, dir, tag string, dist *testbed.Dist) error {
	if err := buildStandins(ctx, filepath.Join(dir, "standins"), tag, dist); err != nil {
		return err
	}
	release := tag + "-release"
	if err := buildRelease(ctx, filepath.Join(dir, "release"), release); err != nil {
		return err
	}
	return buildShipped(ctx, filepath.Join(dir, "shipped"), tag, release)
}

// buildRelease builds the release image of this tree: FROM scratch,
// /connect-init (static) and /connect-init-provider.jar, what the
// Dockerfile's release target holds (its Go and Maven stages pull images
// the bed cannot reach).
func buildRelease(ctx context.Context, dir, tag string) error {
	if _, err := testbed.BuildConnectInit(mkdir(dir), "containerbed"); err != nil {
		return err
	}
	jar, err := testbed.ProviderJar()
	if err != nil {
		return err
	}
	if err := copyFile(jar, filepath.Join(dir, "connect-init-provider.jar"), 0o644); err != nil {
		return err
	}
	df := "FROM scratch\nCOPY connect-init /connect-init\nCOPY connect-init-provider.jar /connect-init-provider.jar\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	if _, err := Docker(ctx, "build", "-q", "--label", Label, "-t", tag, dir); err != nil {
		return fmt.Errorf("containerbed: build the release image: %w", err)
	}
	return nil
}

// buildShipped builds the project Dockerfile's target of each stand-in on
// it, with the binary and the jar from the release image.
func buildShipped(ctx context.Context, dir, tag, release string) error {
	root, err := testbed.RepoRoot()
	if err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		return err
	}
	df, err := shippedDockerfile(string(src))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(mkdir(dir), "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	// The classic builder builds the stages before a target too: every
	// base argument names a stand-in, the first of each (the default
	// cp-kafka-connect 7.9 for CP_BASE) unless it is the target's own.
	bases := map[string]string{}
	for _, s := range Standins() {
		if s.BaseArg != "" && bases[s.BaseArg] == "" {
			bases[s.BaseArg] = s.VendorTag(tag)
		}
	}
	for _, s := range Standins() {
		if s.Shipped == "" {
			continue
		}
		args := []string{"build", "-q", "--label", Label, "--target", s.Shipped, "--build-arg", "RELEASE=" + release}
		for arg, base := range bases {
			if arg == s.BaseArg {
				base = s.VendorTag(tag)
			}
			args = append(args, "--build-arg", arg+"="+base)
		}
		if _, err := Docker(ctx, append(args, "-t", tag+s.Suffix, dir)...); err != nil {
			return fmt.Errorf("containerbed: build the Dockerfile's %s target on the %s stand-in: %w", s.Shipped, s.Target, err)
		}
	}
	return nil
}

// builderStages are the stages of the project's Dockerfile before its
// dist stage: they build the binary and the jar from source on golang and
// maven images, which the bed cannot pull, so the bed gives their result
// as the release image (ARG RELEASE) instead.
var builderStages = []string{"build", "provider", "release"}

// shippedDockerfile is the project's Dockerfile from its dist stage on,
// after its global arguments: every instruction of the targets users
// build, unchanged. Docker's classic builder (the bed's daemon has no
// BuildKit client) builds every stage before the target, so the builder
// stages are cut; any other stage before dist is an error, so that a
// stage added there is not silently left out of the tests.
func shippedDockerfile(src string) (string, error) {
	lines := strings.Split(src, "\n")
	var head, tail []string
	var cut []string
	inDist := false
	stage := ""
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && strings.EqualFold(f[0], "FROM") {
			stage = f[len(f)-1]
			if len(f) >= 4 && strings.EqualFold(f[len(f)-2], "AS") && stage == "dist" {
				inDist = true
			}
			if !inDist {
				cut = append(cut, stage)
			}
		}
		switch {
		case inDist:
			tail = append(tail, l)
		case stage == "":
			head = append(head, l)
		}
	}
	if !inDist {
		return "", fmt.Errorf("containerbed: the Dockerfile has no stage dist: the bed builds the targets from it on")
	}
	if strings.Join(cut, ",") != strings.Join(builderStages, ",") {
		return "", fmt.Errorf("containerbed: the Dockerfile's stages before dist are %v, the bed cuts only %v: a new stage there would not be tested", cut, builderStages)
	}
	return strings.Join(head, "\n") + "\n" + strings.Join(tail, "\n"), nil
}

// buildStandins builds the stand-ins of the vendors' images, each tagged
// its VendorTag.
func buildStandins(ctx context.Context, dir, tag string, dist *testbed.Dist) error {
	root := filepath.Join(dir, "rootfs")
	if err := buildBedctl(ctx, mkdir(filepath.Join(root, "usr/bin"))); err != nil {
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
		if _, err := Docker(ctx, "build", "-q", "--label", Label, "--target", s.Target, "-t", s.VendorTag(tag), dir); err != nil {
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
