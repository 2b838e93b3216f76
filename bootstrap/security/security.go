// Package security turns a worker's security settings (security.protocol,
// ssl.*, sasl.*) into a sarama client configuration, so connect-init reaches
// the brokers exactly as the Connect worker will.
package security

import (
	"fmt"
	"strings"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// Configure applies the client security settings in props (already resolved
// for the client's role, e.g. with admin.* overrides folded in) to cfg.
// A *workerconfig.Error is returned for settings that are wrong or not
// supported; callers turn it into exit code 2.
func Configure(cfg *sarama.Config, props workerconfig.Properties) error {
	proto := strings.ToUpper(props.Get("security.protocol", "PLAINTEXT"))
	switch proto {
	case "PLAINTEXT":
		return nil
	default:
		return &workerconfig.Error{Property: "security.protocol", Problem: "is not supported yet", Value: proto,
			Fix: fmt.Sprintf("use PLAINTEXT")}
	}
}
