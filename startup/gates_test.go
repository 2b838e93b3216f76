package startup

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// The brokers step on a healthy cluster: the clients dialed during the
// gate's first look are the ones kept (issue 39), connected to every
// broker, and they work; the Kafka cluster id of the gate's metadata answer
// is kept for the group step's registry read; and a look whose metadata
// shows every broker up asks no DescribeCluster (ReadyOnMetadata).
func TestConnectBrokersKeepsTheClientsDialedDuringTheGate(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var describeCluster atomic.Int32
	c.ControlKey(int16(kmsg.DescribeCluster), func(kmsg.Request) (kmsg.Response, error, bool) {
		describeCluster.Add(1)
		return nil, nil, false
	})
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
	if n := describeCluster.Load(); n != 0 {
		t.Errorf("the brokers step asked DescribeCluster %d times on a healthy cluster, want 0", n)
	}
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
	if want, err := registry.KafkaClusterID(clients.Member, "t"); err != nil || clients.ClusterID != want {
		t.Errorf("clients.ClusterID = %q, want the cluster's %q (%v)", clients.ClusterID, want, err)
	}
}

// The internal topics' settings are read beside the brokers gate's look
// for run's and prepare's topics step only: lock acquire and apply
// (ConnectBrokers) have no topics step and do not ask.
func TestOnlyTheTopicsStepsBrokersStepReadsTheSettings(t *testing.T) {
	for _, readSettings := range []bool{true, false} {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(1, "c", "o", "s"))
		if err != nil {
			t.Fatal(err)
		}
		var describeConfigs atomic.Int32
		c.ControlKey(int16(kmsg.DescribeConfigs), func(kmsg.Request) (kmsg.Response, error, bool) {
			describeConfigs.Add(1)
			return nil, nil, false
		})
		cfg := &settings.Config{Worker: workerconfig.Properties{}, BootstrapServers: c.ListenAddrs(), ExpectedBrokers: 3,
			Topics: []settings.TopicSpec{{Role: settings.RoleConfig, Name: "c"}, {Role: settings.RoleOffset, Name: "o"}, {Role: settings.RoleStatus, Name: "s"}}}
		clients, err := kafka.NewClients(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients.MemberConfig.Version, clients.AdminConfig.Version = sarama.MaxVersion, sarama.MaxVersion
		var rep *gate.BrokerReport
		if readSettings {
			rep, err = connectBrokers(context.Background(), cfg, clients, slog.New(slog.DiscardHandler), clock.NewStepping(time.Unix(0, 0)), true)
		} else {
			err = ConnectBrokers(context.Background(), cfg, clients, slog.New(slog.DiscardHandler), clock.NewStepping(time.Unix(0, 0)))
		}
		if err != nil {
			t.Fatalf("read settings %v: %v", readSettings, err)
		}
		want := map[bool]int32{true: 1, false: 0}[readSettings]
		if n := describeConfigs.Load(); n != want || readSettings && !rep.Handoff.HoldsSettings() {
			t.Errorf("read settings %v: %d DescribeConfigs (settings kept: %v), want %d", readSettings, n, rep != nil && rep.Handoff.HoldsSettings(), want)
		}
		clients.Close()
		c.Close()
	}
}
