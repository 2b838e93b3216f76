package gate

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/internal/clock"
)

// The group gate's window: one snapshot proves little about a group that is
// rebalancing, so after the first Stable snapshot the gate looks again.
// On a calm group the second look agrees and the window closes at once
// (one DescribeGroups more, ConfirmEvery later). When the looks disagree
// (the group left Stable, or its members or assignment changed) or a
// member reports a config offset behind the assignment, the window grows,
// up to StormWindow, so that the rebalances and the members stuck behind
// them are counted over time instead of guessed from one moment.
const (
	// DefaultConfirmEvery is the pause between two looks in the window:
	// short, since a group caught in a forced-rebalance loop is Stable only
	// for moments, and a calm start pays it once.
	DefaultConfirmEvery = 100 * time.Millisecond
	// DefaultStormWindow bounds the window: long enough to see several
	// rebalances of a looping group (dozens a second in the foreign-member
	// loop, a few seconds apart under Connect's backoff), short enough for
	// doctor to answer while an operator waits.
	DefaultStormWindow = 5 * time.Second
	// StormRebalances is how many rebalances in one window make a storm: a
	// worker joining a cooperative group costs two, so three or more in a
	// window that never calms down is a group that does not settle.
	StormRebalances = 3
	// calmFor is how long a group that churned must then stay Stable and
	// unchanged for the window to call it calm again.
	calmFor = time.Second
	// BehindFor is how long a member behind the assignment is watched at
	// the same offset before the rule on it concludes. A member of ours
	// that joined behind reads our config topic to the assignment before
	// anything else, within worker.sync.timeout.ms (3 s by default), and
	// then either rejoins with its new offset, when what it read makes
	// workers rejoin (a commit, a connector added or removed), or leaves
	// the group, when it could not read in time
	// (DistributedHerder.handleRebalanceCompleted, readConfigToEnd,
	// member.maybeLeaveGroup). So one still behind at the same offset
	// after 3 s and a 2 s margin does not read our config topic when a
	// rejoin record lies between its offset and the assignment
	// (RuleStuckBehind, group.go), and is harmlessly behind when none
	// does. A member watched for less is not judged yet, and the window
	// goes on for it (unjudged). This is the least: a worker with a longer
	// worker.sync.timeout.ms gets that and the margin (BehindForSync).
	BehindFor = 5 * time.Second
	// behindMargin is BehindFor's margin over the sync timeout: the
	// rejoin's own round trips and the look's interval.
	behindMargin = 2 * time.Second
	// DefaultEvidenceWait bounds the window for a member not judged yet
	// when the context has no deadline of its own (run's and doctor's
	// have: CONNECT_INIT_TIMEOUT).
	DefaultEvidenceWait = 5 * time.Minute
	// stuckRebalances is how many rebalances a member must stay behind,
	// reporting the same config offset, to be proven not to read our
	// config topic (RuleStuckBehind).
	stuckRebalances = 2
)

// GroupWindow is what the gate saw of the group across its window.
type GroupWindow struct {
	// Samples is how many DescribeGroups answers the window read; failed
	// reads count for nothing.
	Samples int `json:"samples"`
	// Span is how long the window lasted.
	Span time.Duration `json:"span_ns"`
	// Rebalances counts the rebalances seen between two answers: the group
	// entered PreparingRebalance (or CompletingRebalance straight from
	// Stable), or a Stable group's members or assignment changed. The
	// looks before the first Stable snapshot count too: a group looping
	// fast is rarely caught Stable.
	Rebalances int `json:"rebalances"`
	// Departures counts the looks that showed members gone and none new
	// (a worker stopped, or its session expired) or the rebalance that
	// lets them go completing: not rebalances, not churn (departure).
	Departures int `json:"departures"`
	// Calm is true when the window ended on a Stable group that had stopped
	// changing (at once on a calm group; calmFor after churn).
	Calm bool `json:"calm"`
	// StuckBehind are the members that reported the same config offset,
	// behind the assignment's, across rebalances.
	StuckBehind []StuckMember `json:"stuck_behind"`
	// Behind are the members behind the assignment at the window's end,
	// each with how long it was seen there at the same offset.
	Behind []StuckMember `json:"behind"`
	// Unjudged are the members of Behind that no rule could judge before
	// the window's bound (the context's deadline): neither two rebalances
	// nor BehindFor at the same offset, nor caught up. A join beside them
	// is refused (checks.IDMemberBehindUnjudged): the evidence never came.
	Unjudged []StuckMember `json:"unjudged,omitempty"`
	// BehindFor is how long this window watched a member behind at one
	// offset before a rule on it concluded (BehindForSync).
	BehindFor time.Duration `json:"behind_for_ns"`
}

