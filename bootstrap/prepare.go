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
	member, err := SaramaConfig(cfg.Worker, RoleMember)
	if err != nil {
		return nil, err
	}
	admin, err := SaramaConfig(cfg.Worker, RoleAdmin)
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
	member, err := newSeededClient(bootstrap, c.MemberConfig, seedTopics)
	if err != nil {
		return err
	}
	adminClient, err := newSeededClient(bootstrap, c.AdminConfig, seedTopics)
	if err != nil {
		member.Close()
		return err
	}
	admin, err := sarama.NewClusterAdminFromClient(adminClient)
	if err != nil {
		adminClient.Close()
		member.Close()
		return fmt.Errorf("connect admin client to %v: %s", bootstrap, ExplainConnError(err))
	}
	c.Member, c.Admin = member, admin
	return nil
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

// Prepare runs gates 2 to 4 of DESIGN.md: every broker up, internal topics
// right, the group's coordinator safe. It returns the clients for the
// gates that follow (the caller closes them) and the report so far.
func Prepare(ctx context.Context, cfg *Config, clients *Clients, log *slog.Logger, clock Clock) (*Report, error) {
	rep := &Report{}
	bg := &BrokerGate{Config: clients.MemberConfig, Bootstrap: cfg.BootstrapServers, Expected: cfg.ExpectedBrokers,
		Topics: cfg.TopicNames(), Log: log, Clock: clock}
	var err error
	if rep.Brokers, err = bg.Wait(ctx); err != nil {
		return rep, err
	}
	if err := clients.Connect(cfg.BootstrapServers, cfg.TopicNames()); err != nil {
		return rep, &GateError{Gate: "brokers", Err: err}
	}
	tg := &TopicGate{Admin: clients.Admin, Config: clients.AdminConfig, Specs: cfg.Topics, Log: log, Clock: clock, Create: true}
	if rep.Topics, err = tg.Ensure(ctx); err != nil {
		return rep, err
	}
	cg := &CoordinatorGate{Client: clients.Member, Admin: clients.Admin, GroupID: cfg.GroupID, Log: log, Clock: clock,
		Strict: cfg.Settings.Strict, Wait: true}
	if rep.Coordinator, err = cg.Check(ctx); err != nil {
		return rep, err
	}
	// The group step judges every member before anything is written, then
	// registers this worker in the cluster registry (Identity.Register).
	gg := NewGroupGate(cfg, clients, log, clock)
	gg.Identity.Register = true
	if rep.Group, err = gg.Check(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}
