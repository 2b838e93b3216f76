package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// Clients are the Kafka clients the gates after the broker gate share.
type Clients struct {
	// Member speaks with the worker's top-level settings.
	Member sarama.Client
	// Admin speaks with the admin.* overrides folded in.
	Admin sarama.ClusterAdmin
	// AdminClient is Admin's client (Member when they are one), whose
	// connections to every broker the gates reuse.
	AdminClient sarama.Client
	// MemberConfig and AdminConfig are the configurations they were built from.
	MemberConfig, AdminConfig *sarama.Config
	// ClusterID is the Kafka cluster id, when the brokers step's metadata
	// answer gave it: the group step's registry read needs it, and asking
	// again was a round trip of every start (issue 39). "": not known.
	ClusterID string
	// shared is true when the worker sets no admin.* override: both
	// configurations are then the same, and one client serves both roles
	// (every connection it opens costs a handshake, issue 39).
	shared bool
}

// Close closes both clients (once when they are one).
func (c *Clients) Close() {
	if c.Admin != nil {
		c.Admin.Close()
	}
	if c.Member != nil && !c.Member.Closed() {
		c.Member.Close()
	}
}

// Unconnected is a copy of c's configurations, without clients: a second
// set to dial.
func (c *Clients) Unconnected() *Clients {
	return &Clients{MemberConfig: c.MemberConfig, AdminConfig: c.AdminConfig, shared: c.shared}
}

// Adopt takes o's connected clients as c's own; o must not be closed
// after.
func (c *Clients) Adopt(o *Clients) {
	c.Member, c.AdminClient, c.Admin = o.Member, o.AdminClient, o.Admin
}

// NewClients builds the sarama configurations for both roles (errors here
// are configuration errors) without connecting.
func NewClients(cfg *settings.Config) (*Clients, error) {
	member, err := SaramaConfig(cfg.Worker, workerconfig.ClientMember)
	if err != nil {
		return nil, err
	}
	admin, err := SaramaConfig(cfg.Worker, workerconfig.ClientAdmin)
	if err != nil {
		return nil, err
	}
	return &Clients{MemberConfig: member, AdminConfig: admin, shared: len(cfg.Worker.WithPrefix("admin.")) == 0}, nil
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
		member, adminClient sarama.Client
		admin               sarama.ClusterAdmin
		err                 error
	}
	done := make(chan pair, 1)
	go func() {
		member, adminClient, admin, err := c.dial(bootstrap, seedTopics)
		done <- pair{member, adminClient, admin, err}
	}()
	select {
	case p := <-done:
		if p.err != nil {
			return p.err
		}
		c.Member, c.AdminClient, c.Admin = p.member, p.adminClient, p.admin
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

// dial opens both clients at the same time: each costs a connection, an
// ApiVersions and a metadata read, and one after the other they were a
// measurable part of every start (docs/benchmarks.md, issue 39).
func (c *Clients) dial(bootstrap, seedTopics []string) (member, adminClient sarama.Client, admin sarama.ClusterAdmin, err error) {
	if c.shared {
		member, err := newSeededClient(bootstrap, c.MemberConfig, seedTopics)
		if err != nil {
			return nil, nil, nil, err
		}
		admin, err := sarama.NewClusterAdminFromClient(member)
		if err != nil {
			member.Close()
			return nil, nil, nil, fmt.Errorf("connect admin client to %v: %s", bootstrap, ExplainConnError(err))
		}
		return member, member, admin, nil
	}
	var adminErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		adminClient, adminErr = newSeededClient(bootstrap, c.AdminConfig, seedTopics)
	}()
	member, err = newSeededClient(bootstrap, c.MemberConfig, seedTopics)
	<-done
	if err == nil {
		err = adminErr
	}
	if err != nil {
		if member != nil {
			member.Close()
		}
		if adminClient != nil {
			adminClient.Close()
		}
		return nil, nil, nil, err
	}
	admin, err = sarama.NewClusterAdminFromClient(adminClient)
	if err != nil {
		adminClient.Close()
		member.Close()
		return nil, nil, nil, fmt.Errorf("connect admin client to %v: %s", bootstrap, ExplainConnError(err))
	}
	return member, adminClient, admin, nil
}

func newSeededClient(bootstrap []string, cfg *sarama.Config, seedTopics []string) (sarama.Client, error) {
	client, err := sarama.NewClient(bootstrap, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %v: %s", bootstrap, ExplainConnError(err))
	}
	// The seed read only teaches the client the brokers: an answer with a
	// "not yet" code (a topic not created yet, a leader being elected, the
	// controller moving) leaves the gates to read again. A failure to talk
	// fails here, as an ACL does: the brokers gate has just talked to every
	// broker, so it is likely the admin.* settings' own.
	err = client.RefreshMetadata(seedTopics...)
	var code sarama.KError
	if err != nil && !(errors.As(err, &code) && CodeNotYet(code)) {
		client.Close()
		return nil, fmt.Errorf("read metadata from %v: %s", bootstrap, ExplainConnError(err))
	}
	// Every broker is dialed now, all at once, in the background (sarama's
	// Open does not wait): the gates after this one ask each of them in
	// turn, and each would otherwise wait for its own handshake (issue 39).
	// A failed dial is the first request's error, as without this.
	for _, b := range client.Brokers() {
		_ = b.Open(cfg)
	}
	return client, nil
}
