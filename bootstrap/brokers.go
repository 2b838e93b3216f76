package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
)

// Clock is the time source of the gates, injected so tests never sleep on
// the wall clock. It is the one clock of connect-init (internal/clock).
type Clock = clock.Clock

// SystemClock is the real clock.
type SystemClock = clock.System

// BrokerStatus is what the broker gate learned about one registered broker.
type BrokerStatus struct {
	ID   int32  `json:"id"`
	Addr string `json:"advertised_address"`
	Up   bool   `json:"reachable"`
	Err  string `json:"error,omitempty"`
}

// BrokerReport is the outcome of one look at the cluster.
type BrokerReport struct {
	Expected     int            `json:"expected"`
	Brokers      []BrokerStatus `json:"brokers"`
	ControllerID int32          `json:"controller_id"`
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
		s += fmt.Sprintf("; %d of %d expected brokers registered", len(r.Brokers), r.Expected)
	}
	if r.ControllerID < 0 {
		s += "; no controller known yet"
	}
	return s
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
	Clock  Clock
	// Jitter returns a number in [0,1); nil uses math/rand.
	Jitter func() float64
	// ProgressEvery is the progress log interval (default 5s).
	ProgressEvery time.Duration
	// MaxBackoff caps the wait between attempts (default 400ms), so that
	// readiness is seen within about half a second.
	MaxBackoff time.Duration
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
	backoff := 50 * time.Millisecond
	var refused refusals
	for attempt := 1; ; attempt++ {
		rep := g.Probe(ctx)
		rep.Attempts = attempt
		rep.Elapsed = clock.Now().Sub(start)
		if rep.Ready {
			g.Log.Info("all brokers up", "brokers", len(rep.Brokers), "expected", g.Expected,
				"controller", rep.ControllerID, "waited", rep.Elapsed.Round(time.Millisecond).String())
			return rep, nil
		}
		if refused.observe(rep.Permanent) {
			return rep, &GateError{Gate: "brokers", Err: fmt.Errorf("the brokers refuse this client: %s", rep.Summary()),
				Fix: "fix the security settings named above; retrying will not help"}
		}
		if attempt == 1 || clock.Now().Sub(lastLog) >= every {
			g.Log.Info("waiting for brokers", "gate", "brokers", "status", rep.Summary())
			lastLog = clock.Now()
		}
		sleep := time.Duration(float64(backoff) * (0.5 + jitter()))
		if sleep > maxBackoff {
			sleep = maxBackoff
		}
		backoff *= 2
		select {
		case <-ctx.Done():
			return rep, &GateError{Gate: "brokers", Err: fmt.Errorf("not ready after %s: %s", rep.Elapsed.Round(time.Second), rep.Summary()),
				Fix: g.fix(rep)}
		case <-clock.After(sleep):
		}
	}
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
	if rep.Brokers == nil {
		return "check CONNECT_BOOTSTRAP_SERVERS and the security settings, and that the brokers run"
	}
	for _, b := range rep.Brokers {
		if !b.Up {
			return "every broker must be reachable from this container at the address it advertises: check advertised.listeners of the brokers named above, or start them"
		}
	}
	if len(rep.Brokers) < rep.Expected {
		return "start the missing brokers, or lower CONNECT_INIT_EXPECTED_BROKERS if the cluster is smaller"
	}
	return ""
}

// Probe looks at the cluster once: metadata from the first bootstrap server
// that answers, then an ApiVersions round trip to every registered broker
// at its advertised address, in parallel.
func (g *BrokerGate) Probe(ctx context.Context) *BrokerReport {
	rep := &BrokerReport{Expected: g.Expected, ControllerID: -1}
	md, errs, permanent := g.bootstrapMetadata(ctx)
	if md == nil {
		rep.BootstrapErrs = errs
		rep.Permanent = permanent
		return rep
	}
	rep.Metadata = md
	rep.ControllerID = md.ControllerID
	statuses := make([]BrokerStatus, len(md.Brokers))
	var wg sync.WaitGroup
	for i, b := range md.Brokers {
		statuses[i] = BrokerStatus{ID: b.ID(), Addr: b.Addr()}
		wg.Add(1)
		go func(st *BrokerStatus) {
			defer wg.Done()
			if err := g.ping(ctx, st.Addr); err != nil {
				st.Err = explainWith(err, g.Config)
				return
			}
			st.Up = true
		}(&statuses[i])
	}
	wg.Wait()
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].ID < statuses[j].ID })
	rep.Brokers = statuses
	rep.Ready = len(statuses) >= g.Expected && rep.UpCount() == len(statuses) && rep.ControllerID >= 0
	return rep
}

// bootstrapMetadata asks all bootstrap servers in parallel and keeps the
// first answer; when none answers it returns why, per address, and whether
// every one of them refused us for good.
func (g *BrokerGate) bootstrapMetadata(ctx context.Context) (*sarama.MetadataResponse, map[string]string, bool) {
	type result struct {
		addr string
		md   *sarama.MetadataResponse
		err  error
	}
	results := make(chan result, len(g.Bootstrap))
	for _, addr := range g.Bootstrap {
		go func(addr string) {
			md, err := Metadata(ctx, g.Config, addr, g.Topics)
			results <- result{addr, md, err}
		}(addr)
	}
	errs := map[string]string{}
	permanent := true
	for range g.Bootstrap {
		r := <-results
		if r.err == nil {
			return r.md, nil, false
		}
		errs[r.addr] = explainWith(r.err, g.Config)
		permanent = permanent && IsPermanentConnError(r.err)
	}
	return nil, errs, permanent
}

// ping opens a connection to addr (TLS and SASL included) and sends an
// ApiVersions request.
func (g *BrokerGate) ping(ctx context.Context, addr string) error {
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

// Metadata sends one metadata request for topics to addr.
func Metadata(ctx context.Context, cfg *sarama.Config, addr string, topics []string) (*sarama.MetadataResponse, error) {
	b := sarama.NewBroker(addr)
	if err := b.Open(cfg); err != nil && !errors.Is(err, sarama.ErrAlreadyConnected) {
		return nil, err
	}
	defer b.Close()
	stop := context.AfterFunc(ctx, func() { b.Close() })
	defer stop()
	req := sarama.NewMetadataRequest(cfg.Version, topics)
	req.AllowAutoTopicCreation = false
	return b.GetMetadata(req)
}
