package startup

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	"github.com/IBM/sarama"
)

// The lock topic refused: name who, what, and the one command that grants
// it.
//
// An answer that no wait changes (lock.ErrRefused, or a topic step refused
// for authorization) is said at once, because the alternative was worse:
// counted as an outage, every worker waited CONNECT_INIT_LOCK_UNAVAILABLE_AFTER
// and then started without the lock, with a hint about the partition's
// leader and ISR that sent the operator the wrong way. A missing ACL is
// fixed by an operator in one command, so the message is that command.

// lockPrincipal is the principal the brokers see for cfg, as Kafka's
// default principal builder and mapping rules make it: the SASL user for
// PLAIN and SCRAM, the Kerberos primary (sasl.kerberos.principal.to.local.rules
// DEFAULT), the subject of the TLS client certificate, or ANONYMOUS.
func lockPrincipal(cfg *sarama.Config) string {
	if cfg == nil {
		return "User:ANONYMOUS"
	}
	if cfg.Net.SASL.Enable {
		switch cfg.Net.SASL.Mechanism {
		case sarama.SASLTypeGSSAPI:
			primary, _, _ := strings.Cut(cfg.Net.SASL.GSSAPI.Username, "/")
			primary, _, _ = strings.Cut(primary, "@")
			return "User:" + primary
		case sarama.SASLTypeOAuth:
			return "User:<the subject (sub) of the worker's OAuth token>"
		default:
			return "User:" + cfg.Net.SASL.User
		}
	}
	if cfg.Net.TLS.Enable && cfg.Net.TLS.Config != nil {
		for _, c := range cfg.Net.TLS.Config.Certificates {
			if len(c.Certificate) == 0 {
				continue
			}
			if leaf, err := x509.ParseCertificate(c.Certificate[0]); err == nil {
				return "User:" + leaf.Subject.String()
			}
		}
	}
	return "User:ANONYMOUS"
}

// isAuthorization reports whether err is a Kafka authorization failure.
func isAuthorization(err error) bool {
	for _, k := range []sarama.KError{sarama.ErrTopicAuthorizationFailed, sarama.ErrClusterAuthorizationFailed,
		sarama.ErrGroupAuthorizationFailed, sarama.ErrTransactionalIDAuthorizationFailed} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// lockRefusalFix is the fix for the lock topic refused with err: for an
// authorization failure, the principal and the kafka-acls command that
// grants what the lock needs on its topic (READ and DESCRIBE to read the
// queue, WRITE to join it, DESCRIBE_CONFIGS to check its layout); for any
// other final answer, the answer itself. Either way the other way out is
// CONNECT_INIT_LOCK=false: starting without the lock is the operator's
// choice, never connect-init's on a refusal.
func lockRefusalFix(memberCfg *sarama.Config, bootstrap []string, topic string, err error) string {
	off := "or set CONNECT_INIT_LOCK=false to start workers without the startup lock"
	if !isAuthorization(err) {
		return "the cluster's answer cannot change by waiting: fix what it names on topic " + topic + ", " + off
	}
	p := lockPrincipal(memberCfg)
	if errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
		// The lock writes with an idempotent producer (lock/doc.go). Brokers
		// before Kafka 2.8 (KIP-679) answer its InitProducerId with
		// CLUSTER_AUTHORIZATION_FAILED unless the principal may
		// IdempotentWrite on the cluster; a topic grant alone would not help.
		return fmt.Sprintf("grant the worker's principal %s IdempotentWrite on the cluster (the startup lock writes with an idempotent producer; brokers before Kafka 2.8 require it) and access to the lock topic %s: kafka-acls --bootstrap-server %s --command-config <an admin's client properties> --add --allow-principal '%s' --operation IdempotentWrite --cluster, then the same with --operation Read --operation Write --operation Describe --operation DescribeConfigs --topic %s; %s",
			p, topic, strings.Join(bootstrap, ","), p, topic, off)
	}
	return fmt.Sprintf("grant the worker's principal %s access to the lock topic %s: kafka-acls --bootstrap-server %s --command-config <an admin's client properties> --add --allow-principal '%s' --operation Read --operation Write --operation Describe --operation DescribeConfigs --topic %s (and --operation Create --cluster, or create the topic beforehand: 1 partition, cleanup.policy=compact, message.timestamp.type=LogAppendTime); %s",
		p, topic, strings.Join(bootstrap, ","), p, topic, off)
}