// BehindForSync is how long a member behind the assignment is watched at
// one offset, for workers whose worker.sync.timeout.ms is sync: that
// timeout and a 2 s margin, never less than BehindFor (Connect's default
// 3 s). The gate knows this worker's setting only, and takes it for the
// group's: a group's workers share their settings, and one whose own is
// longer than this worker's could be judged before it had its time.
func BehindForSync(sync time.Duration) time.Duration {
	return max(BehindFor, sync+behindMargin)
}

// behindFor is the window's BehindFor; BehindFor for a report made
// without one (a test's, or an older document's).
func (w *GroupWindow) behindFor() time.Duration {
	if w == nil || w.BehindFor <= 0 {
		return BehindFor
	}
	return w.BehindFor
}

// Storm reports whether the window saw the group rebalance StormRebalances
// times or more without calming down.
func (w *GroupWindow) Storm() bool {
	return w != nil && w.Rebalances >= StormRebalances && !w.Calm
}

// StuckMember is a member that stayed behind the assignment across
// rebalances, with what it read.
type StuckMember struct {
	MemberID   string `json:"member_id"`
	URL        string `json:"url,omitempty"`
	ClientHost string `json:"client_host"`
	// ConfigOffset is what it reported in every Stable look.
	ConfigOffset int64 `json:"config_offset"`
	// AssignmentOffset is the leader's assignment offset it stayed behind.
	AssignmentOffset int64 `json:"assignment_offset"`
	// Rebalances is how many rebalances it stayed behind across.
	Rebalances int `json:"rebalances"`
	// Departures counts the looks that showed members gone and none new
	// (a worker stopped, or its session expired) or the rebalance that
	// lets them go completing: not rebalances, not churn (departure).
	Departures int `json:"departures"`
	// For is how long the window saw it behind at that offset.
	For time.Duration `json:"for_ns"`
}

// String is the member and what it read, for evidence lines.
func (m StuckMember) String() string {
	return fmt.Sprintf("member %q (%s, client host %s) reported config offset %d while the assignment was at %d, across %d rebalances",
		m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost), m.ConfigOffset, m.AssignmentOffset, m.Rebalances)
}

// unjudgedText is the evidence on a member the window could not judge.
func (m StuckMember) unjudgedText(watched, behindFor time.Duration) string {
	return fmt.Sprintf("member %q (%s, client host %s) reported config offset %d while the assignment was at %d, across %d rebalance(s) and for %s at that offset, in a window of %s that ended at the timeout; a rule concludes after %d rebalances or %s at the same offset, or when the member catches up",
		m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost), m.ConfigOffset, m.AssignmentOffset, m.Rebalances, m.For.Round(100*time.Millisecond),
		watched.Round(100*time.Millisecond), stuckRebalances, behindFor)
}

// behindTrack follows one member that reports a config offset behind the
// assignment: since which rebalance count, and across how many.
type behindTrack struct {
	member     StuckMember
	sinceCount int
	since      time.Time
	// harmless: our config topic, read up to the assignment, holds no
	// record between the member's offset and the assignment's that makes
	// a reader rejoin, so a worker of ours stays at that offset until the
	// next rebalance, and waiting BehindFor could prove nothing.
	harmless bool
}

// judged reports whether a rule on the member can conclude: it stayed
// behind at the same offset across stuckRebalances rebalances, or for
// BehindFor (then the config topic tells foreign from harmlessly behind),
// or the config topic already says nothing between its offset and the
// assignment would make it rejoin. A member that caught up or left has
// no track at all.
func (t *behindTrack) judged(behindFor time.Duration) bool {
	return t.harmless || t.member.Rebalances >= stuckRebalances || t.member.For >= behindFor
}

// rejoinLookup answers whether our config topic holds a record in
// [from, to) that makes a reader rejoin (store.ConfigLog.RejoinRecord),
// and known=false when the topic could not be read up to to.
type rejoinLookup func(from, to int64) (rejoins, known bool)

