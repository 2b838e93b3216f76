package plugins

import "strings"

// loadsInIsolation is PluginUtils.shouldLoadInIsolation: whether a plugin
// location's class loader loads the class itself (child first) or leaves
// it to the worker's classpath. A class the location does not load itself
// is not a plugin of that location: Connect drops it from the location's
// scan ("from other classloader ... excluding to prevent isolated
// loading"), whatever its jar's manifests say.
func loadsInIsolation(name string) bool {
	return !excludedFromIsolation(name) || includedInIsolation(name)
}

// excludedFromIsolation is PluginUtils' EXCLUDE pattern: the JDK's
// packages, Java EE's javax packages, Kafka's and SLF4J's.
func excludedFromIsolation(name string) bool {
	if !strings.HasPrefix(name, "java") && !strings.HasPrefix(name, "org.") {
		return false // the common case, without the list
	}
	for _, p := range isolationExcludes() {
		if len(name) > len(p) && name[len(p)] == '.' && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isolationExcludes lists EXCLUDE's alternatives (package prefixes); all
// start with "java" or "org.".
func isolationExcludes() []string {
	return []string{
		"java",
		"javax.accessibility", "javax.activation", "javax.activity", "javax.annotation",
		"javax.batch.api", "javax.batch.operations", "javax.batch.runtime", "javax.crypto",
		"javax.decorator", "javax.ejb", "javax.el", "javax.enterprise.concurrent",
		"javax.enterprise.context", "javax.enterprise.deploy.model", "javax.enterprise.deploy.shared",
		"javax.enterprise.deploy.spi", "javax.enterprise.event", "javax.enterprise.inject",
		"javax.enterprise.util", "javax.faces", "javax.imageio", "javax.inject", "javax.interceptor",
		"javax.jms", "javax.json", "javax.jws", "javax.lang.model", "javax.mail", "javax.management",
		"javax.naming", "javax.net", "javax.persistence", "javax.print", "javax.resource", "javax.rmi",
		"javax.script", "javax.security.auth", "javax.security.cert", "javax.security.jacc",
		"javax.security.sasl", "javax.servlet", "javax.sound.midi", "javax.sound.sampled", "javax.sql",
		"javax.swing", "javax.tools", "javax.transaction", "javax.validation", "javax.websocket",
		"javax.ws.rs", "javax.xml",
		"org.ietf.jgss", "org.omg.CORBA", "org.omg.CosNaming", "org.omg.Dynamic", "org.omg.DynamicAny",
		"org.omg.IOP", "org.omg.Messaging", "org.omg.PortableInterceptor", "org.omg.PortableServer",
		"org.omg.SendingContext", "org.omg.stub.java.rmi", "org.w3c.dom", "org.xml.sax",
		"org.apache.kafka", "org.slf4j",
	}
}

// includedInIsolation is PluginUtils' INCLUDE pattern: Kafka's own
// plugins, which a plugin location may carry and load in isolation
// (transforms, JSON, file, MirrorMaker, converters, the two storage
// converters, the basic-auth REST extension, the client config policies
// and config providers), but not the interfaces they implement.
func includedInIsolation(name string) bool {
	rest, ok := strings.CutPrefix(name, "org.apache.kafka.")
	if !ok {
		return false
	}
	if p, ok := strings.CutPrefix(rest, "common.config.provider."); ok {
		return p != "ConfigProvider"
	}
	c, ok := strings.CutPrefix(rest, "connect.")
	if !ok {
		return false
	}
	if t, ok := strings.CutPrefix(c, "transforms."); ok {
		return !strings.HasPrefix(t, "Transformation") && t != "predicates.Predicate"
	}
	if p, ok := strings.CutPrefix(c, "connector.policy."); ok {
		switch p {
		case "ConnectorClientConfigOverridePolicy", "ConnectorClientConfigRequest", "ConnectorClientConfigRequest$ClientType":
			return false
		}
		return true
	}
	for _, p := range []string{"json.", "file.", "mirror.", "mirror-client.", "converters."} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	switch c {
	case "storage.StringConverter", "storage.SimpleHeaderConverter", "rest.basic.auth.extension.BasicAuthSecurityRestExtension":
		return true
	}
	return false
}
