package kafka

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Quorum is the KRaft controller quorum as DescribeQuorum shows it (the
// __cluster_metadata partition's Raft state).
type Quorum struct {
	// LeaderID is the active controller, -1 when the quorum has no leader.
	LeaderID      int32
	LeaderEpoch   int32
	HighWatermark int64
	Voters        []QuorumVoter
}

// QuorumVoter is one voter and how far behind the leader it is.
type QuorumVoter struct {
	ID int32
	// Lag is the high watermark minus the voter's log end offset.
	Lag int64
	// CaughtUpAgo is how long ago it last caught up, -1 when unknown.
	CaughtUpAgo time.Duration
}

// ErrQuorumNotAsked is returned when DescribeQuorum cannot be sent over the
// client's security settings: the sarama client sends no request it does
// not know, so connect-init sends this one on a connection of its own,
// which speaks PLAINTEXT and SSL but not SASL.
const ErrQuorumNotAsked = constError("DescribeQuorum is sent over PLAINTEXT or SSL listeners only")

// metadataTopic is KRaft's metadata log, the partition DescribeQuorum asks about.
const metadataTopic = "__cluster_metadata"

// DescribeQuorum asks the broker at addr for the controller quorum. A
// broker forwards the request to the active controller
// (KafkaApis: DESCRIBE_QUORUM => forwardToControllerOrFail), so an answer
// proves a controller leads, and no answer within ctx while the broker
// answers other requests means none does. sarama lacks the request; it is
// encoded with franz-go's kmsg and sent on a connection of its own.
func DescribeQuorum(ctx context.Context, cfg *sarama.Config, addr string) (*Quorum, error) {
	if cfg.Net.SASL.Enable {
		return nil, ErrQuorumNotAsked
	}
	conn, err := dialFor(ctx, cfg, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = 1
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = metadataTopic
	part := kmsg.NewDescribeQuorumRequestTopicPartition()
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if err := roundTrip(conn, cfg.ClientID, req, resp); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("DescribeQuorum at %s: no answer: %w", addr, ctx.Err())
		}
		return nil, fmt.Errorf("DescribeQuorum at %s: %w", addr, err)
	}
	return quorumOf(resp)
}

// quorumOf reads the metadata partition's state from the answer.
func quorumOf(resp *kmsg.DescribeQuorumResponse) (*Quorum, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeQuorum: %w", err)
	}
	for _, t := range resp.Topics {
		if len(t.Partitions) > 0 {
			p := t.Partitions[0] // the request names one partition
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("DescribeQuorum %s: %w", t.Topic, err)
			}
			q := &Quorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark}
			for _, v := range p.CurrentVoters {
				ago := time.Duration(-1)
				if v.LastCaughtUpTimestamp > 0 && v.LastFetchTimestamp >= v.LastCaughtUpTimestamp {
					ago = time.Duration(v.LastFetchTimestamp-v.LastCaughtUpTimestamp) * time.Millisecond
				}
				q.Voters = append(q.Voters, QuorumVoter{ID: v.ReplicaID, Lag: p.HighWatermark - v.LogEndOffset, CaughtUpAgo: ago})
			}
			return q, nil
		}
	}
	return nil, errors.New("DescribeQuorum: the answer holds no partition")
}

// dialFor opens a connection to addr as the client would: TLS when its
// security protocol says so.
func dialFor(ctx context.Context, cfg *sarama.Config, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: cfg.Net.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if !cfg.Net.TLS.Enable {
		return conn, nil
	}
	tc := cfg.Net.TLS.Config
	if tc == nil {
		tc = &tls.Config{}
	}
	tc = tc.Clone()
	if tc.ServerName == "" {
		tc.ServerName, _, _ = net.SplitHostPort(addr)
	}
	t := tls.Client(conn, tc)
	if err := t.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return t, nil
}

// roundTrip writes req (a flexible request, header v2) and reads its
// answer into resp.
func roundTrip(conn net.Conn, clientID string, req kmsg.Request, resp kmsg.Response) error {
	const correlationID = 1
	msg := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, req, correlationID)
	if _, err := conn.Write(msg); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	var size int32
	if err := binary.Read(r, binary.BigEndian, &size); err != nil {
		return err
	}
	if size < 4 || size > 1<<24 {
		return fmt.Errorf("answer of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != correlationID {
		return fmt.Errorf("answer to correlation id %d, want %d", got, correlationID)
	}
	rest, err := skipTags(body[4:])
	if err != nil {
		return err
	}
	return resp.ReadFrom(rest)
}

// skipTags steps over a flexible response header's tagged fields.
func skipTags(b []byte) ([]byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, errors.New("malformed response header")
	}
	b = b[w:]
	for range n {
		if _, w = binary.Uvarint(b); w <= 0 {
			return nil, errors.New("malformed response header tag")
		}
		b = b[w:]
		size, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < size {
			return nil, errors.New("malformed response header tag")
		}
		b = b[w+int(size):]
	}
	return b, nil
}

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }
