package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/step"
)

// BrokerStatus is what the broker gate learned about one registered broker.
type BrokerStatus struct {
	ID   int32  `json:"id"`
	Addr string `json:"advertised_address"`
	Up   bool   `json:"reachable"`
	Err  string `json:"error,omitempty"`
}

// Broker states of an AbsentBroker.
const (
	// StateFenced is a broker the controller still has registered but
	// fenced: stopped, crashed or cut off (KRaft keeps it until
	// kafka-cluster unregister). Only DescribeCluster v2 (Kafka 4.0+) says so.
	StateFenced = "registered but fenced"
	// StateNotInMetadata is a registered broker the metadata leaves out.
	StateNotInMetadata = "registered but absent from the metadata"
	// StateGone is a broker seen registered earlier in this run and no
	// longer registered (ZooKeeper dropped it, or it was unregistered).
	StateGone = "no longer registered"
	// StateNotLive is a broker seen earlier, or named as a replica, that
	// the registrations leave out where the cluster cannot tell fenced
	// from unregistered (before Kafka 4.0, DescribeCluster omits fenced
	// brokers).
	StateNotLive = "not live (fenced or unregistered)"
	// StateZooKeeperGone is StateGone and StateNotLive in ZooKeeper mode,
	// which has no fencing: the broker's registration (an ephemeral znode)
	// ends with its ZooKeeper session, at a controlled shutdown at once, at
	// a crash when the session times out.
	StateZooKeeperGone = "no longer registered in ZooKeeper (shut down, or its session expired)"
	// StateReplicaOnly is a broker the registrations leave out that the
	// internal topics' metadata still names as a replica.
	StateReplicaOnly = "not live, still a replica of the internal topics"
	// StateBootstrapOnly is a bootstrap address no live broker advertises,
	// named when fewer brokers are live than expected.
	StateBootstrapOnly = "bootstrap address that no live broker advertises"
)

// AbsentBroker is a broker that is not live (no gate waits for its
// metadata), named by id (-1 when only an address is known) and last
// known address so that the messages say which broker to bring back.
type AbsentBroker struct {
	ID    int32  `json:"id"`
	Addr  string `json:"last_known_address"`
	State string `json:"state"`
}

// String is "broker 3 (registered but fenced, last at kafka-3:9092)".
func (a AbsentBroker) String() string {
	if a.ID < 0 {
		return fmt.Sprintf("%s (%s)", a.Addr, a.State)
	}
	if a.Addr == "" || a.Addr == "unknown" {
		return fmt.Sprintf("broker %d (%s; address unknown)", a.ID, a.State)
	}
	return fmt.Sprintf("broker %d (%s, last at %s)", a.ID, a.State, a.Addr)
}

