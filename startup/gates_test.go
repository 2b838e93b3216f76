package startup

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// The brokers step on a healthy cluster: the clients dialed during the
// gate's first look are the ones kept (issue 39), connected to every
// broker, and they work.
func TestConnectBrokersKeepsTheClientsDialedDuringTheGate(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := &settings.Config{Worker: workerconfig.Properties{}, BootstrapServers: c.ListenAddrs(), ExpectedBrokers: 3}
	clients, err := kafka.NewClients(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clients.MemberConfig.Version, clients.AdminConfig.Version = sarama.MaxVersion, sarama.MaxVersion
	if err := ConnectBrokers(context.Background(), cfg, clients, slog.New(slog.DiscardHandler), clock.NewStepping(time.Unix(0, 0))); err != nil {
		t.Fatalf("ConnectBrokers = %v", err)
	}
	defer clients.Close()
	if clients.Member == nil || clients.Admin == nil || clients.AdminClient != clients.Member {
		t.Fatalf("clients %+v, want one connected client in both roles", clients)
	}
	brokers := clients.Member.Brokers()
	if len(brokers) != 3 {
		t.Fatalf("the client knows %d brokers, want 3", len(brokers))
	}
	for _, b := range brokers {
		if ok, err := b.Connected(); !ok || err != nil { // waits for the dial begun after the seed read
			t.Errorf("broker %d: connected %v (%v), want every broker dialed", b.ID(), ok, err)
		}
	}
	if _, _, err := clients.Admin.DescribeCluster(); err != nil {
		t.Errorf("admin: %v", err)
	}
}
