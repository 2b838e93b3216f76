package gate

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/kafka"
)

// The steps of one look of the brokers step (BrokerGate.Probe), each a
// function of one screen: the side reads for later steps, the pings, the
// cluster's registrations and mode, and the judgement of what was seen.

// sideFound is what a look read for the steps after it, beside its own
// requests: the internal topics' settings (the topics step's first look)
// and the group's coordinator (the coordinator and group steps); nil for
// what it did not read.
type sideFound struct {
	settings    *TopicSettings
	coordinator *FoundCoordinator
}

// startSideReads starts them, one after the other over the connection that
// answered the metadata request (sarama's connection serves one request at
// a time: Broker.sendAndReceive holds the broker's lock over the round
// trip, so two on it would queue anyway). Only a look that can be ready
// reads them: the metadata lists the live brokers only, so one that lists
// fewer than expected cannot, and its reads would be requests more at
// every look while a broker is missing.
func (g *BrokerGate) startSideReads(ctx context.Context, boot bootstrapAnswer) *future.Future[sideFound] {
	md, b := boot.md, boot.conn.Broker
	complete := len(md.Brokers) >= g.Expected
	readSettings := g.ReadTopicSettings && len(g.Topics) > 0 && complete && showsAll(md, g.Topics)
	findCoordinator := g.FindCoordinator != "" && complete
	if !readSettings && !findCoordinator {
		return future.Done(sideFound{}, nil)
	}
	return future.Go(ctx, func(ctx context.Context) (sideFound, error) {
		var found sideFound
		if readSettings {
			found.settings, _ = bounded(ctx, func() (*TopicSettings, error) { return readTopicSettingsVia(b, g.Topics), nil })
		}
		if findCoordinator {
			found.coordinator, _ = bounded(ctx, func() (*FoundCoordinator, error) { return findCoordinatorVia(b, g.FindCoordinator), nil })
		}
		return found, nil
	})
}

// pingSet is one ping per advertised address, whose reply every broker
// advertising that address reads: a copied advertised.listeners makes two
// brokers advertise one address, and a ping per broker had the second wait
// on a bootstrap reply the first had taken, until the deadline (issue 48).
type pingSet struct {
	pending map[string]chan bootReply
	replies map[string]bootReply
}

// pingAll pings every broker of the metadata at once (one after the other
// they were rounds of connections on every start, issue 39).
func (g *BrokerGate) pingAll(ctx context.Context, boot bootstrapAnswer) *pingSet {
	p := &pingSet{pending: map[string]chan bootReply{}, replies: map[string]bootReply{}}
	for _, b := range boot.md.Brokers {
		addr := b.Addr()
		if _, ok := p.pending[addr]; ok {
			continue
		}
		ch := make(chan bootReply, 1)
		p.pending[addr] = ch
		go func() { ch <- g.pingUnlessAnswered(ctx, addr, boot.reached[addr]) }()
	}
	return p
}

// reply waits for the ping of addr, once; later calls get the same reply.
func (p *pingSet) reply(addr string) bootReply {
	r, ok := p.replies[addr]
	if !ok {
		r = <-p.pending[addr]
		p.replies[addr] = r
	}
	return r
}

// clusterView is what a look asked of the cluster over the connection
// that answered the metadata request: the registrations (DescribeCluster),
// which tell fenced brokers from live ones and name those absent, and the
// cluster's mode (KRaft or ZooKeeper), which words them and decides the
// quorum's look.
type clusterView struct {
	regs                 []kafka.Registration
	fencedKnown          bool
	regErr               error
	mode                 kafka.Mode
	modeErr              error
	regsAsked, modeAsked bool
}

// askCluster asks, beside the pings, the registrations (except with
// ReadyOnMetadata) and the mode (for doctor: AskQuorum, which reports
// it); each is asked otherwise only when the look is not ready. On a
// healthy cluster each was a round trip of every start (issue 39).
func (g *BrokerGate) askCluster(boot bootstrapAnswer) clusterView {
	cv := clusterView{regsAsked: !g.ReadyOnMetadata || g.AskQuorum, modeAsked: g.AskQuorum}
	var wg sync.WaitGroup
	if cv.regsAsked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cv.regs, cv.fencedKnown, cv.regErr = kafka.DescribeClusterVia(boot.conn.Broker)
		}()
	}
	if cv.modeAsked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cv.mode, cv.modeErr = kafka.ClusterModeVia(boot.conn.Broker, boot.addr)
		}()
	}
	wg.Wait()
	return cv
}