// BrokerReport is the outcome of one look at the cluster.
type BrokerReport struct {
	Expected int `json:"expected"`
	// Brokers are the live brokers: in the metadata and not fenced.
	Brokers []BrokerStatus `json:"brokers"`
	// Absent are the brokers known to exist or to have existed that are
	// not live: fenced, unregistered, or only a bootstrap address.
	Absent []AbsentBroker `json:"absent,omitempty"`
	// FencedKnown is true when the cluster said which brokers are fenced
	// (DescribeCluster v2, Kafka 4.0+).
	FencedKnown bool `json:"fenced_known"`
	// Mode is how the cluster keeps its metadata (kraft, zookeeper, or
	// empty when the broker is too old to say): it picks the words for a
	// broker that is not live.
	Mode kafka.Mode `json:"mode,omitempty"`
	// SharedAddrs are the advertised addresses more than one live broker
	// advertises (a copied advertised.listeners), each with its brokers'
	// ids in order; nil when every broker has its own.
	SharedAddrs map[string][]int32 `json:"shared_addresses,omitempty"`
	// Quorum is the KRaft controller quorum, when asked (quorum.go).
	Quorum       *QuorumReport `json:"quorum,omitempty"`
	ControllerID int32         `json:"controller_id"`
	// BootstrapErrs holds, per bootstrap address, why it did not answer
	// (only filled when none answered).
	BootstrapErrs map[string]string `json:"bootstrap_errors,omitempty"`
	// Permanent is set when every bootstrap server refused us for our
	// settings (see IsPermanentConnError): waiting will not help.
	Permanent bool          `json:"permanent_error,omitempty"`
	Ready     bool          `json:"ready"`
	Attempts  int           `json:"attempts"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	// Metadata is the last metadata response, for the next gates.
	Metadata *sarama.MetadataResponse `json:"-"`
	// Views are, by broker id, the metadata answers of the live brokers
	// that answered as bootstrap servers in this look: each broker's own
	// view of the internal topics, which the topics step's first look
	// takes instead of asking every broker again (issue 39).
	Views map[int32]*sarama.MetadataResponse `json:"-"`
	// Settings are Topics' settings, read in this look
	// (ReadTopicSettings); nil when not read.
	Settings *TopicSettings `json:"-"`
	// Coordinator is the group's coordinator, found in this look
	// (FindCoordinator); nil when not asked or not found.
	Coordinator *FoundCoordinator `json:"-"`
}

// FoundCoordinator is a worker group's coordinator as FindCoordinator
// named it.
type FoundCoordinator struct {
	ID   int32
	Addr string
}

// UpCount counts reachable brokers.
func (r *BrokerReport) UpCount() int {
	n := 0
	for _, b := range r.Brokers {
		if b.Up {
			n++
		}
	}
	return n
}

// Summary is the progress line: "2/3 brokers up; waiting for broker 3 at
// kafka-3:9092: connection refused".
func (r *BrokerReport) Summary() string {
	if r.Brokers == nil {
		var parts []string
		for _, a := range sortedKeys(r.BootstrapErrs) {
			parts = append(parts, a+": "+r.BootstrapErrs[a])
		}
		return fmt.Sprintf("0/%d brokers up; no bootstrap server answers: %s", r.Expected, strings.Join(parts, "; "))
	}
	up := r.UpCount()
	s := fmt.Sprintf("%d/%d brokers up", up, max(r.Expected, len(r.Brokers)))
	var waiting []string
	for _, b := range r.Brokers {
		if !b.Up {
			waiting = append(waiting, fmt.Sprintf("broker %d at %s: %s", b.ID, b.Addr, b.Err))
		}
	}
	if len(waiting) > 0 {
		s += "; waiting for " + strings.Join(waiting, "; ")
	}
	if len(r.Brokers) < r.Expected {
		s += fmt.Sprintf("; %d of %d expected brokers live", len(r.Brokers), r.Expected)
	}
	if missing := r.MissingText(); missing != "" {
		s += "; missing: " + missing
	}
	if r.ControllerID < 0 {
		s += "; no controller known yet"
	}
	if q := r.Quorum; q != nil && q.Lost {
		s += "; " + q.Summary()
	}
	return s
}

// MissingText names the brokers that are not live, and, when fewer are
// known than expected, how many more are expected without a known id; ""
// when nothing is missing.
func (r *BrokerReport) MissingText() string {
	var parts []string
	for _, a := range r.Absent {
		parts = append(parts, a.String())
	}
	if n := r.Expected - len(r.Brokers) - len(r.Absent); n > 0 && len(r.Brokers) > 0 {
		parts = append(parts, fmt.Sprintf("%d more broker(s) of unknown id", n))
	}
	return strings.Join(parts, "; ")
}

// BrokerGate waits until the expected number of brokers are registered,
// every registered broker answers an ApiVersions request on its advertised
// listener from this host, and a controller is known.
type BrokerGate struct {
	Config    *sarama.Config
	Bootstrap []string
	Expected  int
	// Topics are asked for in the metadata request (the internal topics), so
	// the response serves the next gate too and no topic list is fetched.
	Topics []string
	Log    *slog.Logger
	Clock  clock.Clock
	// Jitter returns a number in [0,1); nil uses math/rand.
	Jitter func() float64
	// ProgressEvery is the progress log interval (default 5s).
	ProgressEvery time.Duration
	// MaxBackoff caps the wait between attempts (default 400ms), so that
	// readiness is seen within about half a second.
	MaxBackoff time.Duration

	// AskQuorum asks the KRaft controller quorum at every probe (doctor);
	// otherwise it is asked only while the cluster is not ready.
	AskQuorum bool
	// ReadyOnMetadata lets a look whose metadata lists enough brokers, all
	// up, be ready without asking the registrations (DescribeCluster): the
	// metadata lists live brokers only, and the start-up steps read
	// nothing else from a ready look. On a healthy cluster the
	// registrations were a round trip of every start (issue 39). Without
	// it (repair names the absent brokers of a ready look, doctor reports
	// them) they are asked at every look.
	ReadyOnMetadata bool
	// ReadTopicSettings reads the settings of Topics over the connection
	// that answered the metadata, beside the pings, when that answer shows
	// every one of them (BrokerReport.Settings): the topics step's first
	// look, which asked them in a round trip of its own on every start
	// (issue 39).
	ReadTopicSettings bool
	// FindCoordinator, a worker group.id, asks for the group's coordinator
	// over the same connection, beside the pings, when the answer lists
	// every expected broker (BrokerReport.Coordinator): the coordinator
	// step, which asked over a connection of its own once the clients'
	// handshakes were done, a round trip in a row of every start (issue
	// 39). Only then: on a new cluster FindCoordinator makes the brokers
	// create __consumer_offsets, which must wait until every expected
	// broker is registered, or its partitions would crowd on those that
	// are.
	FindCoordinator string
	// QuorumWait bounds one DescribeQuorum (default DefaultQuorumWait).
	QuorumWait   time.Duration
	lastQuorum   *QuorumReport
	lastQuorumAt time.Time

	// seen is every broker registration seen by this gate, id -> last
	// address: the highest known set of ids, so a broker that leaves the
	// registrations is still named.
	seen map[int32]string
	// mode is the cluster's metadata mode as last seen, for the words of
	// absent brokers.
	mode kafka.Mode
}

// Wait polls until the cluster is ready or ctx ends. On ctx's end it
// returns a *GateError with the last report's summary.
func (g *BrokerGate) Wait(ctx context.Context) (*BrokerReport, error) {
	clock := clock.Or(g.Clock)
	jitter := g.Jitter
	if jitter == nil {
		jitter = rand.Float64
	}
	every := g.ProgressEvery
	if every == 0 {
		every = 5 * time.Second
	}
	maxBackoff := g.MaxBackoff
	if maxBackoff == 0 {
		maxBackoff = 400 * time.Millisecond
	}
	start := clock.Now()
	lastLog := start
	pause := pace{first: 50 * time.Millisecond, max: maxBackoff, jitter: jitter}
	var refused refusals
	// last is the last look that ran to its end. A look the deadline cut
	// short says only that time ran out ("no answer in time" from brokers
	// that answered every look before): the error reports last instead,
	// as lookAgain does for the other steps. Reporting the cut look named
	// live brokers unreachable and gave the wrong fix (internal/zkmode
	// TestKilledBroker, CI rehearsal of 2026-12-04).
	var last *BrokerReport
	for attempt := 1; ; attempt++ {
		rep := g.Probe(ctx)
		rep.Attempts = attempt
		rep.Elapsed = clock.Now().Sub(start)
		if rep.Ready {
			g.Log.Info("all brokers up", "brokers", len(rep.Brokers), "expected", g.Expected,
				"controller", rep.ControllerID, "waited", rep.Elapsed.Round(time.Millisecond).String())
			return rep, nil
		}
		if ctx.Err() != nil {
			if last != nil {
				last.Elapsed = rep.Elapsed
				rep = last
			}
			return rep, g.notReady(rep)
		}
		if refused.observe(rep.Permanent) {
			return rep, &GateError{Gate: step.Brokers, Err: fmt.Errorf("the brokers refuse this client: %s", rep.Summary()),
				Fix: "fix the security settings named above; retrying will not help"}
		}
		if attempt == 1 || clock.Now().Sub(lastLog) >= every {
			g.Log.Info("waiting for brokers", "gate", step.Brokers, "status", rep.Summary())
			lastLog = clock.Now()
		}
		sleep := pause.wait()
		last = rep
		select {
		case <-ctx.Done():
			rep.Elapsed = clock.Now().Sub(start)
			return rep, g.notReady(rep)
		case <-clock.After(sleep):
		}
	}
}

// notReady is the gate's error at its deadline, from the last whole look.
func (g *BrokerGate) notReady(rep *BrokerReport) error {
	return &GateError{Gate: step.Brokers, Err: fmt.Errorf("not ready after %s: %s", rep.Elapsed.Round(time.Second), rep.Summary()),
		Fix: g.fix(rep)}
}

// maxRefusals is how many looks in a row in which every bootstrap server
// refused us for our settings make the broker gate give up: a wrong password
// or truststore does not fix itself, so say so now, not at the timeout; one
// or two may be a broker still loading its credentials.
const maxRefusals = 3

// refusals counts consecutive permanent refusals (BrokerReport.Permanent).
type refusals int

// observe records one look and reports whether the gate gives up.
func (r *refusals) observe(permanent bool) bool {
	if permanent {
		*r++
	} else {
		*r = 0
	}
	return *r >= maxRefusals
}

func (g *BrokerGate) fix(rep *BrokerReport) string {
	if q := rep.Quorum; q != nil && q.Lost {
		return quorumFix
	}
	if rep.Brokers == nil {
		return "check CONNECT_BOOTSTRAP_SERVERS and the security settings, and that the brokers run"
	}
	if fix := sharedAddrsFix(rep.SharedAddrs); fix != "" {
		return fix
	}
	for _, b := range rep.Brokers {
		if !b.Up {
			return "every broker must be reachable from this container at the address it advertises: check advertised.listeners of the brokers named above, or start them"
		}
	}
	if len(rep.Brokers) < rep.Expected {
		return MissingFix(rep)
	}
	return ""
}

// MissingFix is what to do about too few live brokers: restart the
// missing ones by id, or unregister a fenced one that is gone for good and
// lower CONNECT_INIT_EXPECTED_BROKERS.
func MissingFix(rep *BrokerReport) string {
	var fenced, other []string
	for _, a := range rep.Absent {
		switch {
		case a.State == StateFenced:
			fenced = append(fenced, strconv.Itoa(int(a.ID)))
		case a.ID >= 0:
			other = append(other, strconv.Itoa(int(a.ID)))
		}
	}
	n := len(rep.Brokers)
	lower := fmt.Sprintf("or set CONNECT_INIT_EXPECTED_BROKERS=%d if the cluster is that small now", n)
	switch {
	case len(fenced) > 0:
		unreg := make([]string, len(fenced))
		for i, id := range fenced {
			unreg[i] = "kafka-cluster unregister --bootstrap-server ... --id " + id
		}
		return fmt.Sprintf("restart broker %s; if it is gone for good, unregister it (%s), drop it from CONNECT_BOOTSTRAP_SERVERS and set CONNECT_INIT_EXPECTED_BROKERS=%d",
			strings.Join(fenced, ", "), strings.Join(unreg, "; "), n)
	case len(other) > 0:
		return fmt.Sprintf("start broker %s again, %s", strings.Join(other, ", "), lower)
	}
	return "start the missing brokers, " + lower
}

// Probe looks at the cluster once: metadata from the first bootstrap server
// that answers, then an ApiVersions round trip to every registered broker
// at its advertised address, in parallel. A broker whose advertised address
// is a bootstrap address that has just answered the metadata request (its
// connection's ApiVersions handshake and the request itself) is not dialed
// again: that answer is its ping (issue 39).
func (g *BrokerGate) Probe(ctx context.Context) *BrokerReport {
	rep := &BrokerReport{Expected: g.Expected, ControllerID: -1}
	boot := g.bootstrapMetadata(ctx)
	if boot.md == nil {
		rep.BootstrapErrs = boot.errs
		rep.Permanent = boot.permanent
		rep.Absent = g.absent(nil, nil, false)
		return rep
	}
	md, mdAddr, conn := boot.md, boot.addr, boot.conn
	rep.Metadata = md
	rep.ControllerID = md.ControllerID
	settingsRead := make(chan *TopicSettings, 1)
	// Only a look that can be ready reads them: the metadata lists the
	// live brokers only, so one that lists fewer than expected cannot, and
	// its read would be one request more at every look while a broker is
	// missing.
	settingsDone := make(chan struct{}) // closed once the settings' request is over
	if g.ReadTopicSettings && len(g.Topics) > 0 && len(md.Brokers) >= g.Expected && showsAll(md, g.Topics) {
		go func() {
			defer close(settingsDone)
			s, _ := bounded(ctx, func() (*TopicSettings, error) { return readTopicSettingsVia(conn.Broker, g.Topics), nil })
			settingsRead <- s
		}()
	} else {
		close(settingsDone)
		settingsRead <- nil
	}
	coordinatorFound := make(chan *FoundCoordinator, 1)
	if g.FindCoordinator != "" && len(md.Brokers) >= g.Expected {
		// Over the second server's connection when it answers before the
		// first one's is free again (the settings go over that one, and
		// sarama's connection serves one request at a time); otherwise
		// over the first one's.
		go func() {
			via := conn.Broker
			select {
			case c, ok := <-boot.spare:
				if ok && c != nil {
					defer c.Close()
					via = c.Broker
				}
			case <-settingsDone:
				closeSpare(boot.spare)
			}
			c, _ := bounded(ctx, func() (*FoundCoordinator, error) { return findCoordinatorVia(via, g.FindCoordinator), nil })
			coordinatorFound <- c
		}()
	} else {
		closeSpare(boot.spare)
		coordinatorFound <- nil
	}
	// The pings of every broker in the metadata go at once (one after the
	// other they were rounds of connections on every start, issue 39);
	// the registrations and the mode, when asked, go over the connection
	// that answered the metadata request.
	// One ping per address, whose reply every broker advertising it
	// reads: a copied advertised.listeners makes two brokers advertise one
	// address, and a ping per broker had the second wait on a bootstrap
	// reply the first had taken, until the deadline (issue 48).
	pctx, cancelPings := context.WithCancel(ctx)
	defer cancelPings()
	pings := map[string]chan bootReply{}
	for _, b := range md.Brokers {
		addr := b.Addr()
		if _, ok := pings[addr]; ok {
			continue
		}
		ch := make(chan bootReply, 1)
		pings[addr] = ch
		go func() { ch <- g.pingUnlessAnswered(pctx, addr, boot.reached[addr]) }()
	}
	var regs []kafka.Registration
	var fencedKnown bool
	var regErr, modeErr error
	var mode kafka.Mode
	// The registrations (DescribeCluster) tell fenced brokers from live
	// ones and name those absent; the cluster's mode (KRaft or ZooKeeper)
	// words them and decides the quorum's look. The registrations are
	// asked beside the pings, except with ReadyOnMetadata, and the mode
	// for doctor (AskQuorum, which reports it); each is asked otherwise
	// only when this look is not ready. On a healthy cluster each was a
	// round trip of every start, on the same connection (issue 39).
	askRegs, askMode := !g.ReadyOnMetadata || g.AskQuorum, g.AskQuorum
	var side sync.WaitGroup
	if askRegs {
		side.Add(1)
		go func() {
			defer side.Done()
			regs, fencedKnown, regErr = kafka.DescribeClusterVia(conn.Broker)
		}()
	}
	if askMode {
		side.Add(1)
		go func() {
			defer side.Done()
			mode, modeErr = kafka.ClusterModeVia(conn.Broker, mdAddr)
		}()
	}
	side.Wait()
	defer conn.Close()
	replies := map[string]bootReply{}
	judge := func() []BrokerStatus {
		if regErr != nil {
			regs = nil // an old broker without DescribeCluster: the metadata is all we know
		}
		rep.FencedKnown = fencedKnown
		fenced := map[int32]bool{}
		for _, r := range regs {
			if r.Fenced {
				fenced[r.ID] = true
			}
		}
		var statuses []BrokerStatus
		for _, b := range md.Brokers {
			if !fenced[b.ID()] { // a fenced broker's ping is not waited for
				statuses = append(statuses, BrokerStatus{ID: b.ID(), Addr: b.Addr()})
			}
		}
		rep.Views = nil
		rep.SharedAddrs = sharedAddrs(statuses)
		for i := range statuses {
			st := &statuses[i]
			r, ok := replies[st.Addr]
			if !ok {
				r = <-pings[st.Addr]
				replies[st.Addr] = r
			}
			if ids := rep.SharedAddrs[st.Addr]; len(ids) > 1 {
				// The answer at that address is one broker's: the others
				// cannot be reached by any client (issue 48).
				st.Err = fmt.Sprintf("brokers %s all advertise %s, so clients reach only one of them", joinIDs(ids), st.Addr)
				continue
			}
			if r.err != nil {
				st.Err = kafka.ExplainWith(r.err, g.Config)
				continue
			}
			st.Up = true
			if r.md != nil {
				if rep.Views == nil {
					rep.Views = map[int32]*sarama.MetadataResponse{}
				}
				rep.Views[st.ID] = r.md
			}
		}
		sort.Slice(statuses, func(i, j int) bool { return statuses[i].ID < statuses[j].ID })
		rep.Brokers = statuses
		rep.Ready = len(statuses) >= g.Expected && rep.UpCount() == len(statuses) && rep.ControllerID >= 0
		return statuses
	}
	statuses := judge()
	if !rep.Ready && !askRegs {
		type registrations struct {
			regs        []kafka.Registration
			fencedKnown bool
		}
		var r registrations
		r, regErr = bounded(ctx, func() (registrations, error) {
			regs, fencedKnown, err := kafka.DescribeClusterVia(conn.Broker)
			return registrations{regs, fencedKnown}, err
		})
		regs, fencedKnown = r.regs, r.fencedKnown
		statuses = judge()
	}
	if !rep.Ready && !askMode {
		mode, modeErr = bounded(ctx, func() (kafka.Mode, error) { return kafka.ClusterModeVia(conn.Broker, mdAddr) })
		askMode = true
	}
	if askMode && modeErr == nil {
		rep.Mode, g.mode = mode, mode
	}
	rep.Absent = replicaAbsent(g.absent(statuses, regs, fencedKnown), statuses, md, g.seen)
	rep.Quorum = g.quorum(ctx, rep, mdAddr, clock.Or(g.Clock).Now())
	rep.Settings = <-settingsRead // before the connection closes
	rep.Coordinator = <-coordinatorFound
	return rep
}

// sharedAddrs is, per address advertised by more than one of statuses,
// the ids of the brokers that advertise it, in order; nil when none is.
func sharedAddrs(statuses []BrokerStatus) map[string][]int32 {
	byAddr := map[string][]int32{}
	for _, st := range statuses {
		byAddr[st.Addr] = append(byAddr[st.Addr], st.ID)
	}
	var out map[string][]int32
	for addr, ids := range byAddr {
		if len(ids) > 1 {
			if out == nil {
				out = map[string][]int32{}
			}
			slices.Sort(ids)
			out[addr] = ids
		}
	}
	return out
}

// sharedAddrsFix names each address more than one broker advertises and
// what to change; "" when there is none.
func sharedAddrsFix(shared map[string][]int32) string {
	var parts []string
	for _, addr := range slices.Sorted(maps.Keys(shared)) {
		parts = append(parts, fmt.Sprintf("brokers %s all advertise %s", joinIDs(shared[addr]), addr))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": every broker must advertise an address of its own; set advertised.listeners " +
		"(KAFKA_ADVERTISED_LISTENERS) of each of them to its own host and port (a copied setting is the usual cause) and restart it"
}

// joinIDs is "1, 2".
func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}

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

// absent records the registrations seen and returns the brokers that are
// not live: fenced or absent from the metadata, seen earlier and gone, and
// (when fewer are known than expected) bootstrap addresses no live broker
// advertises.
func (g *BrokerGate) absent(live []BrokerStatus, regs []kafka.Registration, fencedKnown bool) []AbsentBroker {
	if g.seen == nil {
		g.seen = map[int32]string{}
	}
	isLive := map[int32]bool{}
	addrs := map[string]bool{}
	for _, b := range live {
		isLive[b.ID] = true
		addrs[b.Addr] = true
		g.seen[b.ID] = b.Addr
	}
	registered := map[int32]bool{}
	var out []AbsentBroker
	for _, r := range regs {
		registered[r.ID] = true
		g.seen[r.ID] = r.Addr
		addrs[r.Addr] = true
		switch {
		case isLive[r.ID]:
		case r.Fenced:
			out = append(out, AbsentBroker{ID: r.ID, Addr: r.Addr, State: StateFenced})
		default:
			out = append(out, AbsentBroker{ID: r.ID, Addr: r.Addr, State: StateNotInMetadata})
		}
	}
	if live != nil {
		for id, addr := range g.seen {
			if !isLive[id] && !registered[id] {
				state := StateGone
				switch {
				case g.mode == kafka.ModeZooKeeper:
					state = StateZooKeeperGone
				case !fencedKnown:
					state = StateNotLive
				}
				out = append(out, AbsentBroker{ID: id, Addr: addr, State: state})
				addrs[addr] = true
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if live != nil && len(live)+len(out) < g.Expected {
		for _, a := range g.Bootstrap {
			if !addrs[a] {
				out = append(out, AbsentBroker{ID: -1, Addr: a, State: StateBootstrapOnly})
			}
		}
	}
	return out
}

// replicaAbsent adds to absent the brokers the metadata names as replicas
// of the internal topics but that are neither live nor listed: a broker
// that left the registrations before this run saw it (a controlled
// shutdown leaves ZooKeeper at once, an unregistered KRaft broker) is
// still a replica of the partitions it held, so it can be named by id. Its
// address is the one seen earlier in this run, or unknown.
func replicaAbsent(absent []AbsentBroker, live []BrokerStatus, md *sarama.MetadataResponse, seen map[int32]string) []AbsentBroker {
	known := map[int32]bool{}
	for _, b := range live {
		known[b.ID] = true
	}
	for _, a := range absent {
		known[a.ID] = true
	}
	var ids []int32
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			for _, id := range p.Replicas {
				if !known[id] {
					known[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		addr := seen[id]
		if addr == "" {
			addr = "unknown"
		}
		absent = append(absent, AbsentBroker{ID: id, Addr: addr, State: StateReplicaOnly})
	}
	return absent
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
	// spare gets the connection of the second server that answered, and
	// is closed once every server has answered (empty when none other
	// did); whoever receives a connection closes it. Set with conn.
	spare chan *kafka.Conn
	// errs and permanent say why none answered: per address, and whether
	// every one of them refused us for good.
	errs      map[string]string
	permanent bool
}

// closeSpare closes the spare connection when it comes, for a probe
// that did not take it.
func closeSpare(spare <-chan *kafka.Conn) {
	go func() {
		if c, ok := <-spare; ok && c != nil {
			c.Close()
		}
	}()
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
			// pings of their brokers; the second one's connection is the
			// spare, the others' are not needed.
			ans.spare = make(chan *kafka.Conn, 1)
			go func(left int, spare chan<- *kafka.Conn) {
				defer close(spare)
				offered := false
				for range left {
					r := <-results
					if r.conn != nil {
						if offered {
							r.conn.Close()
						} else {
							spare <- r.conn
							offered = true
						}
					}
					ans.reached[r.addr] <- bootReply{r.md, r.err}
				}
			}(len(addrs)-n-1, ans.spare)
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
