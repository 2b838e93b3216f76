package repair

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka/notyet"
)

// Names of the throttle settings (Kafka's, as kafka-reassign-partitions
// sets them).
const (
	LeaderRate       = "leader.replication.throttled.rate"
	FollowerRate     = "follower.replication.throttled.rate"
	LeaderReplicas   = "leader.replication.throttled.replicas"
	FollowerReplicas = "follower.replication.throttled.replicas"
)

// SaramaCluster is the Cluster of a real Kafka cluster, through a sarama
// client (its configuration decides TLS, SASL and versions).
type SaramaCluster struct {
	Client sarama.Client
	Admin  sarama.ClusterAdmin

	mu sync.Mutex
	// brokers are the live brokers of the last Describe, for requests
	// that must go to one broker (its settings).
	brokers map[int32]*sarama.Broker
}

// NewSaramaCluster wraps a connected client.
func NewSaramaCluster(client sarama.Client) (*SaramaCluster, error) {
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return nil, err
	}
	return &SaramaCluster{Client: client, Admin: admin}, nil
}

// Describe implements Cluster. It reads the metadata of every topic, since
// ListPartitionReassignments names the partitions it is asked about and a
// reassignment of any topic counts.
func (c *SaramaCluster) Describe(ctx context.Context, topics []string) (State, error) {
	st := State{Topics: map[string][]PartitionState{}, FollowerThrottled: map[string][]string{}}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	// One metadata request for every topic: its brokers are the live ones
	// (KRaft lists no fenced broker), its topics give the partitions.
	var md *sarama.MetadataResponse
	err := c.onController(func(b *sarama.Broker) (err error) {
		md, err = b.GetMetadata(sarama.NewMetadataRequest(c.Client.Config().Version, nil))
		return err
	})
	if err != nil {
		return st, fmt.Errorf("read the cluster's metadata: %w", err)
	}
	st.Brokers = c.rememberBrokers(md)
	req := &sarama.ListPartitionReassignmentsRequest{TimeoutMs: 30000}
	for _, t := range md.Topics {
		if !errors.Is(t.Err, sarama.ErrNoError) {
			if slices.Contains(topics, t.Name) && notyet.Code(t.Err) {
				// A topic being created or moved (LEADER_NOT_AVAILABLE):
				// not "missing"; Executor looks again.
				return st, fmt.Errorf("topic %s: %w", t.Name, t.Err)
			}
			continue
		}
		ids := make([]int32, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ids = append(ids, p.ID)
		}
		if len(ids) > 0 {
			req.AddBlock(t.Name, ids)
		}
		if slices.Contains(topics, t.Name) {
			st.Topics[t.Name] = partitionStates(t)
		}
	}
	if st.Reassignments, err = c.reassignments(req); err != nil {
		return st, err
	}
	for _, t := range topics {
		if _, ok := st.Topics[t]; !ok {
			continue
		}
		v, err := c.topicConfig(t, FollowerReplicas)
		if err != nil {
			return st, err
		}
		st.FollowerThrottled[t] = splitList(v)
	}
	return st, nil
}

// rememberBrokers keeps the metadata's brokers for the requests that
// must go to one broker (a broker whose address changed is reconnected),
// and returns them by id.
func (c *SaramaCluster) rememberBrokers(md *sarama.MetadataResponse) []Broker {
	var live []Broker
	c.mu.Lock()
	if c.brokers == nil {
		c.brokers = map[int32]*sarama.Broker{}
	}
	for _, b := range md.Brokers {
		live = append(live, Broker{ID: b.ID(), Rack: b.Rack()})
		if old, ok := c.brokers[b.ID()]; !ok || old.Addr() != b.Addr() {
			if ok {
				_ = old.Close()
			}
			c.brokers[b.ID()] = b
		}
	}
	c.mu.Unlock()
	sort.Slice(live, func(i, j int) bool { return live[i].ID < live[j].ID })
	return live
}

// partitionStates copies one topic's partitions out of sarama's types, by
// partition id, so a State never shares slices with a response.
func partitionStates(t *sarama.TopicMetadata) []PartitionState {
	parts := make([]PartitionState, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		parts = append(parts, PartitionState{ID: p.ID, Leader: p.Leader, Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.Isr)})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	return parts
}

