package gate

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connect-init/connect-init/connect/registry"
)

// The registry read takes the Kafka cluster id the brokers step already
// read (a round trip of every start, issue 39) and asks a broker only when
// it is not known.
func TestRegistryReadTakesTheKnownClusterID(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("from-the-broker"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for _, c := range []struct{ known, want string }{{"known-from-the-brokers-step", "known-from-the-brokers-step"}, {"", "from-the-broker"}} {
		g := &GroupGate{Client: client, GroupID: "g", ConfigTopic: "cfg",
			Identity: &Identity{Registry: &registry.Store{Client: client, Topic: "_registry"}, KnownClusterID: c.known}}
		if r := g.readRegistry(context.Background()); r.err != nil || r.clusterID != c.want {
			t.Errorf("known %q: cluster id %q (%v), want %q", c.known, r.clusterID, r.err, c.want)
		}
	}
}
