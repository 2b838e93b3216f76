package containerbed

// The stand-ins for the images connect-init runs in. Each is written for
// this test bed after the image's own source (docs/containers-tested.md
// names the file of each behaviour and what is left out); none is a copy.
// They share one base stage (busybox, the host's Java runtime, bedctl)
// and differ where connect-init and Connect look: the launcher's steps and
// the variables each requires, the file the worker settings are rendered
// to, the Java library directories, the plugin directories and the
// default CONNECT_PLUGIN_PATH, where Kafka's file connectors
// (connect-file-*.jar) lie, the user, and the start command. connect-init
// and its provider jar are not in them: the bed builds the project's own
// Dockerfile targets on them (Standin.Shipped), so the scenarios run the
// layers users get, the in-worker startup lock included.

// Stand-in is one image the bed builds.
type Standin struct {
	// Target is the stage of the bed's Dockerfile: the stand-in for the
	// vendor's image, without connect-init.
	Target string
	// Shipped is the target of the project's Dockerfile built on the
	// stand-in, as users build it on the vendor's image ("" for an image
	// without connect-init in front: the brokers').
	Shipped string
	// BaseArg is the build argument of the project's Dockerfile that
	// names Shipped's base image.
	BaseArg string
	// Suffix is appended to the bed's image tag ("" for the default).
	Suffix string
	// Flavour is the image flavour connect-init must detect in it
	// ("" for an image without connect-init in front).
	Flavour string
	// Image is the real image it stands for.
	Image string
}

// Standins are the bed's images, the default (cp-kafka-connect 7.9, dub)
// first: a function, so that no importer can change the list.
func Standins() []Standin {
	return []Standin{
		{Target: "cp-dub", Shipped: "confluent", BaseArg: "CP_BASE", Suffix: "", Flavour: "confluent-dub", Image: "confluentinc/cp-kafka-connect:7.9.x (dub)"},
		{Target: "cp-ub", Shipped: "confluent", BaseArg: "CP_BASE", Suffix: "-ub", Flavour: "confluent-ub", Image: "confluentinc/cp-kafka-connect:8.1.x (ub)"},
		{Target: "debezium", Shipped: "debezium", BaseArg: "DEBEZIUM_BASE", Suffix: "-debezium", Flavour: "debezium", Image: "quay.io/debezium/connect:3.x"},
		{Target: "apache", Shipped: "apache", BaseArg: "KAFKA_BASE", Suffix: "-apache-connect", Flavour: "apache", Image: "apache/kafka:4.x with connect-init and connect-distributed.sh"},
		{Target: "apache", Suffix: "-apache", Flavour: "", Image: "apache/kafka:4.x (brokers)"},
	}
}

// VendorTag is the tag of the stand-in itself, the base image of the
// shipped target; for an image without connect-init it is the final tag.
func (s Standin) VendorTag(tag string) string {
	if s.Shipped == "" {
		return tag + s.Suffix
	}
	return tag + "-vendor-" + s.Target
}

// jvmOpts are the bed's JVM options, in place of the images' own heap
// defaults (-Xms256M -Xmx2G): a 2-core CI machine runs up to a dozen JVMs.
const jvmOpts = `${KAFKA_HEAP_OPTS:--Xms128m -Xmx256m} -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true -Dlog4j2.configurationFile=/etc/kafka/log4j2.properties`