// reassignments lists the reassignments in progress among req's
// partitions, by topic and partition. The controller answers; one that
// is no longer the controller says so, and onController tries the new one.
func (c *SaramaCluster) reassignments(req *sarama.ListPartitionReassignmentsRequest) ([]Reassignment, error) {
	var rsp *sarama.ListPartitionReassignmentsResponse
	err := c.onController(func(b *sarama.Broker) (err error) {
		rsp, err = b.ListPartitionReassignments(req)
		if err == nil && errors.Is(rsp.ErrorCode, sarama.ErrNotController) {
			err = rsp.ErrorCode
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list partition reassignments: %w", err)
	}
	if !errors.Is(rsp.ErrorCode, sarama.ErrNoError) {
		msg := ""
		if rsp.ErrorMessage != nil {
			msg = ": " + *rsp.ErrorMessage
		}
		return nil, fmt.Errorf("list partition reassignments: %w%s", rsp.ErrorCode, msg)
	}
	var rs []Reassignment
	for topic, parts := range rsp.TopicStatus {
		for p, s := range parts {
			rs = append(rs, Reassignment{Topic: topic, Partition: p,
				Replicas: slices.Clone(s.Replicas), Adding: slices.Clone(s.AddingReplicas), Removing: slices.Clone(s.RemovingReplicas)})
		}
	}
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return rs, nil
}

func (c *SaramaCluster) topicConfig(topic, name string) (string, error) {
	rs, err := c.Admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{name}}}, sarama.DescribeConfigsOptions{})
	if err == nil && len(rs) != 1 {
		err = fmt.Errorf("%d results for one topic", len(rs))
	}
	if err == nil && !errors.Is(rs[0].ErrorCode, sarama.ErrNoError) {
		err = fmt.Errorf("%w: %s", rs[0].ErrorCode, rs[0].ErrorMsg)
	}
	if err != nil {
		return "", fmt.Errorf("read %s of topic %s: %w", name, topic, err)
	}
	for _, e := range rs[0].Configs {
		if e.Name == name {
			return e.Value, nil
		}
	}
	return "", nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Reassign implements Cluster: one AlterPartitionReassignments request to
// the controller naming only the moves' partitions.
func (c *SaramaCluster) Reassign(ctx context.Context, moves []Move) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &sarama.AlterPartitionReassignmentsRequest{TimeoutMs: 60000}
	for _, m := range moves {
		req.AddBlock(m.Topic, m.Partition, slices.Clone(m.Target))
	}
	var rsp *sarama.AlterPartitionReassignmentsResponse
	err := c.onController(func(b *sarama.Broker) (err error) {
		rsp, err = b.AlterPartitionReassignments(req)
		if err == nil && errors.Is(rsp.ErrorCode, sarama.ErrNotController) {
			err = rsp.ErrorCode
		}
		return err
	})
	if err != nil {
		return err
	}
	if !errors.Is(rsp.ErrorCode, sarama.ErrNoError) {
		msg := ""
		if rsp.ErrorMessage != nil {
			msg = ": " + *rsp.ErrorMessage
		}
		return fmt.Errorf("%w%s", rsp.ErrorCode, msg)
	}
	var errs []error
	for topic, parts := range rsp.Errors {
		for p, e := range parts {
			if code, msg := blockError(e); code != sarama.ErrNoError {
				errs = append(errs, fmt.Errorf("%s-%d: %w%s", topic, p, code, msg))
			}
		}
	}
	return errors.Join(errs...)
}

// onController runs f against the controller (the broker the cluster
// names for admin requests), and once more after asking for it anew when
// the first try fails (a controller that moved or died).
func (c *SaramaCluster) onController(f func(*sarama.Broker) error) error {
	b, err := c.Client.Controller()
	if err == nil {
		_ = b.Open(c.Client.Config())
		if err = f(b); err == nil {
			return nil
		}
	}
	if b, err = c.Client.RefreshController(); err != nil {
		return fmt.Errorf("find the controller: %w", err)
	}
	_ = b.Open(c.Client.Config())
	return f(b)
}

// SetThrottle implements Cluster.
func (c *SaramaCluster) SetThrottle(ctx context.Context, t Throttle) error {
	topics := map[string]bool{}
	for name := range t.Leader {
		topics[name] = true
	}
	for name := range t.Follower {
		topics[name] = true
	}
	names := make([]string, 0, len(topics))
	for name := range topics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries := map[string]sarama.IncrementalAlterConfigsEntry{}
		for key, add := range map[string][]string{LeaderReplicas: t.Leader[name], FollowerReplicas: t.Follower[name]} {
			old, err := c.topicConfig(name, key)
			if err != nil {
				return err
			}
			v := strings.Join(merge(splitList(old), add), ",")
			entries[key] = sarama.IncrementalAlterConfigsEntry{Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &v}
		}
		if err := c.Admin.IncrementalAlterConfig(sarama.TopicResource, name, entries, false); err != nil {
			return fmt.Errorf("set %s and %s on topic %s: %w", LeaderReplicas, FollowerReplicas, name, err)
		}
	}
	if t.RateBytes <= 0 {
		return nil
	}
	rate := strconv.FormatInt(t.RateBytes, 10)
	for _, b := range t.Brokers {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries := map[string]sarama.IncrementalAlterConfigsEntry{
			LeaderRate:   {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &rate},
			FollowerRate: {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &rate},
		}
		if err := c.alterBroker(b, entries); err != nil {
			return fmt.Errorf("set %s and %s on broker %d: %w", LeaderRate, FollowerRate, b, err)
		}
	}
	return nil
}

