package gate

import (
	"context"
	"errors"
	"slices"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka"
)

// The look's first requests: the metadata from the first bootstrap server
// that answers, and the pings (an ApiVersions round trip) of every broker
// at its advertised address.

// findCoordinatorVia asks b for group's coordinator; nil when the answer
// names none (COORDINATOR_NOT_AVAILABLE while the cluster creates
// __consumer_offsets, an ACL): the coordinator step then asks, and says
// why.
func findCoordinatorVia(b *sarama.Broker, group string) *FoundCoordinator {
	resp, err := b.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 2, CoordinatorKey: group, CoordinatorType: sarama.CoordinatorGroup})
	if err != nil || resp.Err != sarama.ErrNoError || resp.Coordinator == nil {
		return nil
	}
	return &FoundCoordinator{ID: resp.Coordinator.ID(), Addr: resp.Coordinator.Addr()}
}

// showsAll reports whether md shows every one of topics without an error.
func showsAll(md *sarama.MetadataResponse, topics []string) bool {
	ok := map[string]bool{}
	for _, t := range md.Topics {
		if errors.Is(t.Err, sarama.ErrNoError) {
			ok[t.Name] = true
		}
	}
	for _, t := range topics {
		if !ok[t] {
			return false
		}
	}
	return true
}

// bootReply is the outcome of a probe's metadata request to one
// bootstrap server: its answer, or why there is none.
type bootReply struct {
	md  *sarama.MetadataResponse
	err error
}

// pingUnlessAnswered pings addr, unless reached (the outcome of this
// probe's metadata request to addr as a bootstrap server, nil when addr is
// none) says it answered: then the answer is returned. A bootstrap server
// that failed is pinged anyway, so that the broker's status carries the
// ping's own error.
func (g *BrokerGate) pingUnlessAnswered(ctx context.Context, addr string, reached <-chan bootReply) bootReply {
	if reached != nil {
		select {
		case r := <-reached:
			if r.err == nil {
				return r
			}
		case <-ctx.Done():
			return bootReply{err: ctx.Err()}
		}
	}
	return bootReply{err: g.ping(ctx, addr)}
}

// bootstrapAnswer is the outcome of one probe's metadata requests to the
// bootstrap servers.
type bootstrapAnswer struct {
	// md is the first answer, from addr over conn, which is left open for
	// the probe's next requests (the caller closes it); nil when none
	// answered.
	md   *sarama.MetadataResponse
	addr string
	conn *kafka.Conn
	// reached has, per bootstrap address, the outcome of its request;
	// each channel gets one value.
	reached map[string]chan bootReply
	// errs and permanent say why none answered: per address, and whether
	// every one of them refused us for good.
	errs      map[string]string
	permanent bool
}

// bootstrapMetadata asks all bootstrap servers in parallel and keeps the
// first answer; when none answers it says why, per address, and whether
// every one of them refused us for good. The other servers' answers are
// still read, in the background, into reached.
func (g *BrokerGate) bootstrapMetadata(ctx context.Context) bootstrapAnswer {
	type result struct {
		addr string
		md   *sarama.MetadataResponse
		conn *kafka.Conn
		err  error
	}
	addrs := slices.Compact(slices.Sorted(slices.Values(g.Bootstrap)))
	results := make(chan result, len(addrs))
	ans := bootstrapAnswer{reached: map[string]chan bootReply{}, errs: map[string]string{}, permanent: true}
	for _, addr := range addrs {
		ans.reached[addr] = make(chan bootReply, 1)
		go func(addr string) {
			md, conn, err := kafka.MetadataOpen(ctx, g.Config, addr, g.Topics)
			results <- result{addr, md, conn, err}
		}(addr)
	}
	for n := range addrs {
		var r result
		select {
		case r = <-results:
		case <-ctx.Done():
			// A dial's handshake does not end with ctx (sarama holds the
			// connection's lock through it): the gate ends now, and the
			// answers still on their way are closed when they come.
			left := len(addrs) - n
			go func() {
				for range left {
					if r := <-results; r.conn != nil {
						r.conn.Close()
					}
				}
			}()
			for _, addr := range addrs {
				if _, answered := ans.errs[addr]; !answered {
					ans.errs[addr] = kafka.ExplainWith(ctx.Err(), g.Config)
				}
			}
			ans.permanent = false
			return ans
		}
		ans.reached[r.addr] <- bootReply{r.md, r.err}
		if r.err == nil {
			ans.md, ans.addr, ans.conn, ans.errs, ans.permanent = r.md, r.addr, r.conn, nil, false
			// The rest answer in the background: their outcomes are the
			// pings of their brokers, and their connections are not needed.
			go func(left int) {
				for range left {
					r := <-results
					if r.conn != nil {
						r.conn.Close()
					}
					ans.reached[r.addr] <- bootReply{r.md, r.err}
				}
			}(len(addrs) - n - 1)
			return ans
		}
		ans.errs[r.addr] = kafka.ExplainWith(r.err, g.Config)
		ans.permanent = ans.permanent && kafka.IsPermanentConnError(r.err)
	}
	return ans
}

// ping opens a connection to addr (TLS and SASL included) and sends an
// ApiVersions request.
func (g *BrokerGate) ping(ctx context.Context, addr string) error {
	// bounded: the handshake in Open holds the connection's lock, so the
	// close at ctx's end waits for it (up to request.timeout.ms against a
	// broker that accepts and never answers); the look must end with ctx.
	_, err := bounded(ctx, func() (struct{}, error) { return struct{}{}, g.pingOnce(ctx, addr) })
	return err
}

func (g *BrokerGate) pingOnce(ctx context.Context, addr string) error {
	b := sarama.NewBroker(addr)
	if err := b.Open(g.Config); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return err
	}
	defer b.Close()
	stop := context.AfterFunc(ctx, func() { b.Close() })
	defer stop()
	resp, err := b.ApiVersions(&sarama.ApiVersionsRequest{Version: 3, ClientSoftwareName: "connect-init", ClientSoftwareVersion: "1"})
	if err != nil {
		return err
	}
	if resp.ErrorCode != 0 {
		return sarama.KError(resp.ErrorCode)
	}
	return nil
}