// rejoinLookup reads our config topic once, the first time the window
// meets a member behind the assignment (never on a calm start), for the
// window's rejoinLookup. The identity rules read the topic again after the
// window, with the end offsets: this read may be older than those.
func (g *GroupGate) rejoinLookup(ctx context.Context) rejoinLookup {
	read := g.configFn
	if read == nil && g.Client != nil && g.identityFn == nil {
		read = func(ctx context.Context) (*store.ConfigLog, error) {
			return store.ReadConfig(ctx, g.Client, g.ConfigTopic)
		}
	}
	if read == nil {
		return func(int64, int64) (bool, bool) { return false, false }
	}
	var cfg *store.ConfigLog
	var once sync.Once
	return func(from, to int64) (bool, bool) {
		once.Do(func() {
			if c, err := read(ctx); err == nil {
				cfg = c
			}
		})
		if cfg == nil || cfg.End < to {
			return false, false
		}
		return cfg.RejoinRecord(from, to) != nil, true
	}
}

// trackKey is who a track follows: the worker's advertised URL, which it
// keeps when it leaves the group and joins again under a new member id
// (a worker that cannot read to the assignment in time leaves the group,
// readConfigToEnd), else the member id.
func trackKey(m proto.Member) string {
	if u := m.URL(); u != "" {
		return "url " + u
	}
	return "member " + m.MemberID
}

// windowWatch is one window's running state, from the gate's first look.
type windowWatch struct {
	w          GroupWindow
	start      time.Time
	prev       *sarama.GroupDescription
	latest     *sarama.GroupDescription // the latest Stable answer
	behind     map[string]*behindTrack
	lastChange time.Time
	churned    bool
	// departing is true from a look that shows members gone (and none
	// new) until the group is Stable again: the rebalance that lets them
	// go (departure).
	departing bool
	// rejoin tells a member behind that nothing would make it rejoin
	// (behindTrack.harmless); nil when unknown.
	rejoin rejoinLookup
}

func newWindowWatch(start time.Time, behindFor time.Duration) *windowWatch {
	return &windowWatch{w: GroupWindow{BehindFor: behindFor}, start: start, lastChange: start, behind: map[string]*behindTrack{}}
}

// watchWindow looks at the group again after the settled answer first,
// until it is calm or the window ends (StormWindow; with untilCalm, a storm
// without a member to blame is watched until ctx's deadline, so run waits
// for calm instead of refusing a rolling start). It returns the latest
// Stable answer to judge and what the window saw.
func (g *GroupGate) watchWindow(ctx context.Context, ww *windowWatch, first *sarama.GroupDescription, describe func(context.Context) (*sarama.GroupDescription, error), clk clock.Clock, log *slog.Logger) (*sarama.GroupDescription, *GroupWindow) {
	switch first.State {
	case GroupStable:
	case GroupPreparingRebalance, GroupCompletingRebalance:
		// Never Stable while the gate waited: what the looks counted is
		// all there is (a fast loop shows as rebalances, not as a snapshot).
		_, w := ww.end(clk.Now())
		return first, w
	default:
		return first, nil
	}
	every, window := g.ConfirmEvery, g.StormWindow
	if every <= 0 {
		every = DefaultConfirmEvery
	}
	if window <= 0 {
		window = DefaultStormWindow
	}
	start := clk.Now()
	bound := evidenceBound(ctx, clk, start)
	// One rebalance before the first Stable snapshot is a member joining;
	// more is churn, and calm must then last calmFor.
	ww.churned, ww.lastChange = ww.w.Rebalances >= 2, start
	lastLog := start
	for {
		select {
		case <-ctx.Done():
			return ww.end(clk.Now())
		case <-clk.After(every):
		}
		d, err := describe(ctx)
		if err == nil {
			ww.observe(g, d, clk.Now())
		}
		now := clk.Now()
		if ww.calm(now) {
			ww.w.Calm = true
			return ww.end(now)
		}
		if ww.done(g, now.Sub(start), window) || !now.Before(bound) {
			return ww.end(now)
		}
		if now.Sub(lastLog) >= 5*time.Second {
			ww.logWatching(g, log, now.Sub(start))
			lastLog = now
		}
	}
}