// merge appends the entries of add missing from have ("*" covers all).
func merge(have, add []string) []string {
	if slices.Contains(have, "*") {
		return have
	}
	out := slices.Clone(have)
	for _, a := range add {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// RemoveThrottle implements Cluster. Deleting a setting that is not set is
// no error, so it is safe to repeat.
func (c *SaramaCluster) RemoveThrottle(ctx context.Context, topics []string, brokers []int32) error {
	for _, name := range topics {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries := map[string]sarama.IncrementalAlterConfigsEntry{
			LeaderReplicas:   {Operation: sarama.IncrementalAlterConfigsOperationDelete},
			FollowerReplicas: {Operation: sarama.IncrementalAlterConfigsOperationDelete},
		}
		if err := c.Admin.IncrementalAlterConfig(sarama.TopicResource, name, entries, false); err != nil {
			return fmt.Errorf("delete %s and %s on topic %s: %w", LeaderReplicas, FollowerReplicas, name, err)
		}
	}
	for _, b := range brokers {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries := map[string]sarama.IncrementalAlterConfigsEntry{
			LeaderRate:   {Operation: sarama.IncrementalAlterConfigsOperationDelete},
			FollowerRate: {Operation: sarama.IncrementalAlterConfigsOperationDelete},
		}
		if err := c.alterBroker(b, entries); err != nil {
			return fmt.Errorf("delete %s and %s on broker %d: %w", LeaderRate, FollowerRate, b, err)
		}
	}
	return nil
}

// BrokerSetting reads one setting of a live broker (e.g.
// offsets.topic.replication.factor); "" when the broker does not report it.
// The request goes to that broker itself, which alone knows its static
// settings.
func (c *SaramaCluster) BrokerSetting(id int32, name string) (string, error) {
	b, err := c.broker(id)
	if err != nil {
		return "", fmt.Errorf("read %s of broker %d: %w", name, id, err)
	}
	rsp, err := b.DescribeConfigs(&sarama.DescribeConfigsRequest{Version: 1, Resources: []*sarama.ConfigResource{{Type: sarama.BrokerResource, Name: strconv.Itoa(int(id)), ConfigNames: []string{name}}}})
	if err != nil {
		return "", fmt.Errorf("read %s of broker %d: %w", name, id, err)
	}
	for _, r := range rsp.Resources {
		if r.ErrorCode != 0 {
			return "", fmt.Errorf("read %s of broker %d: %w: %s", name, id, sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
		for _, e := range r.Configs {
			if e.Name == name {
				return e.Value, nil
			}
		}
	}
	return "", nil
}

// broker returns a connection to live broker id (as the last Describe
// listed it).
func (c *SaramaCluster) broker(id int32) (*sarama.Broker, error) {
	c.mu.Lock()
	b := c.brokers[id]
	c.mu.Unlock()
	if b == nil {
		return nil, fmt.Errorf("broker %d is not among the live brokers", id)
	}
	if ok, _ := b.Connected(); !ok {
		if err := b.Open(c.Client.Config()); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
			return nil, err
		}
	}
	return b, nil
}

// alterBroker sets or deletes settings of broker id with an
// IncrementalAlterConfigs request to that broker.
func (c *SaramaCluster) alterBroker(id int32, entries map[string]sarama.IncrementalAlterConfigsEntry) error {
	b, err := c.broker(id)
	if err != nil {
		return err
	}
	rsp, err := b.IncrementalAlterConfigs(&sarama.IncrementalAlterConfigsRequest{Version: 1,
		Resources: []*sarama.IncrementalAlterConfigsResource{{Type: sarama.BrokerResource, Name: strconv.Itoa(int(id)), ConfigEntries: entries}}})
	if err != nil {
		return err
	}
	for _, r := range rsp.Resources {
		if r.ErrorCode != 0 {
			return fmt.Errorf("%w: %s", sarama.KError(r.ErrorCode), r.ErrorMsg)
		}
	}
	return nil
}

// Close closes the connections to single brokers (not the client).
func (c *SaramaCluster) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.brokers {
		_ = b.Close()
	}
	c.brokers = nil
}

// blockError reads a partition's error from AlterPartitionReassignments'
// response: sarama decodes it into unexported fields only, so reflection
// reads them (reading, not setting, is allowed).
func blockError(b any) (sarama.KError, string) {
	v := reflect.ValueOf(b)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return sarama.ErrNoError, ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return sarama.ErrNoError, ""
	}
	code := sarama.ErrNoError
	if f := v.FieldByName("errorCode"); f.IsValid() && f.CanInt() {
		code = sarama.KError(f.Int())
	}
	msg := ""
	if f := v.FieldByName("errorMessage"); f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil() {
		msg = ": " + f.Elem().String()
	}
	return code, msg
}
