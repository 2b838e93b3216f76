package bootstrap

import (
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/bootstrap/security"
	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// ClientKind selects which of Connect's client settings apply, following
// Connect's precedence: top-level settings for the worker's group member
// and config-topic reader, top-level overlaid with admin.* for admin work.
// (A topic's Role, by contrast, is config, offset or status.)
type ClientKind int

const (
	// ClientMember is the worker's group member and config consumer.
	ClientMember ClientKind = iota
	// ClientAdmin is topic creation and description.
	ClientAdmin
)

// ClientProps returns the worker properties that apply to a client of kind.
func ClientProps(worker workerconfig.Properties, kind ClientKind) workerconfig.Properties {
	out := workerconfig.Properties{}
	for k, v := range worker {
		out[k] = v
	}
	if kind == ClientAdmin {
		for k, v := range worker.WithPrefix("admin.") {
			out[k] = v
		}
	}
	return out
}

// SaramaConfig builds the sarama configuration for a client of kind from the worker
// settings. It negotiates API versions with each broker (MaxVersion plus
// ApiVersions requests), so one binary speaks to Kafka 2.x through 4.x, and
// it turns off sarama's own retries and background refreshes: the gates
// retry on their own schedule and need the first error, not "run out of
// available brokers".
func SaramaConfig(worker workerconfig.Properties, kind ClientKind) (*sarama.Config, error) {
	props := ClientProps(worker, kind)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true

	clientID := props.Get("client.id", "")
	if clientID == "" {
		clientID = "connect-init"
	} else {
		clientID += "-connect-init"
	}
	if !validClientID(clientID) {
		return nil, &workerconfig.Error{Property: "client.id", Problem: "contains characters Kafka does not allow in a client id", Value: props.Get("client.id", ""), Fix: "use letters, digits, '.', '_' and '-'"}
	}
	cfg.ClientID = clientID

	reqTimeout, err := props.Int("request.timeout.ms", 40000)
	if err != nil {
		return nil, err
	}
	if reqTimeout <= 0 {
		return nil, &workerconfig.Error{Property: "request.timeout.ms", Problem: "must be positive", Value: props.Get("request.timeout.ms", "")}
	}
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = time.Duration(reqTimeout) * time.Millisecond
	cfg.Net.WriteTimeout = time.Duration(reqTimeout) * time.Millisecond
	cfg.Net.MaxOpenRequests = 1

	cfg.Metadata.Retry.Max = 0
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	cfg.Metadata.RefreshFrequency = 0
	cfg.Metadata.Full = false
	cfg.Metadata.AllowAutoTopicCreation = false
	cfg.Admin.Retry.Max = 0
	cfg.Admin.Timeout = 30 * time.Second

	if err := security.Configure(cfg, props); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, &workerconfig.Error{Property: "security.protocol", Problem: fmt.Sprintf("leads to an invalid client configuration: %v", err)}
	}
	return cfg, nil
}

func validClientID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._- ", r)) {
			return false
		}
	}
	return true
}
