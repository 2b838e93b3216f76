// Package plugins answers, without a JVM, whether this Kafka Connect worker
// can load every plugin its cluster uses: a worker that lacks one joins
// like any other, is assigned the connectors and tasks it cannot load, and
// fails them ("Failed to find any class that implements Connector and which
// name matches ...") once a rebalance moves them to it.
//
// Three pure steps, which the startup pipeline and doctor wire together:
//
//   - Scan finds what this worker can load, the way Connect's
//     org.apache.kafka.connect.runtime.isolation package finds it (Kafka's
//     source is the authority for every rule here).
//   - UsedClasses lists what the cluster's connector configurations name.
//   - Verdict compares the two with what the other members report through
//     GET /connector-plugins?connectorsOnly=false (DecodeConnectorPlugins),
//     and CheckMode (CONNECT_INIT_PLUGIN_CHECK) decides what to do.
//
// # How Scan follows Connect
//
// Plugin locations (PluginUtils.pluginLocations): plugin.path is split at
// commas (blanks around ignored); each element that is a directory
// contributes each child that is a directory, a .jar/.zip or a .class file,
// an element that is an archive is a location by itself, and a missing
// element is logged and skipped (here: a Problem). A location's URLs
// (PluginUtils.pluginUrls): an archive; or a directory walked depth first,
// following symbolic links, whose archives are the URLs, or the directory
// itself when it holds class files and no archive (a class hierarchy). Each
// location has its own class loader; the classpath (the JVM's, with "dir/*"
// wildcards expanded as the java launcher does) is one more source.
//
// ServiceLoader (ServiceLoaderScanner): META-INF/services/<interface> of
// SinkConnector, SourceConnector, Converter, HeaderConverter,
// Transformation, Predicate, ConfigProvider, ConnectRestExtension and
// ConnectorClientConfigOverridePolicy (PluginType). A manifest's class
// counts for its own location only, and not when the location leaves the
// class to the classpath (PluginUtils.shouldLoadInIsolation: Kafka's and
// the JDK's packages, bar Kafka's own plugins). A manifest named after
// org.apache.kafka.connect.connector.Connector is read by nobody: reported.
//
// The reflective scan (ReflectionScanner, every plugin.discovery but
// service_load; PluginDiscoveryMode, KIP-898) finds public concrete
// subclasses of the first six types without manifests. Without a JVM the
// class hierarchy comes from the class files themselves: the header of
// each class (access flags, superclass, interfaces; JVMS §4.1) is read,
// inflating the jar entry only that far, and followed through the
// location, then the classpath, to the types' base names. Not checked
// (they live past the header): the public no-args constructor and that a
// nested class is static; a class whose static initializer or constructor
// throws is counted although Connect drops it. Plugins found this way are
// marked FoundScan: "no manifest: slow scan". Reading every class costs
// time proportional to the classes, so Scan reads in full only the plugin
// locations that have no manifest for these types; elsewhere it indexes
// class names from the zip directory and reads only the classes
// Options.Want names (what the cluster uses), or everything with
// Options.FullScan (doctor's complete listing).
//
// Classes on the classpath load by their full name in every mode
// (DelegatingClassLoader falls back to its parent): FoundClasspath.
//
// Aliases (PluginUtils.computeAliases): a plugin's simple name and its
// simple name up to the last occurrence of its type's suffix ("Connector",
// "Converter", "Transformation", ...), when unique among the discovered
// plugins; for connectors also Plugins.connectorClass' fallback (the one
// connector whose simple name is the value or the value plus "Connector").
//
// Versions: a plugin's version() cannot be called, so Plugin.VersionFrom
// says where Version comes from: Kafka's own plugins (org.apache.kafka.*)
// report AppInfoParser's version, the kafka-clients jar's on the classpath
// (kafka/kafka-version.properties); else the jar's MANIFEST.MF
// Implementation-Version; else the version in the jar's file name. KIP-891
// version requirements (connector.plugin.version,
// <converter>.plugin.version, transforms.<alias>.plugin.version,
// predicates.<alias>.plugin.version: a bare version is exact, else a Maven
// range) are compared with a simplified Maven ordering; a version from a
// file name never refuses a start.
package plugins
