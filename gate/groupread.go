package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/IBM/sarama"
)

// The group gate's reads of Kafka: DescribeGroups at the coordinator,
// and our config topic's end offsets at its leader. Each request is
// bounded by the look's context, never cut short by closing a connection
// the other role shares (issue 48).

// describe sends DescribeGroups for the group to its coordinator, found
// with Client (refreshed when the coordinator moved) or, without a Client,
// through Admin. A group the coordinator does not know is reported with
// state NotFound rather than as an error.
func (g *GroupGate) describe(ctx context.Context) (d *sarama.GroupDescription, err error) {
	var groups []*sarama.GroupDescription
	if g.Client == nil {
		var err error
		if groups, err = g.Admin.DescribeConsumerGroups([]string{g.GroupID}); err != nil {
			return nil, fmt.Errorf("describe group %q: %w", g.GroupID, err)
		}
	} else {
		coord, err := g.coordinatorBroker()
		if err != nil {
			return nil, fmt.Errorf("find coordinator of group %q: %w", g.GroupID, err)
		}
		// bounded, not a Close when ctx ends: the client is shared with
		// the other role (issue 48), and sarama's Close waits for the
		// request's read timeout anyway, then kills the connection under
		// whoever else uses it.
		resp, err := bounded(ctx, func() (*sarama.DescribeGroupsResponse, error) {
			return coord.DescribeGroups(&sarama.DescribeGroupsRequest{Version: 5, Groups: []string{g.GroupID}})
		})
		if err != nil {
			g.coordinator.Store(nil)
			if ctx.Err() == nil {
				_ = g.Client.RefreshCoordinator(g.GroupID)
			}
			return nil, fmt.Errorf("describe group %q at coordinator %d (%s): %w", g.GroupID, coord.ID(), coord.Addr(), err)
		}
		groups = resp.Groups
	}
	defer func() {
		if err != nil {
			g.coordinator.Store(nil)
		}
	}()
	for _, d := range groups {
		if d.GroupId != g.GroupID {
			continue
		}
		kerr := d.Err
		if kerr == sarama.ErrNoError && d.ErrorCode != 0 {
			kerr = sarama.KError(d.ErrorCode)
		}
		switch kerr {
		case sarama.ErrNoError:
			return d, nil
		case sarama.ErrGroupIDNotFound:
			return &sarama.GroupDescription{GroupId: g.GroupID, State: GroupNotFound}, nil
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
			if g.Client != nil {
				_ = g.Client.RefreshCoordinator(g.GroupID)
			}
		}
		return nil, fmt.Errorf("describe group %q: %w", g.GroupID, kerr)
	}
	return nil, fmt.Errorf("describe group %q: the coordinator's answer does not mention the group", g.GroupID)
}

// UseCoordinator makes DescribeGroups go to c, the coordinator the
// brokers step found (BrokerGate.FindCoordinator), until an answer fails.
func (g *GroupGate) UseCoordinator(c *FoundCoordinator) { g.coordinator.Store(c) }

// coordinatorBroker is the client's connection to the group's
// coordinator: the one UseCoordinator named, while the client knows that
// broker at that address, or the one sarama's client looks up.
func (g *GroupGate) coordinatorBroker() (*sarama.Broker, error) {
	if c := g.coordinator.Load(); c != nil {
		if b, err := g.Client.Broker(c.ID); err == nil && b.Addr() == c.Addr {
			return b, nil
		}
		g.coordinator.Store(nil)
	}
	return g.Client.Coordinator(g.GroupID)
}

