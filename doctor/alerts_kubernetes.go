package doctor

import (
	"fmt"

	"github.com/connect-init/connect-init/metrics"
)

// KubernetesNamespace and KubernetesWatcher are where the Kubernetes
// example runs the watcher (examples/kubernetes/watcher.yaml) and the
// name of its PodMonitor: the Prometheus operator names the scrape job of
// a PodMonitor <namespace>/<name>, so the rules' job selector depends on
// both.
const (
	KubernetesNamespace = "kafka-connect"
	KubernetesWatcher   = "connect-init-doctor"
)

// PrometheusRuleFile renders AlertRules as a PrometheusRule of the
// Prometheus operator (monitoring.coreos.com/v1) in namespace, the
// watcher's job being the PodMonitor podMonitor of that namespace: the
// same rules as the rules file, with only the selector changed.
func PrometheusRuleFile(namespace, podMonitor string) ([]byte, error) {
	sel := fmt.Sprintf(`job=%q`, namespace+"/"+podMonitor)
	doc := map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata": map[string]any{"name": "connect-init", "namespace": namespace,
			"labels": map[string]string{"app.kubernetes.io/name": podMonitor}},
		"spec": map[string]any{"groups": []metrics.RuleGroup{metrics.Group("connect-init", AlertRulesFor(sel))}},
	}
	return metrics.YAML(fmt.Sprintf(`Generated from doctor.AlertRulesFor (go test ./doctor -run TestPrometheusRuleFile -update): edit the Go, not this file.
The rules of examples/monitoring/connect-init.rules.yml for the Prometheus operator, the watcher's job
being its PodMonitor's, %s/%s (examples/kubernetes/prometheus-operator/podmonitor.yaml); the
runbooks are docs/runbooks.md. In another namespace, regenerate it (doctor.PrometheusRuleFile).`, namespace, podMonitor), doc)
}