// standinDockerfile builds every stand-in from one context: rootfs/ is
// the base, jars/kafka/ Kafka's jars but connect-file, jars/file/ the file
// connectors' jar, and one directory of files per image. The stand-ins
// are the vendors' images, without connect-init: the bed builds the
// project's Dockerfile on them (shippedDockerfile).
const standinDockerfile = `FROM scratch AS base
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN mkdir -p /tmp && chmod 1777 /tmp
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/lib/jvm/jre/bin JAVA_HOME=/usr/lib/jvm/jre

# apache/kafka 4.x: Kafka's tarball in /opt/kafka (connect-file in libs/,
# which kafka-run-class.sh leaves off the classpath), appuser (uid 1000),
# CMD the broker launcher. kafka-node is the bed's own broker launcher.
FROM base AS apache
COPY jars/kafka/ /opt/kafka/libs/
COPY jars/file/ /opt/kafka/libs/
COPY files/apache/ /
RUN mkdir -p /var/lib/kafka/data /etc/kafka/secrets /etc/kafka/docker /usr/logs /mnt/shared/config /home/appuser /etc/kafka-connect \
 && chown -R 1000:1000 /usr/logs /opt/kafka /mnt/shared/config /home/appuser /etc/kafka-connect \
 && chown -R 1000:0 /var/lib/kafka /etc/kafka/secrets /etc/kafka
USER appuser
EXPOSE 9092
CMD ["/etc/kafka/docker/run"]


# cp-kafka-connect: Kafka's jars in /usr/share/java/kafka, the file
# connectors in /usr/share/filestream-connectors (on no default path),
# CONNECT_PLUGIN_PATH=/usr/share/java/,/usr/share/confluent-hub-components/,
# appuser (uid 1000), the worker file /etc/kafka-connect/kafka-connect.properties.
FROM base AS confluent
COPY jars/kafka/ /usr/share/java/kafka/
COPY jars/file/ /usr/share/filestream-connectors/
COPY files/confluent/ /
ENV COMPONENT=kafka-connect
RUN mkdir -p /etc/kafka-connect/secrets /etc/kafka-connect/jars /usr/share/confluent-hub-components /etc/kafka /usr/logs /var/lib/kafka/data /home/appuser \
 && chown -R 1000:0 /etc/kafka /etc/kafka-connect /usr/logs /usr/share/confluent-hub-components /var/lib/kafka \
 && chown -R 1000:1000 /etc/confluent/docker /home/appuser
ENV CONNECT_PLUGIN_PATH=/usr/share/java/,/usr/share/confluent-hub-components/
USER appuser
WORKDIR /home/appuser
EXPOSE 8083
CMD ["/etc/confluent/docker/run"]

# Up to CP 8.0: Python's dub and cub in /usr/local/bin, a Jinja template.
FROM confluent AS cp-dub
COPY files/dub/ /

# From CP 8.1: Go's ub in /usr/bin, a Go template.
FROM confluent AS cp-ub
COPY files/ub/ /

# debezium/connect 3.x: Kafka's tarball in /kafka (KAFKA_HOME), its
# config files in /kafka/config.orig, plugins in /kafka/connect, user
# kafka (uid 1001), ENTRYPOINT /docker-entrypoint.sh, CMD start.
FROM base AS debezium
COPY jars/kafka/ /kafka/libs/
COPY jars/file/ /kafka/libs/
COPY files/debezium/ /
ENV KAFKA_HOME=/kafka KAFKA_DATA=/kafka/data KAFKA_CONNECT_PLUGINS_DIR=/kafka/connect EXTERNAL_LIBS_DIR=/kafka/external_libs MAVEN_DEP_DESTINATION=/kafka/libs
# One ENV instruction as in connect-base: CONNECT_PLUGIN_PATH takes
# KAFKA_CONNECT_PLUGINS_DIR's value from before it, i.e. empty, and the
# entrypoint fills it.
ENV CONNECT_PLUGIN_PATH=
RUN mkdir -p /kafka/data /kafka/logs /kafka/config /kafka/connect /kafka/external_libs && chown -R 1001:1001 /kafka && chmod -R g+w,o+w /kafka
USER kafka
WORKDIR /kafka
EXPOSE 8083
ENTRYPOINT ["/docker-entrypoint.sh"]
CMD ["start"]
`