// ConfigEndOffsets reads the config topic's partition 0 high watermark
// and last stable offset from its leader. They differ while a transaction
// on the config topic is open; doctor reads them again later to tell a
// hanging transaction from a short one.
//
// One fetch answers both (every fetch answer carries the partition's high
// watermark and last stable offset; read_committed, so the last stable
// offset is the one a read_committed consumer stops at), where two
// ListOffsets (read_uncommitted, then read_committed) were two round trips
// of every start (issue 39). The fetch asks for one byte from offset 0, so
// the answer holds at most the log's first batch. A log that no longer
// starts at 0, or an answer without a last stable offset, is read with the
// two ListOffsets.
func (g *GroupGate) ConfigEndOffsets(ctx context.Context) (hw, lso int64, err error) {
	if g.Client == nil {
		return -1, -1, errors.New("no client to read the config topic's offsets with")
	}
	// The leader the client knows (the topics step has just read the
	// topic's metadata; sarama reads it when it does not know it): a
	// refresh before every read was a round trip of every start (issue
	// 39). An answer that fails refreshes it for the next look.
	leader, err := g.Client.Leader(g.ConfigTopic, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("leader of config topic %q partition 0: %w", g.ConfigTopic, err)
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			_ = g.Client.RefreshMetadata(g.ConfigTopic)
		}
	}()
	// bounded, not a Close when ctx ends: the connection is shared with
	// the other role (issue 48).
	e, err := bounded(ctx, func() ([2]int64, error) {
		hw, lso, err := g.endOffsetsAt(leader)
		return [2]int64{hw, lso}, err
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, err)
		}
		return -1, -1, err
	}
	return e[0], e[1], nil
}

// endOffsetsAt reads the config topic's high watermark and last stable
// offset from its leader: one read_committed fetch, or the two
// ListOffsets when the fetch's answer cannot tell (ConfigEndOffsets).
func (g *GroupGate) endOffsetsAt(leader *sarama.Broker) (hw, lso int64, err error) {
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 0, MinBytes: 0, MaxBytes: 1, Isolation: sarama.ReadCommitted}
	req.AddBlock(g.ConfigTopic, 0, 0, 1, -1)
	resp, err := leader.Fetch(req)
	if err != nil {
		return -1, -1, fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, err)
	}
	b := resp.GetBlock(g.ConfigTopic, 0)
	switch {
	case b == nil:
		return -1, -1, fmt.Errorf("end offsets of config topic %q: no answer for partition 0", g.ConfigTopic)
	case b.Err == sarama.ErrNoError && b.LastStableOffset >= 0:
		return b.HighWaterMarkOffset, b.LastStableOffset, nil
	case b.Err != sarama.ErrNoError && b.Err != sarama.ErrOffsetOutOfRange:
		return -1, -1, fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, b.Err)
	}
	read := func(level sarama.IsolationLevel) (int64, error) {
		req := sarama.NewOffsetRequest(sarama.MaxVersion)
		req.IsolationLevel = level
		req.AddBlock(g.ConfigTopic, 0, sarama.OffsetNewest, 1)
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			return -1, err
		}
		b := resp.GetBlock(g.ConfigTopic, 0)
		if b == nil {
			return -1, errors.New("no answer for partition 0")
		}
		if b.Err != sarama.ErrNoError {
			return -1, b.Err
		}
		if len(b.Offsets) > 0 && b.Offset == 0 {
			return b.Offsets[0], nil
		}
		return b.Offset, nil
	}
	if hw, err = read(sarama.ReadUncommitted); err != nil {
		return -1, -1, fmt.Errorf("end offset of config topic %q: %w", g.ConfigTopic, err)
	}
	if lso, err = read(sarama.ReadCommitted); err != nil {
		return -1, -1, fmt.Errorf("last stable offset of config topic %q: %w", g.ConfigTopic, err)
	}
	return hw, lso, nil
}

// MemberURLs looks at the group once and returns the REST URLs its
// members advertise. ok is false when the look cannot tell who the members
// are: the describe failed, or the group is between two generations
// (DescribeGroups hides the members' metadata unless the group is Stable).
// An Empty, Dead or unknown group has no members: ok, no URLs.
func (g *GroupGate) MemberURLs(ctx context.Context) (urls []string, ok bool) {
	describe := g.describeFn
	if describe == nil {
		describe = g.describe
	}
	d, err := describe(ctx)
	if err != nil || !settled(d.State) {
		return nil, false
	}
	for _, m := range NewGroupReport(g.GroupID, g.ConfigTopic, d).Decoded {
		if m.Metadata == nil {
			return nil, false // a member we cannot read: it may be the one asked about
		}
		urls = append(urls, m.Metadata.URL)
	}
	return urls, true
}
