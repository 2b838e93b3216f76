//go:build integration

package gate

import (
	bin "encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// metaProxy is a small Kafka-aware TCP proxy in front of every broker of a
// real cluster, to make the lag of a cluster that is creating something
// happen on purpose. It forwards every request unchanged and rewrites three
// responses, decoded and encoded again with franz-go's kmsg at the
// version the client asked for:
//   - Metadata, FindCoordinator and DescribeCluster: the brokers'
//     addresses become the proxies' addresses, so the client keeps talking
//     through the proxies (sarama dials the addresses a Metadata answer
//     names);
//   - Metadata: while a lie is set for a topic (on every proxy, or on one
//     broker's), its entry becomes the answer the lie names:
//     UNKNOWN_TOPIC_OR_PARTITION with no partitions (a broker whose metadata
//     lags a creation), LEADER_NOT_AVAILABLE partitions with leader -1, or
//     TOPIC_AUTHORIZATION_FAILED (a final answer).
//
// A fault-injection proxy such as toxiproxy cuts, slows or drops bytes; it
// cannot change what a Kafka answer says, hence this one.
type metaProxy struct {
	t *testing.T
	// byReal maps a broker's real address to its proxy's; proxies lists
	// the proxies in broker order.
	byReal  map[string]string
	proxies []*brokerProxy
	lis     []net.Listener
	wg      sync.WaitGroup
}

// brokerProxy is the proxy of one broker.
type brokerProxy struct {
	real, addr string
	lie        atomic.Pointer[topicLie]
	// lied counts the Metadata answers rewritten by a lie.
	lied atomic.Int64
}

// topicLie is what a proxy says about one topic.
type topicLie struct {
	topic string
	code  int16 // 3 unknown, 5 leader not available, 29 topic authorization failed
}

// Error codes a lie can answer.
const (
	lieUnknownTopic       int16 = 3
	lieLeaderNotAvailable int16 = 5
	lieTopicAuthorization int16 = 29
)

// startMetaProxy starts one proxy per real broker address.
func startMetaProxy(t *testing.T, reals []string) *metaProxy {
	p := &metaProxy{t: t, byReal: map[string]string{}}
	for _, real := range reals {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		bp := &brokerProxy{real: real, addr: l.Addr().String()}
		p.byReal[real] = bp.addr
		p.proxies = append(p.proxies, bp)
		p.lis = append(p.lis, l)
	}
	for i, l := range p.lis {
		p.wg.Add(1)
		go p.accept(l, p.proxies[i])
	}
	t.Cleanup(p.close)
	return p
}

func (p *metaProxy) close() {
	for _, l := range p.lis {
		l.Close()
	}
	p.wg.Wait()
}

// bootstrap is the proxies' addresses, for a client's bootstrap list.
func (p *metaProxy) bootstrap() []string {
	var out []string
	for _, bp := range p.proxies {
		out = append(out, bp.addr)
	}
	return out
}

// lie makes every proxy answer code for topic; lieOn only proxy i.
func (p *metaProxy) lie(topic string, code int16) {
	for i := range p.proxies {
		p.lieOn(i, topic, code)
	}
}

func (p *metaProxy) lieOn(i int, topic string, code int16) {
	p.proxies[i].lie.Store(&topicLie{topic: topic, code: code})
}

// truth ends every lie.
func (p *metaProxy) truth() {
	for _, bp := range p.proxies {
		bp.lie.Store(nil)
	}
}

// lied is how many Metadata answers the lies rewrote.
func (p *metaProxy) lied() int64 {
	var n int64
	for _, bp := range p.proxies {
		n += bp.lied.Load()
	}
	return n
}

func (p *metaProxy) accept(l net.Listener, bp *brokerProxy) {
	defer p.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			p.serve(c, bp)
		}()
	}
}

// request is what a response is decoded with: the key and version of the
// request that carried its correlation id.
type request struct{ key, version int16 }