// standinFiles are the files of each image directory under files/.
var standinFiles = map[string]map[string]string{
	"apache": {
		"etc/passwd":                                      "root:x:0:0:root:/root:/bin/sh\nappuser:x:1000:1000:Linux User,,,:/home/appuser:/bin/sh\n",
		"etc/group":                                       "root:x:0:\nappuser:x:1000:appuser\n",
		"etc/kafka/docker/run":                            apacheRunScript,
		"opt/kafka/bin/kafka-run-class.sh":                kafkaRunClass,
		"opt/kafka/bin/connect-distributed.sh":            connectDistributedSh,
		"opt/kafka/config/connect-distributed.properties": kafkaConnectDistributed,
		"usr/bin/kafka-node":                              kafkaScript,
	},
	"confluent": {
		"etc/passwd":                                 "root:x:0:0:root:/root:/bin/sh\nappuser:x:1000:1000::/home/appuser:/bin/sh\n",
		"etc/group":                                  "root:x:0:\nappuser:x:1000:\n",
		"etc/confluent/docker/bash-config":           confluentBashConfig,
		"etc/confluent/docker/run":                   confluentRun,
		"etc/confluent/docker/apply-mesos-overrides": confluentMesos,
		"etc/confluent/docker/ensure":                confluentEnsureScript,
		"etc/confluent/docker/launch":                confluentLaunch,
		"usr/bin/connect-distributed":                confluentConnectDistributed,
	},
	"dub": {
		"etc/confluent/docker/configure":                         confluentConfigure("dub", `dub template "/etc/confluent/docker/${COMPONENT}.properties.template" "/etc/${COMPONENT}/${COMPONENT}.properties"`),
		"etc/confluent/docker/kafka-connect.properties.template": dubTemplate,
		"usr/local/bin/dub":                                      dubScript,
		"usr/local/bin/cub":                                      kafkaReadyScript,
	},
	"ub": {
		"etc/confluent/docker/configure":                         confluentConfigure("ub", `ub render-template "/etc/confluent/docker/${COMPONENT}.properties.template" > "/etc/${COMPONENT}/${COMPONENT}.properties"`),
		"etc/confluent/docker/kafka-connect.properties.template": ubTemplate,
		"usr/bin/ub": ubScript,
	},
	"debezium": {
		"etc/passwd":                       "root:x:0:0:root:/root:/bin/sh\nkafka:x:1001:1001:Kafka user:/kafka:/sbin/nologin\n",
		"etc/group":                        "root:x:0:\nkafka:x:1001:\n",
		"docker-entrypoint.sh":             debeziumEntrypointScript,
		"kafka/bin/kafka-run-class.sh":     kafkaRunClass,
		"kafka/bin/connect-distributed.sh": connectDistributedSh,
		"kafka/config.orig/connect-distributed.properties": kafkaConnectDistributed,
	},
}

// kafkaRunClass stands for Kafka's bin/kafka-run-class.sh as the
// distribution runs it: $CLASSPATH first, then every file of libs/ but
// test, source and doc jars and connect-file-*.jar (KAFKA-13748, Kafka
// 3.2), then java with the heap, JMX, log4j and extra options.
const kafkaRunClass = `#!/bin/sh
# connect-init test bed: stand-in for Kafka's bin/kafka-run-class.sh.
base_dir=$(cd "$(dirname "$0")/.." && pwd)
cp="${CLASSPATH:-}"
for f in "$base_dir"/libs/*; do
  case "$f" in
    *-test.jar|*-test-sources.jar|*-src.jar|*-scaladoc.jar|*-javadoc.jar|*jar.asc|*/connect-file*.jar) continue ;;
  esac
  if [ -z "$cp" ]; then cp="$f"; else cp="$cp:$f"; fi
done
if [ "${1:-}" = "-name" ]; then shift 2; fi
exec java ` + jvmOpts + ` ${KAFKA_JMX_OPTS:-} ${KAFKA_OPTS:-} -cp "$cp" "$@"
`

