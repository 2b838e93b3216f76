package kafka

import (
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/security"
	"github.com/connect-init/connect-init/workerconfig"
)

// SaramaConfig builds the sarama configuration for a client of kind from the worker
// settings. It negotiates API versions with each broker (MaxVersion plus
// ApiVersions requests), so one binary speaks to Kafka 2.x through 4.x, and
// it turns off sarama's own retries and background refreshes: the gates
// retry on their own schedule and need the first error, not "run out of
// available brokers".
func SaramaConfig(worker workerconfig.Properties, kind workerconfig.ClientKind) (*sarama.Config, error) {
	props := workerconfig.ClientProps(worker, kind)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true

	clientID, err := workerconfig.ClientID(props)
	if err != nil {
		return nil, err
	}
	cfg.ClientID = clientID
	reqTimeout, err := workerconfig.RequestTimeout(props)
	if err != nil {
		return nil, err
	}
	cfg.Net.DialTimeout = 5 * time.Second
	cfg.Net.ReadTimeout = reqTimeout
	cfg.Net.WriteTimeout = reqTimeout
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
