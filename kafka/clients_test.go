package kafka

import (
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// Without admin.* overrides one client serves both roles (one set of
// connections on every start); with one, the admin client is its own.
func TestClientsShareOneClientWithoutAdminOverrides(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name   string
		worker workerconfig.Properties
		shared bool
	}{
		{"no overrides", workerconfig.Properties{}, true},
		{"admin.request.timeout.ms", workerconfig.Properties{"admin.request.timeout.ms": "30000"}, false},
	} {
		cl, err := NewClients(&settings.Config{Worker: tc.worker})
		if err != nil {
			t.Fatal(err)
		}
		cl.MemberConfig.Version, cl.AdminConfig.Version = sarama.MaxVersion, sarama.MaxVersion
		if err := cl.Connect(c.ListenAddrs(), nil); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, _, err := cl.Admin.DescribeCluster(); err != nil {
			t.Errorf("%s: admin: %v", tc.name, err)
		}
		if err := cl.Member.RefreshMetadata(); err != nil {
			t.Errorf("%s: member: %v", tc.name, err)
		}
		brokers := cl.Member.Brokers()
		if got := cl.shared; got != tc.shared {
			t.Errorf("%s: shared %v, want %v", tc.name, got, tc.shared)
		}
		cl.Close()
		if !cl.Member.Closed() || len(brokers) == 0 {
			t.Errorf("%s: member not closed, or no brokers (%d)", tc.name, len(brokers))
		}
	}
}