// connectDistributedSh stands for Kafka's bin/connect-distributed.sh.
const connectDistributedSh = `#!/bin/sh
# connect-init test bed: stand-in for Kafka's bin/connect-distributed.sh.
if [ $# -lt 1 ]; then echo "USAGE: $0 connect-distributed.properties" >&2; exit 1; fi
exec "$(dirname "$0")/kafka-run-class.sh" -name connectDistributed org.apache.kafka.connect.cli.ConnectDistributed "$@"
`

// kafkaConnectDistributed has the settings of Kafka's
// config/connect-distributed.properties (its commented keys included, as
// Debezium's entrypoint edits them in place).
const kafkaConnectDistributed = `# connect-init test bed: the settings of Kafka's config/connect-distributed.properties.
bootstrap.servers=localhost:9092
group.id=connect-cluster
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.topic=connect-offsets
offset.storage.replication.factor=1
#offset.storage.partitions=25
config.storage.topic=connect-configs
config.storage.replication.factor=1
status.storage.topic=connect-status
status.storage.replication.factor=1
#status.storage.partitions=5
offset.flush.interval.ms=10000
#listeners=HTTP://:8083
#rest.advertised.host.name=
#rest.advertised.port=
#rest.advertised.listener=
#plugin.path=
`

const confluentBashConfig = `# connect-init test bed: stand-in for Confluent's bash-config.
set -o nounset -o errexit
if [ "${TRACE:-}" = "true" ]; then set -o verbose -o xtrace; fi
`

// confluentRun stands for /etc/confluent/docker/run: the Mesos overrides,
// then configure, ensure and launch, each its own script.
const confluentRun = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's /etc/confluent/docker/run.
. /etc/confluent/docker/bash-config
. /etc/confluent/docker/apply-mesos-overrides
echo "===> User"
id
echo "===> Configuring ..."
/etc/confluent/docker/configure
echo "===> Running preflight checks ... "
/etc/confluent/docker/ensure
echo "===> Launching ... "
exec /etc/confluent/docker/launch
`

const confluentMesos = `# connect-init test bed: stand-in for Confluent's apply-mesos-overrides.
if [ -n "${HOST:-}" ] && [ -z "${CONNECT_REST_ADVERTISED_HOST_NAME:-}" ]; then export CONNECT_REST_ADVERTISED_HOST_NAME="$HOST"; fi
if [ -n "${PORT0:-}" ] && [ -z "${CONNECT_REST_ADVERTISED_PORT:-}" ]; then export CONNECT_REST_ADVERTISED_PORT="$PORT0"; fi
if [ -z "${CONNECT_REST_PORT:-}" ]; then export CONNECT_REST_PORT=8083; fi
`

// confluentConfigure is configure with tool (dub or ub) and its render
// line: the eight required variables, the REST port, KAFKA-3988's
// internal-converter fix, the Schema Registry URL an Avro converter
// needs, a writable /etc/kafka-connect, and the worker file.
func confluentConfigure(tool, render string) string {
	return `#!/bin/sh
# connect-init test bed: stand-in for Confluent's configure (` + tool + `).
. /etc/confluent/docker/bash-config
for v in CONNECT_BOOTSTRAP_SERVERS CONNECT_GROUP_ID CONNECT_CONFIG_STORAGE_TOPIC CONNECT_OFFSET_STORAGE_TOPIC \
         CONNECT_STATUS_STORAGE_TOPIC CONNECT_KEY_CONVERTER CONNECT_VALUE_CONVERTER CONNECT_REST_ADVERTISED_HOST_NAME; do
  ` + tool + ` ensure "$v"
