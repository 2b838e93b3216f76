package doctor

import (
	"context"
	"testing"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/gate"
)

// A broker whose metadata lags the creation of __consumer_offsets answers
// UNKNOWN_TOPIC_OR_PARTITION for a moment: doctor calls the topic missing
// (and skips the coordinator look, which would create it) only when every
// broker that answers says so; a final answer is an error.
func TestConsumerOffsetsMissingAsksEveryBroker(t *testing.T) {
	keys := []sarama.ApiVersionsResponseKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	broker := func(md func(b *sarama.MockBroker) *sarama.MockMetadataResponse) *sarama.MockBroker {
		b := sarama.NewMockBroker(t, 1)
		t.Cleanup(b.Close)
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
			"MetadataRequest":    md(b),
		})
		return b
	}
	unknown := func(b *sarama.MockBroker) *sarama.MockMetadataResponse {
		return sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1)
	}
	known := func(b *sarama.MockBroker) *sarama.MockMetadataResponse {
		return sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetLeader("__consumer_offsets", 0, 1)
	}
	leaderless := func(b *sarama.MockBroker) *sarama.MockMetadataResponse {
		return sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetError("__consumer_offsets", sarama.ErrLeaderNotAvailable)
	}
	refused := func(b *sarama.MockBroker) *sarama.MockMetadataResponse {
		return sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetError("__consumer_offsets", sarama.ErrTopicAuthorizationFailed)
	}
	cases := []struct {
		name        string
		brokers     []func(b *sarama.MockBroker) *sarama.MockMetadataResponse
		wantMissing bool
		wantErr     bool
	}{
		{"one broker lags, one knows it", []func(*sarama.MockBroker) *sarama.MockMetadataResponse{unknown, known}, false, false},
		{"one broker lags, one is electing its leaders", []func(*sarama.MockBroker) *sarama.MockMetadataResponse{unknown, leaderless}, false, false},
		{"every broker says unknown", []func(*sarama.MockBroker) *sarama.MockMetadataResponse{unknown, unknown}, true, false},
		{"refused", []func(*sarama.MockBroker) *sarama.MockMetadataResponse{refused, known}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := &gate.BrokerReport{}
			for _, md := range c.brokers {
				rep.Brokers = append(rep.Brokers, gate.BrokerStatus{Addr: broker(md).Addr(), Up: true})
			}
			cfg := sarama.NewConfig()
			cfg.Version = sarama.MaxVersion
			cfg.ApiVersionsRequest = true
			missing, err := consumerOffsetsMissing(context.Background(), cfg, rep)
			if missing != c.wantMissing || (err != nil) != c.wantErr {
				t.Fatalf("consumerOffsetsMissing = %v, %v; want missing %v, error %v", missing, err, c.wantMissing, c.wantErr)
			}
		})
	}
}
