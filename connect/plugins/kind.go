package plugins

import (
	"fmt"
	"strings"
)

// Kind is a plugin type, spelled as Connect spells it in the "type" field of
// GET /connector-plugins (PluginType.toString(): the enum name in lower
// case), so that what this worker finds and what its peers report compare
// as plain strings.
type Kind string

// The plugin types of Connect's PluginType enum, in its order.
const (
	KindSource          Kind = "source"
	KindSink            Kind = "sink"
	KindConverter       Kind = "converter"
	KindHeaderConverter Kind = "header_converter"
	KindTransformation  Kind = "transformation"
	KindPredicate       Kind = "predicate"
	KindConfigProvider  Kind = "configprovider"
	KindRestExtension   Kind = "rest_extension"
	KindClientPolicy    Kind = "connector_client_config_override_policy"
)

// KindConnector is not a Connect plugin type: it is what connector.class
// asks for, a source or a sink connector (Connect's connectorClass() accepts
// either).
const KindConnector Kind = "connector"

// kindInfo is what Connect knows about one plugin type: the interface or
// base class whose ServiceLoader manifest lists the plugins, the suffix its
// aliases drop (PluginUtils.prunedName), and whether ReflectionScanner
// looks for it (config providers, REST extensions and client config
// override policies are service-loaded in every plugin.discovery mode).
type kindInfo struct {
	kind       Kind
	service    string // fully qualified name of the manifest's interface
	suffix     string
	reflective bool
}

// kinds is Connect's PluginType in its declaration order: the plugin types,
// their service interfaces and alias suffixes.
func kinds() []kindInfo {
	return []kindInfo{
		{KindSource, "org.apache.kafka.connect.source.SourceConnector", "Connector", true},
		{KindSink, "org.apache.kafka.connect.sink.SinkConnector", "Connector", true},
		{KindConverter, "org.apache.kafka.connect.storage.Converter", "Converter", true},
		{KindHeaderConverter, "org.apache.kafka.connect.storage.HeaderConverter", "HeaderConverter", true},
		{KindTransformation, "org.apache.kafka.connect.transforms.Transformation", "Transformation", true},
		{KindPredicate, "org.apache.kafka.connect.transforms.predicates.Predicate", "Predicate", true},
		{KindConfigProvider, "org.apache.kafka.common.config.provider.ConfigProvider", "ConfigProvider", false},
		{KindRestExtension, "org.apache.kafka.connect.rest.ConnectRestExtension", "ConnectRestExtension", false},
		{KindClientPolicy, "org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy", "ConnectorClientConfigOverridePolicy", false},
	}
}

// info returns k's entry of kinds, or false for KindConnector and unknown
// kinds.
func (k Kind) info() (kindInfo, bool) {
	for _, ki := range kinds() {
		if ki.kind == k {
			return ki, true
		}
	}
	return kindInfo{}, false
}

// Satisfies reports whether a plugin of kind k can serve a reference that
// asks for want: equal kinds, a source or sink for KindConnector, anything
// for an empty want.
func (k Kind) Satisfies(want Kind) bool {
	switch want {
	case "":
		return true
	case KindConnector:
		return k == KindSource || k == KindSink || k == KindConnector
	}
	return k == want
}

// kindOfService maps a META-INF/services file name to its plugin type.
func kindOfService(name string) (Kind, bool) {
	if !strings.HasPrefix(name, "org.apache.kafka.") {
		return "", false // every service interface is Kafka's: skip the table
	}
	for _, ki := range kinds() {
		if ki.service == name {
			return ki.kind, true
		}
	}
	return "", false
}

// connectorBase is the superclass of SourceConnector and SinkConnector. A
// manifest named after it is not one Connect reads (ServiceLoaderScanner
// loads SinkConnector and SourceConnector only), so the classes it lists
// are found by the reflective scan alone.
const connectorBase = "org.apache.kafka.connect.connector.Connector"

// DiscoveryMode is the worker's plugin.discovery (KIP-898,
// PluginDiscoveryMode): which of ServiceLoader and the reflective scan find
// plugins, so that this worker is judged as the worker itself will load.
type DiscoveryMode string

// The plugin.discovery values, as Connect spells them (lower case).
const (
	OnlyScan    DiscoveryMode = "only_scan"
	HybridWarn  DiscoveryMode = "hybrid_warn"
	HybridFail  DiscoveryMode = "hybrid_fail"
	ServiceLoad DiscoveryMode = "service_load"
)

// DefaultDiscovery is Connect's default plugin.discovery (WorkerConfig).
const DefaultDiscovery = HybridWarn

// ParseDiscoveryMode reads a plugin.discovery value as Connect does
// (case-insensitive, surrounding blanks ignored; empty means the default)
// and names the accepted values when it is none of them, the way the worker
// would refuse to start.
func ParseDiscoveryMode(s string) (DiscoveryMode, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return DefaultDiscovery, nil
	}
	for _, m := range []DiscoveryMode{OnlyScan, HybridWarn, HybridFail, ServiceLoad} {
		if v == string(m) {
			return m, nil
		}
	}
	return "", fmt.Errorf("plugins: invalid plugin.discovery %q: must be one of only_scan, hybrid_warn, hybrid_fail, service_load", s)
}

// Reflective reports whether the mode runs the reflective scan (all but
// service_load), which finds plugins that no manifest lists.
func (m DiscoveryMode) Reflective() bool { return m != ServiceLoad }

// ServiceLoading reports whether the mode reads ServiceLoader manifests for
// connectors, converters, transformations and predicates (all but
// only_scan; the other plugin types are service-loaded in every mode).
func (m DiscoveryMode) ServiceLoading() bool { return m != OnlyScan }
