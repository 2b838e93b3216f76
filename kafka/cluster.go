package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/IBM/sarama"
)

// Registration is one broker the cluster has registered.
type Registration struct {
	ID     int32
	Addr   string
	Fenced bool
}

// DescribeClusterAt asks the broker at addr for the registered brokers,
// fenced ones included where the broker can say so (DescribeCluster v2,
// Kafka 4.0+; fencedKnown is then true). sarama's ClusterAdmin asks 4.x
// brokers for fenced brokers too but drops the flag, which made a stopped
// broker look live; this reads it.
func DescribeClusterAt(ctx context.Context, cfg *sarama.Config, addr string) (regs []Registration, fencedKnown bool, err error) {
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, false, err
	}
	defer b.Close()
	stop := context.AfterFunc(ctx, func() { b.Close() })
	defer stop()
	return DescribeClusterVia(b)
}

// DescribeClusterVia is DescribeClusterAt over an open broker connection.
func DescribeClusterVia(b *sarama.Broker) (regs []Registration, fencedKnown bool, err error) {
	req := &sarama.DescribeClusterRequest{Version: 2, EndpointType: sarama.DescribeClusterEndpointTypeBrokers, IncludeFencedBrokers: true}
	resp, err := b.DescribeCluster(req)
	if err != nil {
		return nil, false, err
	}
	if !errors.Is(resp.Err, sarama.ErrNoError) {
		return nil, false, resp.Err
	}
	for _, r := range resp.Brokers {
		regs = append(regs, Registration{ID: r.BrokerID, Addr: net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port))), Fenced: r.IsFenced})
	}
	return regs, req.Version >= 2, nil
}

// Metadata sends one metadata request for topics to addr.
func Metadata(ctx context.Context, cfg *sarama.Config, addr string, topics []string) (*sarama.MetadataResponse, error) {
	md, c, err := MetadataOpen(ctx, cfg, addr, topics)
	if c != nil {
		c.Close()
	}
	return md, err
}

// Conn is a broker connection bound to a context: the context's end
// closes it, and Close closes it and lets go of the context.
type Conn struct {
	*sarama.Broker
	stop func() bool
}

// Close closes the connection.
func (c *Conn) Close() {
	c.stop()
	_ = c.Broker.Close()
}

// MetadataOpen is Metadata that leaves the connection open on success, for
// the caller's next requests to the same broker (a new connection costs a
// handshake and an ApiVersions round trip, issue 39); the caller closes it.
// Until then ctx's end closes it. On failure the connection is closed and
// nil.
func MetadataOpen(ctx context.Context, cfg *sarama.Config, addr string, topics []string) (*sarama.MetadataResponse, *Conn, error) {
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { b.Close() })
	req := sarama.NewMetadataRequest(cfg.Version, topics)
	req.AllowAutoTopicCreation = false
	md, err := b.GetMetadata(req)
	if err != nil {
		stop()
		b.Close()
		return nil, nil, err
	}
	return md, &Conn{Broker: b, stop: stop}, nil
}

// Mode is how a cluster keeps its metadata, which decides the words for a
// broker that is not live: KRaft fences it, ZooKeeper drops it when its
// session ends.
type Mode string

// Modes; ModeUnknown when the broker is too old to say (ApiVersions < v3).
const (
	ModeKRaft     Mode = "kraft"
	ModeZooKeeper Mode = "zookeeper"
	ModeUnknown   Mode = ""
)

// metadataVersion is the feature a KRaft cluster always finalizes
// (KIP-778); a ZooKeeper-mode broker finalizes no such feature.
const metadataVersion = "metadata.version"

// ModeOf reads the mode from an ApiVersions answer of v3 or later.
func ModeOf(resp *sarama.ApiVersionsResponse) Mode {
	if resp == nil || resp.Version < 3 {
		return ModeUnknown
	}
	for _, f := range resp.FinalizedFeatures {
		if f.Name == metadataVersion && f.MaxVersionLevel > 0 {
			return ModeKRaft
		}
	}
	return ModeZooKeeper
}

// ClusterMode asks the broker at addr (ApiVersions v3) how the cluster
// keeps its metadata.
func ClusterMode(ctx context.Context, cfg *sarama.Config, addr string) (Mode, error) {
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return ModeUnknown, err
	}
	defer b.Close()
	stop := context.AfterFunc(ctx, func() { b.Close() })
	defer stop()
	return ClusterModeVia(b, addr)
}

// ClusterModeVia is ClusterMode over an open connection to addr.
func ClusterModeVia(b *sarama.Broker, addr string) (Mode, error) {
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "connect-init", ClientSoftwareVersion: "1"})
	if err != nil {
		return ModeUnknown, fmt.Errorf("ask %s for its features: %w", addr, err)
	}
	return ModeOf(resp), nil
}