done
if [ -z "${CONNECT_REST_PORT:-}" ]; then export CONNECT_REST_PORT=8083; fi
if [ "${CONNECT_INTERNAL_KEY_CONVERTER:-}" = "org.apache.kafka.connect.json.JsonConverter" ] || [ "${CONNECT_INTERNAL_VALUE_CONVERTER:-}" = "org.apache.kafka.connect.json.JsonConverter" ]; then
  export CONNECT_INTERNAL_KEY_CONVERTER_SCHEMAS_ENABLE=false
  export CONNECT_INTERNAL_VALUE_CONVERTER_SCHEMAS_ENABLE=false
fi
if [ "${CONNECT_KEY_CONVERTER:-}" = "io.confluent.connect.avro.AvroConverter" ]; then ` + tool + ` ensure CONNECT_KEY_CONVERTER_SCHEMA_REGISTRY_URL; fi
if [ "${CONNECT_VALUE_CONVERTER:-}" = "io.confluent.connect.avro.AvroConverter" ]; then ` + tool + ` ensure CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL; fi
` + tool + ` path "/etc/${COMPONENT}/" writable
` + render + `
`
}

// confluentEnsureScript stands for ensure: kafka-ready with the image's
// defaults (1 broker, 40 s), by cub (dub images) or ub.
const confluentEnsureScript = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's ensure.
. /etc/confluent/docker/bash-config
echo "===> Check if Kafka is healthy ..."
if command -v cub >/dev/null 2>&1; then tool=cub; else tool="ub"; fi
$tool kafka-ready "${CONNECT_CUB_KAFKA_MIN_BROKERS:-1}" "${CONNECT_CUB_KAFKA_TIMEOUT:-40}" -b "$CONNECT_BOOTSTRAP_SERVERS"
`

// confluentLaunch stands for launch: JMX options, CLASSPATH defaulting to
// the image's jars volume, then connect-distributed on the rendered file.
const confluentLaunch = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's launch.
if [ -z "${KAFKA_JMX_OPTS:-}" ]; then
  export KAFKA_JMX_OPTS="-Dcom.sun.management.jmxremote=true -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
fi
export KAFKA_JMX_HOSTNAME="${KAFKA_JMX_HOSTNAME:-$(hostname -i | cut -d' ' -f1)}"
echo "===> Launching ${COMPONENT} ... "
if [ -z "${CLASSPATH:-}" ]; then export CLASSPATH="/etc/kafka-connect/jars/*"; fi
exec connect-distributed /etc/"${COMPONENT}"/"${COMPONENT}".properties
`

// confluentConnectDistributed stands for the Confluent package's
// /usr/bin/connect-distributed: $CLASSPATH, then /usr/share/java/<lib>/*
// for each of the package's library directories that exists.
const confluentConnectDistributed = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's /usr/bin/connect-distributed.
cp="${CLASSPATH:-}"
for d in confluent-security/connect kafka confluent-common kafka-serde-tools monitoring-interceptors confluent-telemetry; do
  if [ -d "/usr/share/java/$d" ]; then
    if [ -z "$cp" ]; then cp="/usr/share/java/$d/*"; else cp="$cp:/usr/share/java/$d/*"; fi
  fi
done
exec java ` + jvmOpts + ` ${KAFKA_JMX_OPTS:-} ${KAFKA_OPTS:-} -cp "$cp" org.apache.kafka.connect.cli.ConnectDistributed "$@"
`

// dubTemplate is a Jinja template that renders the worker file with
// env_to_props, as cp-kafka-connect's up to CP 8.0.
const dubTemplate = `{#- connect-init test bed: every CONNECT_* variable but the metric reporters, by dub's env_to_props -#}
{%- for name, value in env_to_props('CONNECT_', '', exclude=['CONNECT_METRIC_REPORTERS']).items() %}
{{ name }}={{ value }}
{%- endfor %}
`

// ubTemplate is a Go template that renders it with envToProps, as
// cp-kafka-connect's from CP 8.1.
const ubTemplate = `{{- /* connect-init test bed: every CONNECT_* variable but the metric reporters, by ub's envToProps */ -}}
{{- range $k, $v := envToProps "CONNECT_" "" nil nil (stringSlice "CONNECT_METRIC_REPORTERS") }}
{{ $k }}={{ $v }}
{{- end }}
`

// dubScript stands for Python's dub: ensure (set and not empty), path
// (writable) and template, which renders the template's env_to_props
// call: prefix stripped, lower-cased, a lone "_" between two non-"_" is
// ".", then "___" is "-" and "__" is "_".
const dubScript = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's dub (confluent-docker-utils).
case "${1:-}" in
ensure)
  eval "x=\${$2:-}"
  if [ -z "$x" ]; then echo "$2 is required." >&2; exit 1; fi ;;
path)
  if [ "$3" = writable ] && [ ! -w "$2" ]; then echo "$2 is not writable." >&2; exit 1; fi
  if [ ! -e "$2" ]; then echo "$2 does not exist." >&2; exit 1; fi ;;
template)
  prefix=$(sed -n "s/.*env_to_props('\([^']*\)'.*/\1/p" "$2" | head -n1)
  exclude=$(sed -n "s/.*exclude=\[\([^]]*\)\].*/\1/p" "$2" | tr -d "' ")
  PREFIX="$prefix" EXCLUDE=",$exclude," awk 'BEGIN {
    p = ENVIRON["PREFIX"]
    for (k in ENVIRON) {
      if (index(k, p) != 1 || index(ENVIRON["EXCLUDE"], "," k ",") > 0 || k == "PREFIX" || k == "EXCLUDE") continue
      raw = tolower(substr(k, length(p) + 1)); out = ""
      for (i = 1; i <= length(raw); i++) {
        c = substr(raw, i, 1)
        if (c == "_" && i > 1 && i < length(raw) && substr(raw, i-1, 1) != "_" && substr(raw, i+1, 1) != "_") c = "."
        out = out c
      }
      gsub(/___/, "-", out); gsub(/__/, "_", out)
      print out "=" ENVIRON[k]
    }
  }' > "$3" ;;
*) echo "dub: unknown command ${1:-}" >&2; exit 2 ;;
esac
`

// ubScript stands for Go's ub (cp-docker-utils cmd/ub): ensure (set,
// even empty), path, render-template (to standard output, keys sorted: a
// Go map ranged in a template): the name after the prefix, each "X_Y" (X,
// Y not "_") taken left to right without overlap becomes "X.Y", then "___"
// is "-", "__" is "_", and the result is lower-cased; the template's
// exclusion list is envToProps's excludeProps, compared with the property
// names, so "CONNECT_METRIC_REPORTERS" there excludes nothing; and
// kafka-ready.
const ubScript = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's ub (common-docker/ub).
case "${1:-}" in
ensure)
  eval "x=\${$2+set}"
  if [ -z "$x" ]; then echo "environment variable $2 is unset" >&2; exit 1; fi ;;
path)
  if [ "$3" = writable ] && [ ! -w "$2" ]; then echo "$2 is not writable" >&2; exit 1; fi
  if [ ! -e "$2" ]; then echo "$2 does not exist" >&2; exit 1; fi ;;
render-template)
  prefix=$(sed -n 's/.*envToProps "\([^"]*\)".*/\1/p' "$2" | head -n1)
  exclude=$(sed -n 's/.*stringSlice \([^)]*\)).*/\1/p' "$2" | tr -d '" ')
  PREFIX="$prefix" EXCLUDE=",$exclude," awk 'BEGIN {
    p = ENVIRON["PREFIX"]
    for (k in ENVIRON) {
      if (index(k, p) != 1 || k == "PREFIX" || k == "EXCLUDE") continue
      raw = substr(k, length(p) + 1); out = ""; n = length(raw); i = 1
      while (i <= n) {
        a = substr(raw, i, 1)
        if (i + 2 <= n && a != "_" && substr(raw, i+1, 1) == "_" && substr(raw, i+2, 1) != "_") {
          out = out a "." substr(raw, i+2, 1); i += 3; continue
        }
        out = out a; i++
      }
      gsub(/___/, "-", out); gsub(/__/, "_", out); out = tolower(out)
      # the fifth argument of envToProps excludes property names, not variables
      if (index(ENVIRON["EXCLUDE"], "," out ",") > 0) continue
      print out "=" ENVIRON[k]
    }
  }' | sort ;;
kafka-ready) shift; exec cub kafka-ready "$@" ;;
*) echo "ub: unknown command ${1:-}" >&2; exit 2 ;;
esac
`

