package startup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

// hangWindow is how long a transaction on the config topic must stay open
// to count as hanging: Connect's worker.sync.timeout.ms default (3 s), the
// time a worker reading the topic read_committed waits before it backs
// off.
const hangWindow = 3 * time.Second

// eosReader reads what the exactly-once readiness rules judge; the real
// one asks the cluster through the admin client.
type eosReader interface {
	// txnState describes __transaction_state: whether it exists, its
	// partitions' in-sync replica counts and its min.insync.replicas.
	txnState() (exists bool, isr map[int32]int, minISR int, err error)
	// brokers are the live brokers and their
	// transaction.state.log.replication.factor.
	brokers() (live, rf int, err error)
	// stableOffset is the config topic's last stable offset now.
	stableOffset(topic string) (int64, error)
}

// eosResults judges exactly-once readiness for a worker whose
// exactly.once.source.support is support ("" or disabled: nothing).
func eosResults(ctx context.Context, group, support string, rep *gate.GroupReport, r eosReader, clk clock.Clock) ([]checks.Result, error) {
	if support != "preparing" && support != "enabled" {
		return nil, nil
	}
	e := parity.EOS{GroupID: group, Support: support, MinISR: 2, ReplicationFactor: 3, Window: hangWindow.String()}
	exists, isr, minISR, err := r.txnState()
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", parity.TxnStateTopic, err)
	}
	e.Exists = exists
	if minISR > 0 {
		e.MinISR = minISR
	}
	for p, n := range isr {
		if n < e.MinISR {
			e.BelowMinISR = append(e.BelowMinISR, p)
		}
	}
	if !exists {
		if e.Brokers, e.ReplicationFactor, err = r.brokers(); err != nil {
			return nil, fmt.Errorf("the brokers' transaction.state.log.replication.factor: %w", err)
		}
	}
	if rep != nil && rep.ConfigStableOffset >= 0 && rep.ConfigStableOffset < rep.ConfigEndOffset {
		e.ConfigTopic = rep.ConfigTopic
		if clock.Sleep(clock.Or(clk), ctx.Done(), hangWindow) {
			lso, err := r.stableOffset(rep.ConfigTopic)
			if err != nil {
				return nil, fmt.Errorf("last stable offset of config topic %q: %w", rep.ConfigTopic, err)
			}
			e.Hanging, e.HangingAt = lso == rep.ConfigStableOffset, lso
		}
	}
	return checks.Run(parity.EOSChecks(), e), nil
}

// adminEOS is the eosReader of a real cluster.
type adminEOS struct {
	admin  sarama.ClusterAdmin
	client sarama.Client
}

func (a adminEOS) txnState() (bool, map[int32]int, int, error) {
	md, err := a.admin.DescribeTopics([]string{parity.TxnStateTopic})
	if err != nil {
		return false, nil, 0, err
	}
	if len(md) != 1 || errors.Is(md[0].Err, sarama.ErrUnknownTopicOrPartition) {
		return false, nil, 0, nil
	}
	if md[0].Err != sarama.ErrNoError {
		return false, nil, 0, md[0].Err
	}
	isr := map[int32]int{}
	for _, p := range md[0].Partitions {
		isr[p.ID] = len(p.Isr)
	}
	n, err := a.configInt(sarama.TopicResource, parity.TxnStateTopic, "min.insync.replicas")
	return true, isr, n, err
}

func (a adminEOS) brokers() (int, int, error) {
	bs, _, err := a.admin.DescribeCluster()
	if err != nil {
		return 0, 0, err
	}
	if len(bs) == 0 {
		return 0, 0, errors.New("no broker described")
	}
	const key = "transaction.state.log.replication.factor"
	rf, err := a.configInt(sarama.BrokerResource, strconv.Itoa(int(bs[0].ID())), key)
	if err != nil {
		return len(bs), 0, err
	}
	if rf <= 0 {
		rf = 3 // Kafka's default
	}
	return len(bs), rf, nil
}

func (a adminEOS) stableOffset(topic string) (int64, error) {
	leader, err := a.client.Leader(topic, 0)
	if err != nil {
		return -1, err
	}
	req := sarama.NewOffsetRequest(sarama.MaxVersion)
	req.IsolationLevel = sarama.ReadCommitted
	req.AddBlock(topic, 0, sarama.OffsetNewest, 1)
	resp, err := leader.GetAvailableOffsets(req)
	if err != nil {
		return -1, err
	}
	b := resp.GetBlock(topic, 0)
	if b == nil {
		return -1, errors.New("no answer for partition 0")
	}
	if b.Err != sarama.ErrNoError {
		return -1, b.Err
	}
	return b.Offset, nil
}

// configInt is the integer config name of one resource (0 when absent).
func (a adminEOS) configInt(t sarama.ConfigResourceType, resource, name string) (int, error) {
	res, err := a.admin.DescribeConfigs([]*sarama.ConfigResource{{Type: t, Name: resource, ConfigNames: []string{name}}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return 0, err
	}
	if len(res) != 1 {
		return 0, fmt.Errorf("describe configs of %s: %d answers", resource, len(res))
	}
	if res[0].ErrorCode != sarama.ErrNoError {
		return 0, fmt.Errorf("describe configs of %s: %w", resource, res[0].ErrorCode)
	}
	for _, e := range res[0].Configs {
		if e.Name == name {
			n, _ := strconv.Atoi(e.Value)
			return n, nil
		}
	}
	return 0, nil
}
