package gate

import (
	"context"
	"log/slog"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
)

// Report gathers the typed results of the gates that ran.
type Report struct {
	Brokers     *BrokerReport      `json:"brokers,omitempty"`
	Topics      *TopicReport       `json:"topics,omitempty"`
	Coordinator *CoordinatorReport `json:"coordinator,omitempty"`
	Group       *GroupReport       `json:"group,omitempty"`
}

// Cluster runs the cluster gates (brokers, topics, coordinator, group) one
// at a time, each a step of the start-up pipeline of cmd/connect-init, and
// keeps their reports. Brokers connects Clients for the gates after it.
type Cluster struct {
	Config  *settings.Config
	Clients *kafka.Clients
	Log     *slog.Logger
	Clock   clock.Clock
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
