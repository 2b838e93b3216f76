package startup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

// A refusal for authorization names the principal the brokers see, the
// topic, and the kafka-acls command that grants the lock what it needs;
// any refusal names CONNECT_INIT_LOCK=false as the other way out.
func TestLockRefusalFix(t *testing.T) {
	scram := sarama.NewConfig()
	scram.Net.SASL.Enable, scram.Net.SASL.Mechanism, scram.Net.SASL.User = true, sarama.SASLTypeSCRAMSHA512, "connect"
	krb := sarama.NewConfig()
	krb.Net.SASL.Enable, krb.Net.SASL.Mechanism, krb.Net.SASL.GSSAPI.Username = true, sarama.SASLTypeGSSAPI, "connect/host1@EXAMPLE.COM"
	for _, c := range []struct {
		cfg       *sarama.Config
		principal string
	}{{scram, "User:connect"}, {krb, "User:connect"}, {sarama.NewConfig(), "User:ANONYMOUS"}} {
		fix := lockRefusalFix(c.cfg, []string{"b1:9092", "b2:9092"}, "_lock", fmt.Errorf("write: %w", sarama.ErrTopicAuthorizationFailed))
		for _, want := range []string{c.principal, "kafka-acls --bootstrap-server b1:9092,b2:9092", "--allow-principal '" + c.principal + "'", "--operation Write", "--operation Read", "--topic _lock", "CONNECT_INIT_LOCK=false"} {
			if !strings.Contains(fix, want) {
				t.Errorf("fix lacks %q: %s", want, fix)
			}
		}
	}
	fix := lockRefusalFix(scram, []string{"b1:9092"}, "_lock", sarama.ErrPolicyViolation)
	if strings.Contains(fix, "kafka-acls") || !strings.Contains(fix, "CONNECT_INIT_LOCK=false") {
		t.Errorf("a policy refusal: %s", fix)
	}
}

// Brokers before Kafka 2.8 refuse the lock's idempotent producer with
// CLUSTER_AUTHORIZATION_FAILED unless the principal may IdempotentWrite on
// the cluster: the fix grants that as well as the topic's operations.
func TestLockRefusalFixIdempotentWrite(t *testing.T) {
	scram := sarama.NewConfig()
	scram.Net.SASL.Enable, scram.Net.SASL.Mechanism, scram.Net.SASL.User = true, sarama.SASLTypeSCRAMSHA512, "connect"
	fix := lockRefusalFix(scram, []string{"b1:9092"}, "_lock", fmt.Errorf("init producer id: %w", sarama.ErrClusterAuthorizationFailed))
	for _, want := range []string{"--allow-principal 'User:connect' --operation IdempotentWrite --cluster", "--operation Write", "--topic _lock", "Kafka 2.8", "CONNECT_INIT_LOCK=false"} {
		if !strings.Contains(fix, want) {
			t.Errorf("fix lacks %q: %s", want, fix)
		}
	}
	topicOnly := lockRefusalFix(scram, []string{"b1:9092"}, "_lock", sarama.ErrTopicAuthorizationFailed)
	if strings.Contains(topicOnly, "IdempotentWrite") {
		t.Errorf("a topic refusal asks for IdempotentWrite: %s", topicOnly)
	}
}
