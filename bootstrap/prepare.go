package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/IBM/sarama"
)

// Report gathers the typed results of the gates that ran.
type Report struct {
	Brokers     *BrokerReport      `json:"brokers,omitempty"`
	Topics      *TopicReport       `json:"topics,omitempty"`
	Coordinator *CoordinatorReport `json:"coordinator,omitempty"`
	Group       *GroupReport       `json:"group,omitempty"`
}

// Clients are the Kafka clients the gates after the broker gate share.
type Clients struct {
	// Member speaks with the worker's top-level settings.
	Member sarama.Client
	// Admin speaks with the admin.* overrides folded in.
	Admin sarama.ClusterAdmin
	// MemberConfig and AdminConfig are the configurations they were built from.
	MemberConfig, AdminConfig *sarama.Config
}

// Close closes both clients.
func (c *Clients) Close() {
	if c.Admin != nil {
		c.Admin.Close()
	}
	if c.Member != nil {
		c.Member.Close()
	}
}

// NewClients builds the sarama configurations for both roles (errors here
// are configuration errors) without connecting.
func NewClients(cfg *Config) (*Clients, error) {
	member, err := SaramaConfig(cfg.Worker, ClientMember)
	if err != nil {
		return nil, err
	}
	admin, err := SaramaConfig(cfg.Worker, ClientAdmin)
	if err != nil {
		return nil, err
	}
	return &Clients{MemberConfig: member, AdminConfig: admin}, nil
}

// Connect opens the member client and the admin client. Both are seeded
// with the metadata of the internal topics: sarama's clients run with
// Metadata.Full off (a big cluster's full topic list is not our business),
// and such a client learns brokers and controller only from a request.
func (c *Clients) Connect(bootstrap, seedTopics []string) error {
	return c.ConnectContext(context.Background(), bootstrap, seedTopics)
}

// ConnectContext is Connect bounded by ctx: sarama's clients dial without
// a context (5 s per address), and the brokers gate must end with its
// timeout. Clients connected after ctx ended are closed, never kept.
func (c *Clients) ConnectContext(ctx context.Context, bootstrap, seedTopics []string) error {
	type pair struct {
		member sarama.Client
		admin  sarama.ClusterAdmin
		err    error
	}
	done := make(chan pair, 1)
	go func() {
		member, admin, err := c.dial(bootstrap, seedTopics)
		done <- pair{member, admin, err}
	}()
	select {
	case p := <-done:
		if p.err != nil {
			return p.err
		}
		c.Member, c.Admin = p.member, p.admin
		return nil
	case <-ctx.Done():
		go func() {
			if p := <-done; p.err == nil {
				p.admin.Close()
				p.member.Close()
			}
		}()
		return fmt.Errorf("connect to %v: %w", bootstrap, ctx.Err())
	}
}

func (c *Clients) dial(bootstrap, seedTopics []string) (sarama.Client, sarama.ClusterAdmin, error) {
	member, err := newSeededClient(bootstrap, c.MemberConfig, seedTopics)
	if err != nil {
		return nil, nil, err
	}
	adminClient, err := newSeededClient(bootstrap, c.AdminConfig, seedTopics)
	if err != nil {
		member.Close()
		return nil, nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(adminClient)
	if err != nil {
		adminClient.Close()
		member.Close()
		return nil, nil, fmt.Errorf("connect admin client to %v: %s", bootstrap, ExplainConnError(err))
	}
	return member, admin, nil
}

func newSeededClient(bootstrap []string, cfg *sarama.Config, seedTopics []string) (sarama.Client, error) {
	client, err := sarama.NewClient(bootstrap, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %v: %s", bootstrap, ExplainConnError(err))
	}
	err = client.RefreshMetadata(seedTopics...)
	if err != nil && !errors.Is(err, sarama.ErrUnknownTopicOrPartition) && !errors.Is(err, sarama.ErrLeaderNotAvailable) {
		client.Close()
		return nil, fmt.Errorf("read metadata from %v: %s", bootstrap, ExplainConnError(err))
	}
	return client, nil
}

// Cluster runs the cluster gates (brokers, topics, coordinator, group) one
// at a time, each a step of the start-up pipeline of cmd/connect-init, and
// keeps their reports. Brokers connects Clients for the gates after it.
type Cluster struct {
	Config  *Config
	Clients *Clients
	Log     *slog.Logger
	Clock   Clock
	// Report gathers the reports of the gates that ran.
	Report Report
}

// Brokers is the brokers gate: every broker up, then the clients connect.
func (c *Cluster) Brokers(ctx context.Context) (err error) {
	cfg, clients, rep := c.Config, c.Clients, &c.Report
	bg := &BrokerGate{Config: clients.MemberConfig, Bootstrap: cfg.BootstrapServers, Expected: cfg.ExpectedBrokers,
		Topics: cfg.TopicNames(), Log: c.Log, Clock: c.Clock}
	if rep.Brokers, err = bg.Wait(ctx); err != nil {
		return err
	}
	if err := clients.ConnectContext(ctx, cfg.BootstrapServers, cfg.TopicNames()); err != nil {
		return &GateError{Gate: "brokers", Err: err}
	}
	return nil
}

// Topics is the topics gate: the internal topics exist and are right.
func (c *Cluster) Topics(ctx context.Context) (err error) {
	tg := &TopicGate{Admin: c.Clients.Admin, Config: c.Clients.AdminConfig, Specs: c.Config.Topics, Log: c.Log, Clock: c.Clock, Create: true}
	c.Report.Topics, err = tg.Ensure(ctx)
	return err
}

// Coordinator is the coordinator gate: the group's coordinator is found
// and its partition survives a broker loss.
func (c *Cluster) Coordinator(ctx context.Context) (err error) {
	cg := &CoordinatorGate{Client: c.Clients.Member, Admin: c.Clients.Admin, GroupID: c.Config.GroupID, Log: c.Log, Clock: c.Clock,
		Strict: c.Config.Settings.Strict, Wait: true}
	c.Report.Coordinator, err = cg.Check(ctx)
	return err
}

// Group is the group gate: no member of the worker group is foreign.
func (c *Cluster) Group(ctx context.Context) (err error) {
	cfg, clients, log, clock, rep := c.Config, c.Clients, c.Log, c.Clock, &c.Report
	// The group gate judges every member before anything is written, then
	// registers this worker in the cluster registry (Identity.Register).
	gg := NewGroupGate(cfg, clients, log, clock)
	gg.Identity.Register = true
	if rep.Group, err = gg.Check(ctx); err != nil {
		return err
	}
	return nil
}

// Prepare runs the brokers, topics, coordinator and group gates in order
// (DESIGN.md): every broker up, internal topics right, the group's
// coordinator safe, the group ours. The caller closes the clients. It
// returns the report so far.
func Prepare(ctx context.Context, cfg *Config, clients *Clients, log *slog.Logger, clock Clock) (*Report, error) {
	c := &Cluster{Config: cfg, Clients: clients, Log: log, Clock: clock}
	for _, gate := range []func(context.Context) error{c.Brokers, c.Topics, c.Coordinator, c.Group} {
		if err := gate(ctx); err != nil {
			return &c.Report, err
		}
	}
	return &c.Report, nil
}