// done reports whether the window has seen enough after watched: every
// member behind the assignment judged (the verdict must not depend on the
// phase of the group's rebalances at which the look began), and then
// either a Stable, unchanged group (a member behind, not a storm), or the
// window's length, unless run waits out a storm with no member to blame.
func (ww *windowWatch) done(g *GroupGate, watched, window time.Duration) bool {
	if len(ww.unjudged()) > 0 {
		return false
	}
	if !ww.churned {
		return true
	}
	return watched >= window && !(g.UntilCalm && ww.w.Storm() && len(ww.stuck()) == 0)
}

// logWatching says, every 5 s of the window, what it waits for.
func (ww *windowWatch) logWatching(g *GroupGate, log *slog.Logger, watched time.Duration) {
	if u := ww.unjudged(); len(u) > 0 {
		m := u[0]
		log.Info("watching the worker group: a member behind the assignment is not judged yet", "group", g.GroupID,
			"member", m.MemberID, "url", orUnknown(m.URL), "config_offset", m.ConfigOffset, "assignment_offset", m.AssignmentOffset,
			"waiting_for", fmt.Sprintf("it to catch up, or to stay at offset %d across %d rebalances (seen %d) or for %s (seen %s)",
				m.ConfigOffset, stuckRebalances, m.Rebalances, ww.w.BehindFor, m.For.Round(100*time.Millisecond)),
			"unjudged", len(u), "watched", watched.Round(time.Second).String())
		return
	}
	log.Info("watching the worker group: it does not settle", "group", g.GroupID, "rebalances", ww.w.Rebalances,
		"looks", ww.w.Samples, "watched", watched.Round(time.Second).String())
}

// evidenceBound is the latest instant, on clk, the window may look until
// for a member not judged yet: the context's deadline (the gate's
// timeout), translated to clk from the time left at start, or
// DefaultEvidenceWait without one.
func evidenceBound(ctx context.Context, clk clock.Clock, start time.Time) time.Time {
	if dl, ok := ctx.Deadline(); ok {
		return start.Add(time.Until(dl))
	}
	return start.Add(DefaultEvidenceWait)
}

// observe counts one answer: entering a rebalance, or a Stable group
// that changed, is a rebalance; a Stable answer updates who is behind.
func (ww *windowWatch) observe(g *GroupGate, d *sarama.GroupDescription, now time.Time) {
	ww.w.Samples++
	if p := ww.prev; p != nil && !sameDescription(p, d) {
		if ww.departure(p, d) {
			ww.w.Departures++
		} else {
			if rebalanced(p.State, d.State) {
				ww.w.Rebalances++
			}
			ww.churned, ww.lastChange = true, now
		}
	}
	if d.State == GroupStable {
		ww.departing = false
	}
	ww.prev = d
	if d.State == GroupStable {
		ww.latest = d
		ww.track(g, d, now)
	}
}

// track updates the members behind the assignment from a Stable answer: a
// member that reports the same offset behind it as before, with
// rebalances in between, has stayed behind across them.
func (ww *windowWatch) track(g *GroupGate, d *sarama.GroupDescription, now time.Time) {
	rep := NewGroupReport(g.GroupID, g.ConfigTopic, d)
	seen := map[string]bool{}
	for _, m := range rep.Decoded {
		if m.Metadata == nil || rep.AssignmentOffset == nil || m.Metadata.ConfigOffset >= *rep.AssignmentOffset {
			continue
		}
		key := trackKey(m)
		seen[key] = true
		t := ww.behind[key]
		if t == nil || t.member.ConfigOffset != m.Metadata.ConfigOffset {
			t = &behindTrack{sinceCount: ww.w.Rebalances, since: now, member: StuckMember{MemberID: m.MemberID, URL: m.URL(),
				ClientHost: m.ClientHost, ConfigOffset: m.Metadata.ConfigOffset, AssignmentOffset: *rep.AssignmentOffset}}
			if ww.rejoin != nil {
				rejoins, known := ww.rejoin(m.Metadata.ConfigOffset, *rep.AssignmentOffset)
				t.harmless = known && !rejoins
			}
			ww.behind[key] = t
			continue
		}
		t.member.MemberID, t.member.ClientHost = m.MemberID, m.ClientHost
		t.member.Rebalances = ww.w.Rebalances - t.sinceCount
		t.member.AssignmentOffset = *rep.AssignmentOffset
		t.member.For = now.Sub(t.since)
	}
	for id := range ww.behind {
		if !seen[id] {
			delete(ww.behind, id)
		}
	}
}

