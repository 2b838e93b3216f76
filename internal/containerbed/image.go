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

// runScript is the stand-in for Confluent's /etc/confluent/docker/run
// (cp-kafka-connect: configure, then launch). Like the real one it insists
// on the settings its configure step "dub ensure"s, renders every CONNECT_*
// variable but CONNECT_METRIC_REPORTERS into the worker file with dub's
// rule (strip CONNECT_, lower-case, a lone "_" between two non-"_" is ".",
// then "___" is "-" and "__" is "_"), one raw name=value line each, and
// execs the worker on that file. HOST and PORT0 fill the advertised host
// and port as Confluent's configure does.
const runScript = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's cp-kafka-connect launcher.
set -e
if [ -n "${HOST:-}" ] && [ -z "${CONNECT_REST_ADVERTISED_HOST_NAME:-}" ]; then export CONNECT_REST_ADVERTISED_HOST_NAME="$HOST"; fi
if [ -n "${PORT0:-}" ] && [ -z "${CONNECT_REST_ADVERTISED_PORT:-}" ]; then export CONNECT_REST_ADVERTISED_PORT="$PORT0"; fi
for v in CONNECT_BOOTSTRAP_SERVERS CONNECT_GROUP_ID CONNECT_CONFIG_STORAGE_TOPIC CONNECT_OFFSET_STORAGE_TOPIC \
         CONNECT_STATUS_STORAGE_TOPIC CONNECT_KEY_CONVERTER CONNECT_VALUE_CONVERTER CONNECT_REST_ADVERTISED_HOST_NAME; do
  eval "x=\${$v:-}"
  if [ -z "$x" ]; then echo "$v is required." >&2; exit 1; fi
done
awk 'BEGIN {
  for (k in ENVIRON) {
    if (k !~ /^CONNECT_/ || k == "CONNECT_METRIC_REPORTERS") continue
    raw = tolower(substr(k, 9)); out = ""
    for (i = 1; i <= length(raw); i++) {
      c = substr(raw, i, 1)
      if (c == "_" && i > 1 && i < length(raw) && substr(raw, i-1, 1) != "_" && substr(raw, i+1, 1) != "_") c = "."
      out = out c
    }
    gsub(/___/, "-", out); gsub(/__/, "_", out)
    print out "=" ENVIRON[k]
  }
}' > /etc/kafka-connect/kafka-connect.properties
exec java ${KAFKA_HEAP_OPTS:--Xms128m -Xmx256m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true \
  -Dlog4j2.configurationFile=/etc/kafka/log4j2.properties ${KAFKA_OPTS:-} \
  -cp '/opt/kafka/libs/*' org.apache.kafka.connect.cli.ConnectDistributed /etc/kafka-connect/kafka-connect.properties
`

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

const dockerfile = `FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN mkdir -p /tmp /etc/kafka-connect /home/appuser /var/lib/kafka/data && chmod 1777 /tmp && chown 1000:1000 /etc/kafka-connect /home/appuser /var/lib/kafka/data
ENV PATH=/usr/bin:/bin:/usr/lib/jvm/jre/bin JAVA_HOME=/usr/lib/jvm/jre
USER 1000
ENTRYPOINT ["connect-init", "run", "--"]
CMD ["/etc/confluent/docker/run"]
`

// BuildImage builds the test bed's one image, tagged tag and labelled
// Label: brokers and workers both run it (brokers with the entrypoint
// kafka-node). dir is a scratch directory for the build context.
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
	if err := copyTree(dist.LibDir, filepath.Join(root, "opt/kafka/libs")); err != nil {
		return err
	}
	files := map[string]string{
		"etc/confluent/docker/run":    runScript,
		"usr/bin/kafka-node":          kafkaScript,
		"etc/kafka/docker/run":        apacheRunScript,
		"etc/kafka/log4j2.properties": log4j2,
		"etc/passwd":                  "root:x:0:0:root:/root:/bin/sh\nappuser:x:1000:1000:appuser:/home/appuser:/bin/sh\n",
		"etc/group":                   "root:x:0:\nappuser:x:1000:\n",
		"etc/nsswitch.conf":           "hosts: files dns\n",
	}
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "usr/bin/") || strings.HasSuffix(name, "/run") { // executables
			mode = 0o755
		}
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return err
	}
	_, err = Docker(ctx, "build", "-q", "--label", Label, "-t", tag, dir)
	return err
}

// BuildKafkaImage tags a variant of image whose default command is the
// apache/kafka stand-in (/etc/kafka/docker/run), for files that run
// brokers from apache/kafka without their own entrypoint.
func BuildKafkaImage(ctx context.Context, dir, image, tag string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	df := "FROM " + image + "\nENTRYPOINT []\nCMD [\"/etc/kafka/docker/run\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return err
	}
	_, err := Docker(ctx, "build", "-q", "--label", Label, "-t", tag, dir)
	return err
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
