package gate

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
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
	// Handoff is what this look read for the steps after it: its
	// metadata answer, the live brokers and their own views of the
	// internal topics (the answers of those that answered as bootstrap
	// servers), the topics' settings (ReadTopicSettings) and the group's
	// coordinator (FindCoordinator). nil when no bootstrap server answered.
	Handoff *Handoff `json:"-"`
}

// FoundCoordinator is a worker group's coordinator as FindCoordinator
// named it.
type FoundCoordinator struct {
	ID   int32
	Addr string
}

// live are the brokers the look saw up.
func (r *BrokerReport) live() []kafka.Registration {
	var out []kafka.Registration
	for _, b := range r.Brokers {
		if b.Up {
			out = append(out, kafka.Registration{ID: b.ID, Addr: b.Addr})
		}
	}
	return out
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
// again: that answer is its ping (issue 39). It reads as its steps
// (brokerlook.go): the bootstrap metadata, the side reads for later steps,
// the pings, the cluster's registrations and mode, the judgement of what
// was seen, and what a look that is not ready asks more.
func (g *BrokerGate) Probe(ctx context.Context) *BrokerReport {
	rep := &BrokerReport{Expected: g.Expected, ControllerID: -1}
	boot := g.bootstrapMetadata(ctx)
	if boot.md == nil {
		rep.BootstrapErrs, rep.Permanent, rep.Absent = boot.errs, boot.permanent, g.absent(nil, nil, false)
		return rep
	}
	rep.ControllerID = boot.md.ControllerID
	side := g.startSideReads(ctx, boot)
	pctx, cancelPings := context.WithCancel(ctx)
	defer cancelPings()
	pings := g.pingAll(pctx, boot)
	cv := g.askCluster(boot)
	defer boot.conn.Close()
	statuses, views := g.judge(rep, boot.md, cv, pings)
	if !rep.Ready && !cv.regsAsked {
		g.askRegistrations(ctx, boot, &cv)
		statuses, views = g.judge(rep, boot.md, cv, pings)
	}
	if !rep.Ready && !cv.modeAsked {
		cv.mode, cv.modeErr = bounded(ctx, func() (kafka.Mode, error) { return kafka.ClusterModeVia(boot.conn.Broker, boot.addr) })
		cv.modeAsked = true
	}
	if cv.modeAsked && cv.modeErr == nil {
		rep.Mode, g.mode = cv.mode, cv.mode
	}
	rep.Absent = replicaAbsent(g.absent(statuses, cv.regs, cv.fencedKnown), statuses, boot.md, g.seen)
	rep.Quorum = g.quorum(ctx, rep, boot.addr, clock.Or(g.Clock).Now())
	found, _ := side.Wait() // before the connection closes
	rep.Handoff = NewHandoff(boot.md, rep.live(), views, found.settings, found.coordinator)
	return rep
}
