package workerconfig

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
