package kafka

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeQuorum against a fake broker that checks the request's bytes and
// answers as a KRaft broker does: the metadata partition's leader, its
// voters and their lag.
func TestDescribeQuorumRoundTrip(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var size int32
		if binary.Read(c, binary.BigEndian, &size) != nil {
			return
		}
		req := make([]byte, size)
		if _, err := c.Read(req); err != nil || binary.BigEndian.Uint16(req) != 55 {
			return
		}
		resp := kmsg.NewPtrDescribeQuorumResponse()
		resp.Version = 1
		p := kmsg.NewDescribeQuorumResponseTopicPartition()
		p.LeaderID, p.LeaderEpoch, p.HighWatermark = 1, 7, 100
		v1 := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		v1.ReplicaID, v1.LogEndOffset, v1.LastFetchTimestamp, v1.LastCaughtUpTimestamp = 1, 100, 5000, 5000
		v2 := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
		v2.ReplicaID, v2.LogEndOffset, v2.LastFetchTimestamp, v2.LastCaughtUpTimestamp = 2, 90, 5000, 3000
		p.CurrentVoters = append(p.CurrentVoters, v1, v2)
		tp := kmsg.NewDescribeQuorumResponseTopic()
		tp.Topic, tp.Partitions = "__cluster_metadata", append(tp.Partitions, p)
		resp.Topics = append(resp.Topics, tp)
		body := append([]byte{0, 0, 0, 1, 0}, resp.AppendTo(nil)...) // correlation id 1, no header tags
		var out bytes.Buffer
		_ = binary.Write(&out, binary.BigEndian, int32(len(body)))
		out.Write(body)
		_, _ = c.Write(out.Bytes())
	}()
	cfg := sarama.NewConfig()
	q, err := DescribeQuorum(t.Context(), cfg, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if q.LeaderID != 1 || q.LeaderEpoch != 7 || len(q.Voters) != 2 || q.Voters[1].Lag != 10 || q.Voters[1].CaughtUpAgo != 2*time.Second {
		t.Fatalf("quorum %+v", q)
	}
	cfg.Net.SASL.Enable = true
	if _, err := DescribeQuorum(t.Context(), cfg, ln.Addr().String()); err != ErrQuorumNotAsked {
		t.Errorf("over SASL: %v, want ErrQuorumNotAsked", err)
	}
}
