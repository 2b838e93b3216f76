package workerconfig

import "regexp"

// libraryDirs are, per image flavour, the directories whose jars the
// image's launcher puts on the worker JVM's classpath ("<dir>/*"), after
// $CLASSPATH (kafka-run-class.sh prepends it). What a worker can load
// without plugin.path is there: a converter or transformation installed
// beside Kafka's jars, Confluent's Avro converter in kafka-serde-tools.
//
//   - cp-kafka-connect: /usr/bin/connect-distributed adds
//     /usr/share/java/<lib>/* for confluent-security/connect, kafka,
//     confluent-common, kafka-serde-tools and monitoring-interceptors when
//     they exist; its kafka-run-class adds confluent-telemetry.
//   - apache/kafka: /opt/kafka/bin/kafka-run-class.sh adds /opt/kafka/libs/*.
//   - debezium/connect: KAFKA_HOME=/kafka, so /kafka/libs/*.
var libraryDirs = map[Flavour][]string{
	ConfluentDub: confluentLibs,
	ConfluentUB:  confluentLibs,
	Apache:       {"/opt/kafka/libs"},
	Debezium:     {DebeziumKafkaHome + "/libs"},
}

var confluentLibs = []string{
	"/usr/share/java/confluent-security/connect",
	"/usr/share/java/kafka",
	"/usr/share/java/confluent-common",
	"/usr/share/java/kafka-serde-tools",
	"/usr/share/java/monitoring-interceptors",
	"/usr/share/java/confluent-telemetry",
}

// LibraryDirs returns the directories the image's launcher puts on the
// worker's classpath under flavour f, in classpath order. For
// PropertiesFile, an image connect-init does not know, it returns every
// known directory: the caller keeps those that exist, and counting a
// directory that is not on the classpath can only hide a missing plugin,
// never refuse a worker that has it.
func LibraryDirs(f Flavour) []string {
	if dirs, ok := libraryDirs[f]; ok {
		return append([]string(nil), dirs...)
	}
	var all []string
	for _, g := range []Flavour{ConfluentDub, Apache, Debezium} {
		all = append(all, libraryDirs[g]...)
	}
	return all
}

// kafkaRunClassSkip is the files of libs/ Kafka's bin/kafka-run-class.sh
// leaves off the classpath: test, source and doc jars, signatures, and,
// since Kafka 3.2 (KAFKA-13748), the FileStream connectors' connect-file
// jar, which the distribution still ships in libs/.
var kafkaRunClassSkip = regexp.MustCompile(`(-(test|test-sources|src|scaladoc|javadoc)\.jar|jar\.asc|connect-file.*\.jar)$`)

// ListsLibraryFiles reports whether flavour f's launcher is Kafka's
// kafka-run-class.sh, which puts the library directory's files on the
// classpath one by one, leaving some out (SkipsLibraryFile), rather than
// as "dir/*": apache/kafka and Debezium's images.
func ListsLibraryFiles(f Flavour) bool { return f == Apache || f == Debezium }

// SkipsLibraryFile reports whether kafka-run-class.sh leaves the library
// file name off the classpath.
func SkipsLibraryFile(name string) bool { return kafkaRunClassSkip.MatchString(name) }