// serve forwards one client connection to its broker.
func (p *metaProxy) serve(client net.Conn, bp *brokerProxy) {
	defer client.Close()
	broker, err := net.Dial("tcp", bp.real)
	if err != nil {
		return
	}
	defer broker.Close()
	var mu sync.Mutex
	inFlight := map[int32]request{}
	done := make(chan struct{})
	go func() { // client -> broker: note each request, forward it as it is
		defer close(done)
		defer broker.Close()
		for {
			frame, err := readFrame(client)
			if err != nil {
				return
			}
			if len(frame) >= 8 {
				key := int16(bin.BigEndian.Uint16(frame[0:2]))
				version := int16(bin.BigEndian.Uint16(frame[2:4]))
				corr := int32(bin.BigEndian.Uint32(frame[4:8]))
				mu.Lock()
				inFlight[corr] = request{key, version}
				mu.Unlock()
			}
			if writeFrame(broker, frame) != nil {
				return
			}
		}
	}()
	for { // broker -> client: rewrite what needs it
		frame, err := readFrame(broker)
		if err != nil {
			break
		}
		if len(frame) >= 4 {
			corr := int32(bin.BigEndian.Uint32(frame[0:4]))
			mu.Lock()
			req, ok := inFlight[corr]
			delete(inFlight, corr)
			mu.Unlock()
			if ok {
				if out, err := p.rewrite(bp, req, frame); err == nil {
					frame = out
				} else {
					p.t.Errorf("metaProxy: cannot rewrite the answer to key %d v%d: %v", req.key, req.version, err)
				}
			}
		}
		if writeFrame(client, frame) != nil {
			break
		}
	}
	client.Close()
	<-done
}

// rewrite returns frame (correlation id, header, body) with its brokers'
// addresses and the lie applied; frames of other requests come back as
// they are.
func (p *metaProxy) rewrite(bp *brokerProxy, req request, frame []byte) ([]byte, error) {
	switch req.key {
	case 3, 10, 60: // Metadata, FindCoordinator, DescribeCluster
	default:
		return frame, nil
	}
	kreq := kmsg.RequestForKey(req.key)
	kreq.SetVersion(req.version)
	head := 4
	if kreq.IsFlexible() { // response header v1: tagged fields after the correlation id
		n, err := skipTags(frame[4:])
		if err != nil {
			return nil, err
		}
		head += n
	}
	resp := kmsg.ResponseForKey(req.key)
	resp.SetVersion(req.version)
	if err := resp.ReadFrom(frame[head:]); err != nil {
		return nil, err
	}
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = p.proxied(r.Brokers[i].Host, r.Brokers[i].Port)
		}
		if lie := bp.lie.Load(); lie != nil {
			for i := range r.Topics {
				if r.Topics[i].Topic == nil || *r.Topics[i].Topic != lie.topic {
					continue
				}
				bp.lied.Add(1)
				switch lie.code {
				case lieLeaderNotAvailable:
					for j := range r.Topics[i].Partitions {
						r.Topics[i].Partitions[j].ErrorCode, r.Topics[i].Partitions[j].Leader = lie.code, -1
					}
				default:
					r.Topics[i].ErrorCode, r.Topics[i].Partitions = lie.code, nil
				}
			}
		}
	case *kmsg.FindCoordinatorResponse:
		r.Host, r.Port = p.proxied(r.Host, r.Port)
		for i := range r.Coordinators {
			r.Coordinators[i].Host, r.Coordinators[i].Port = p.proxied(r.Coordinators[i].Host, r.Coordinators[i].Port)
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			r.Brokers[i].Host, r.Brokers[i].Port = p.proxied(r.Brokers[i].Host, r.Brokers[i].Port)
		}
	}
	out := append([]byte{}, frame[:head]...)
	if kreq.IsFlexible() {
		out = append(out[:4], 0) // no tagged fields
	}
	return resp.AppendTo(out), nil
}

// proxied is a broker's address as the proxy's.
func (p *metaProxy) proxied(host string, port int32) (string, int32) {
	a, ok := p.byReal[net.JoinHostPort(host, strconv.Itoa(int(port)))]
	if !ok {
		return host, port
	}
	h, ps, _ := net.SplitHostPort(a)
	n, _ := strconv.Atoi(ps)
	return h, int32(n)
}

// skipTags returns the length of a tagged-field section at the start of b.
func skipTags(b []byte) (int, error) {
	count, n := bin.Uvarint(b)
	if n <= 0 {
		return 0, errors.New("bad tagged field count")
	}
	off := n
	for range count {
		_, n := bin.Uvarint(b[off:])
		if n <= 0 {
			return 0, errors.New("bad tag")
		}
		off += n
		size, n := bin.Uvarint(b[off:])
		if n <= 0 {
			return 0, errors.New("bad tag size")
		}
		off += n + int(size)
	}
	return off, nil
}

func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := bin.BigEndian.Uint32(size[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	frame := make([]byte, n)
	_, err := io.ReadFull(r, frame)
	return frame, err
}

func writeFrame(w io.Writer, frame []byte) error {
	buf := make([]byte, 4+len(frame))
	bin.BigEndian.PutUint32(buf, uint32(len(frame)))
	copy(buf[4:], frame)
	_, err := w.Write(buf)
	return err
}