// askRegistrations asks the registrations of a look that is not ready
// without them (ReadyOnMetadata).
func (g *BrokerGate) askRegistrations(ctx context.Context, boot bootstrapAnswer, cv *clusterView) {
	type registrations struct {
		regs        []kafka.Registration
		fencedKnown bool
	}
	r, err := bounded(ctx, func() (registrations, error) {
		regs, fencedKnown, err := kafka.DescribeClusterVia(boot.conn.Broker)
		return registrations{regs, fencedKnown}, err
	})
	cv.regs, cv.fencedKnown, cv.regErr, cv.regsAsked = r.regs, r.fencedKnown, err, true
}

// judge fills rep from what the look saw: the live (not fenced) brokers
// of the metadata, each up when its ping answered, the addresses several
// brokers advertise, and whether the look is ready. It returns the live
// brokers' statuses, sorted by id, and the views of those that answered
// with metadata (for the hand-off). It waits for the live brokers' pings
// (a fenced broker's is not waited for), then judges them (judgeLook).
func (g *BrokerGate) judge(rep *BrokerReport, md *sarama.MetadataResponse, cv clusterView, pings *pingSet) ([]BrokerStatus, map[int32]*sarama.MetadataResponse) {
	live := liveStatuses(md, cv)
	replies := map[string]bootReply{}
	for _, st := range live {
		replies[st.Addr] = pings.reply(st.Addr)
	}
	v := judgeLook(live, replies, g.Expected, rep.ControllerID, func(err error) string { return kafka.ExplainWith(err, g.Config) })
	rep.FencedKnown, rep.SharedAddrs, rep.Brokers, rep.Ready = cv.fencedKnown, v.shared, v.statuses, v.ready
	return v.statuses, v.views
}

// liveStatuses are the brokers of the metadata that are not fenced, in
// its order: an old broker without DescribeCluster (a registrations
// error) leaves the metadata all we know.
func liveStatuses(md *sarama.MetadataResponse, cv clusterView) []BrokerStatus {
	fenced := map[int32]bool{}
	if cv.regErr == nil {
		for _, r := range cv.regs {
			fenced[r.ID] = fenced[r.ID] || r.Fenced
		}
	}
	var out []BrokerStatus
	for _, b := range md.Brokers {
		if !fenced[b.ID()] {
			out = append(out, BrokerStatus{ID: b.ID(), Addr: b.Addr()})
		}
	}
	return out
}

// lookVerdict is what judgeLook makes of a look.
type lookVerdict struct {
	statuses []BrokerStatus // sorted by id
	views    map[int32]*sarama.MetadataResponse
	shared   map[string][]int32
	ready    bool
}

// judgeLook is the brokers step's judgement, pure: each live broker is up
// when its ping's reply (by address) answered and no other broker
// advertises its address (the answer there is one broker's: the others
// cannot be reached by any client, issue 48); the look is ready with at
// least expected brokers, every one up, and a controller known. explain
// words a failed ping; a broker whose address has no reply is not up.
func judgeLook(live []BrokerStatus, replies map[string]bootReply, expected int, controllerID int32, explain func(error) string) lookVerdict {
	v := lookVerdict{statuses: append([]BrokerStatus(nil), live...), shared: sharedAddrs(live)}
	up := 0
	for i := range v.statuses {
		st := &v.statuses[i]
		r, answered := replies[st.Addr]
		switch ids := v.shared[st.Addr]; {
		case len(ids) > 1:
			st.Err = fmt.Sprintf("brokers %s all advertise %s, so clients reach only one of them", joinIDs(ids), st.Addr)
		case !answered:
			st.Err = "its ping has no reply"
		case r.err != nil:
			st.Err = explain(r.err)
		default:
			st.Up = true
			up++
			if r.md != nil {
				if v.views == nil {
					v.views = map[int32]*sarama.MetadataResponse{}
				}
				v.views[st.ID] = r.md
			}
		}
	}
	sort.Slice(v.statuses, func(i, j int) bool { return v.statuses[i].ID < v.statuses[j].ID })
	v.ready = len(v.statuses) >= expected && up == len(v.statuses) && controllerID >= 0
	return v
}