// departure reports whether the change from p to d only lets members go:
// d lists members, none that p lacks, and fewer than p (or the group is
// still completing the rebalance of such a departure). What a start can
// change, and what it cannot: a worker that stops (the one this start
// replaces, in a restart or a rolling update, or one whose session
// expired) leaves the group, and the members left rejoin, whether this
// worker starts or not; that rebalance is no churn and no storm, and
// waiting it out proves nothing about the members, whose metadata the
// window has seen. A member that joins, or a rebalance of an unchanged
// membership (incident 1's forced rejoins), is counted as before. A look
// that lists no members (a fast loop's PreparingRebalance as seen from
// outside) is not a departure.
func (ww *windowWatch) departure(p, d *sarama.GroupDescription) bool {
	if len(d.Members) == 0 {
		return false
	}
	for id := range d.Members {
		if _, ok := p.Members[id]; !ok {
			return false
		}
	}
	if len(d.Members) < len(p.Members) || ww.departing && d.State != GroupStable {
		ww.departing = d.State != GroupStable
		return true
	}
	if ww.departing && d.State == GroupStable {
		return true // the departure's rebalance completed: the members left have their new assignment
	}
	return false
}

// calm: nobody is behind, the group has not changed since the first
// answer (a calm start) or for calmFor after churn, and it is Stable or
// only rebalancing to let members go after a Stable look (departure):
// every member still listed was seen Stable, so looking until the
// survivors have rejoined would judge nothing new.
func (ww *windowWatch) calm(now time.Time) bool {
	if len(ww.behind) > 0 || ww.prev.State != GroupStable && !(ww.departing && ww.latest != nil) {
		return false
	}
	return !ww.churned || now.Sub(ww.lastChange) >= calmFor
}

// unjudged are the members behind the assignment that no rule can judge
// yet (behindTrack.judged), sorted by id.
func (ww *windowWatch) unjudged() []StuckMember {
	out := []StuckMember{}
	for _, t := range ww.behind {
		if !t.judged(ww.w.BehindFor) {
			out = append(out, t.member)
		}
	}
	sortStuck(out)
	return out
}

// stuck are the members proven behind (RuleStuckBehind), sorted by id.
func (ww *windowWatch) stuck() []StuckMember {
	out := []StuckMember{}
	for _, t := range ww.behind {
		if t.member.Rebalances >= stuckRebalances {
			out = append(out, t.member)
		}
	}
	sortStuck(out)
	return out
}

// rebalanced reports whether going from one answer's state to the next's
// shows a rebalance: the group entered PreparingRebalance, went from
// Stable straight to CompletingRebalance, or stayed Stable but changed.
func rebalanced(from, to string) bool {
	switch {
	case to == GroupPreparingRebalance:
		return from != GroupPreparingRebalance
	case to == GroupCompletingRebalance:
		return from == GroupStable
	}
	return from == GroupStable && to == GroupStable
}

func (ww *windowWatch) end(now time.Time) (*sarama.GroupDescription, *GroupWindow) {
	ww.w.Span = now.Sub(ww.start)
	ww.w.StuckBehind = ww.stuck()
	ww.w.Behind = []StuckMember{}
	for _, t := range ww.behind {
		ww.w.Behind = append(ww.w.Behind, t.member)
	}
	sortStuck(ww.w.Behind)
	if u := ww.unjudged(); len(u) > 0 {
		ww.w.Unjudged = u
	}
	return ww.latest, &ww.w
}

// sameDescription reports whether two answers show the same group: state,
// members, and each member's metadata and assignment bytes.
func sameDescription(a, b *sarama.GroupDescription) bool {
	if a.State != b.State || len(a.Members) != len(b.Members) {
		return false
	}
	for id, ma := range a.Members {
		mb, ok := b.Members[id]
		if !ok || string(ma.MemberMetadata) != string(mb.MemberMetadata) || string(ma.MemberAssignment) != string(mb.MemberAssignment) {
			return false
		}
	}
	return true
}

func sortStuck(ms []StuckMember) {
	sort.Slice(ms, func(i, j int) bool { return ms[i].MemberID < ms[j].MemberID })
}