// kafkaReadyScript stands for cub (and ub) kafka-ready MIN TIMEOUT -b
// SERVERS: it waits at most TIMEOUT seconds until a bootstrap address
// accepts a connection (bedctl); it does not count the brokers.
const kafkaReadyScript = `#!/bin/sh
# connect-init test bed: stand-in for Confluent's cub kafka-ready.
if [ "${1:-}" != kafka-ready ]; then echo "cub: only kafka-ready is stood in for" >&2; exit 2; fi
timeout="$3"; shift 3
servers=
while [ $# -gt 0 ]; do
  case "$1" in -b) servers="$2"; shift 2 ;; *) shift ;; esac
done
exec bedctl tcp-ready "$timeout" "$servers"
`

// debeziumEntrypointScript stands for debezium/connect-base's
// /docker-entrypoint.sh, rewritten for busybox sh: the unprefixed
// variables and their defaults exported as CONNECT_*, the plugin path
// defaulting to KAFKA_CONNECT_PLUGINS_DIR, then for start: the required
// variables, config.orig copied into config where missing, every CONNECT_*
// variable written into connect-distributed.properties (name after
// CONNECT_, lower-cased, "_" -> "."; an existing or commented line
// replaced, else appended), and connect-distributed.sh on that file.
const debeziumEntrypointScript = `#!/bin/sh
# connect-init test bed: stand-in for Debezium's /docker-entrypoint.sh.
set -e
if [ -z "${BOOTSTRAP_SERVERS:-}" ]; then
  BOOTSTRAP_SERVERS=$(env | grep '.*PORT_9092_TCP=' | sed -e 's|.*tcp://||' | uniq | paste -sd , -)
fi
if [ -z "$BOOTSTRAP_SERVERS" ]; then export BOOTSTRAP_SERVERS=0.0.0.0:9092; fi
echo "Using BOOTSTRAP_SERVERS=$BOOTSTRAP_SERVERS"
if [ -z "${HOST_NAME:-}" ]; then
  HOST_NAME=$(ip addr | grep 'BROADCAST' -A2 | tail -n1 | awk '{print $2}' | cut -f1 -d'/')
fi
: ${REST_PORT:=8083}
: ${REST_HOST_NAME:=$HOST_NAME}
: ${ADVERTISED_PORT:=8083}
: ${ADVERTISED_HOST_NAME:=$HOST_NAME}
: ${GROUP_ID:=1}
: ${OFFSET_FLUSH_INTERVAL_MS:=60000}
: ${OFFSET_FLUSH_TIMEOUT_MS:=5000}
: ${SHUTDOWN_TIMEOUT:=10000}
: ${KEY_CONVERTER:=org.apache.kafka.connect.json.JsonConverter}
: ${VALUE_CONVERTER:=org.apache.kafka.connect.json.JsonConverter}
export CONNECT_REST_ADVERTISED_PORT=$ADVERTISED_PORT
export CONNECT_REST_ADVERTISED_HOST_NAME=$ADVERTISED_HOST_NAME
export CONNECT_REST_PORT=$REST_PORT
export CONNECT_REST_HOST_NAME=$REST_HOST_NAME
export CONNECT_BOOTSTRAP_SERVERS=$BOOTSTRAP_SERVERS
export CONNECT_GROUP_ID=$GROUP_ID
export CONNECT_CONFIG_STORAGE_TOPIC=${CONFIG_STORAGE_TOPIC:-}
export CONNECT_OFFSET_STORAGE_TOPIC=${OFFSET_STORAGE_TOPIC:-}
if [ -n "${STATUS_STORAGE_TOPIC:-}" ]; then export CONNECT_STATUS_STORAGE_TOPIC=$STATUS_STORAGE_TOPIC; fi
export CONNECT_KEY_CONVERTER=$KEY_CONVERTER
export CONNECT_VALUE_CONVERTER=$VALUE_CONVERTER
export CONNECT_TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS=$SHUTDOWN_TIMEOUT
export CONNECT_OFFSET_FLUSH_INTERVAL_MS=$OFFSET_FLUSH_INTERVAL_MS
export CONNECT_OFFSET_FLUSH_TIMEOUT_MS=$OFFSET_FLUSH_TIMEOUT_MS
if [ -n "${HEAP_OPTS:-}" ]; then export KAFKA_HEAP_OPTS=$HEAP_OPTS; fi
unset HOST_NAME REST_PORT REST_HOST_NAME ADVERTISED_PORT ADVERTISED_HOST_NAME GROUP_ID OFFSET_FLUSH_INTERVAL_MS OFFSET_FLUSH_TIMEOUT_MS SHUTDOWN_TIMEOUT KEY_CONVERTER VALUE_CONVERTER HEAP_OPTS MD5HASH SCALA_VERSION
if [ -z "${CONNECT_PLUGIN_PATH:-}" ]; then CONNECT_PLUGIN_PATH=$KAFKA_CONNECT_PLUGINS_DIR; fi
export CONNECT_PLUGIN_PATH
echo "Plugins are loaded from $CONNECT_PLUGIN_PATH"
mkdir -p "${KAFKA_DATA}/${KAFKA_BROKER_ID:-}"
case "${1:-}" in
start)
  if [ -z "$CONNECT_BOOTSTRAP_SERVERS" ]; then echo "The BOOTSTRAP_SERVERS variable must be set, or the container must be linked to one that runs Kafka." >&2; exit 1; fi
  if [ -z "$CONNECT_GROUP_ID" ]; then echo "The GROUP_ID must be set to an ID that uniquely identifies the Kafka Connect cluster these workers belong to." >&2; exit 1; fi
  if [ -z "$CONNECT_CONFIG_STORAGE_TOPIC" ]; then echo "The CONFIG_STORAGE_TOPIC variable must be set to the name of the topic where connector configurations will be stored." >&2; exit 1; fi
  if [ -z "$CONNECT_OFFSET_STORAGE_TOPIC" ]; then echo "The OFFSET_STORAGE_TOPIC variable must be set to the name of the topic where connector offsets will be stored." >&2; exit 1; fi
  if [ -z "${CONNECT_STATUS_STORAGE_TOPIC:-}" ]; then echo "WARNING: STATUS_STORAGE_TOPIC is not set; the default 'connect-status' will be used."; fi
  cp -rn "$KAFKA_HOME"/config.orig/* "$KAFKA_HOME"/config
  file="$KAFKA_HOME/config/connect-distributed.properties"
  env | grep '^CONNECT_' | while read -r var; do
    name=${var%%=*}
    prop=$(echo "$name" | sed -e 's/^CONNECT_//' | tr '[:upper:]' '[:lower:]' | tr _ .)
    value=${var#*=}
    if grep -Eq "(^|^#)$prop=" "$file"; then
      sed -r -i "s@(^|^#)($prop)=(.*)@\2=${value}@g" "$file"
    else
      echo "$prop=$value" >> "$file"
    fi
    echo "--- Setting property from $name: $prop=[not shown]"
  done
  exec "$KAFKA_HOME"/bin/connect-distributed.sh "$file"
  ;;
esac
exec "$@"
`
