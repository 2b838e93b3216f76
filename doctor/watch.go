package doctor

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/internal/clock"
)

// Change is what differs between two looks of `doctor --watch`: for the
// operator in the middle of an incident, only what moved.
type Change struct {
	// Appeared and Cleared are findings (by id and subject) new in this
	// look, and gone since the last one.
	Appeared []checks.Result `json:"appeared"`
	Cleared  []checks.Result `json:"cleared"`
	// Joined and Left are member ids of the worker group.
	Joined []string `json:"joined"`
	Left   []string `json:"left"`
	// StateFrom and StateTo are the group's state when it changed.
	StateFrom string `json:"state_from,omitempty"`
	StateTo   string `json:"state_to,omitempty"`
	// Rebalances and Span are what this look's window counted: the
	// group's rate of rebalancing.
	Rebalances int           `json:"rebalances"`
	Span       time.Duration `json:"span_ns"`
}

// Empty reports whether nothing changed worth a line. A window that
// counted rebalances is a change: the group is moving.
func (c *Change) Empty() bool {
	return len(c.Appeared) == 0 && len(c.Cleared) == 0 && len(c.Joined) == 0 && len(c.Left) == 0 &&
		c.StateFrom == c.StateTo && c.Rebalances == 0
}

// Diff is what changed from prev to next (prev nil: everything is new).
func Diff(prev, next *Document) *Change {
	c := &Change{Appeared: []checks.Result{}, Cleared: []checks.Result{}, Joined: []string{}, Left: []string{}}
	before, after := findingKeys(prev), findingKeys(next)
	for _, f := range next.Findings {
		if _, ok := before[findingKey(f)]; !ok {
			c.Appeared = append(c.Appeared, f)
		}
	}
	if prev != nil {
		for _, f := range prev.Findings {
			if _, ok := after[findingKey(f)]; !ok {
				c.Cleared = append(c.Cleared, f)
			}
		}
	}
	was, is := members(prev), members(next)
	for id := range is {
		if !was[id] {
			c.Joined = append(c.Joined, id)
		}
	}
	for id := range was {
		if !is[id] {
			c.Left = append(c.Left, id)
		}
	}
	sort.Strings(c.Joined)
	sort.Strings(c.Left)
	c.StateFrom, c.StateTo = groupState(prev), groupState(next)
	if g := next.Cluster.Group; g != nil && g.Window != nil {
		c.Rebalances, c.Span = g.Window.Rebalances, g.Window.Span
	}
	return c
}

func findingKey(f checks.Result) string { return f.ID + "\x00" + f.Subject }

func findingKeys(d *Document) map[string]checks.Result {
	out := map[string]checks.Result{}
	if d != nil {
		for _, f := range d.Findings {
			out[findingKey(f)] = f
		}
	}
	return out
}

func members(d *Document) map[string]bool {
	out := map[string]bool{}
	if d != nil && d.Cluster.Group != nil {
		for _, m := range d.Cluster.Group.Members {
			out[m.MemberID] = true
		}
	}
	return out
}

func groupState(d *Document) string {
	if d == nil || d.Cluster.Group == nil {
		return ""
	}
	return d.Cluster.Group.State
}

// WriteText prints the change as one line per item, stamped with at.
func (c *Change) WriteText(w io.Writer, at time.Time) error {
	p := &printer{w: w}
	ts := at.UTC().Format("15:04:05")
	if c.StateFrom != c.StateTo {
		p.f("%s group %s -> %s\n", ts, orUnknown(c.StateFrom), orUnknown(c.StateTo))
	}
	if c.Rebalances > 0 {
		p.f("%s group rebalanced %d times in %s\n", ts, c.Rebalances, c.Span.Round(100*time.Millisecond))
	}
	for _, id := range c.Joined {
		p.f("%s member joined %s\n", ts, id)
	}
	for _, id := range c.Left {
		p.f("%s member left %s\n", ts, id)
	}
	for _, f := range c.Appeared {
		p.f("%s + %s [%s] %s\n", ts, strings.ToUpper(string(f.Severity)), f.ID, f.Summary)
	}
	for _, f := range c.Cleared {
		p.f("%s - cleared [%s] %s\n", ts, f.ID, f.Summary)
	}
	return p.err
}

// Watch looks every interval until ctx ends, and calls emit with each look
// whose Diff from the look before is not Empty (the first look always). A look is bounded by look's own context handling; Watch only
// paces them on clk, so tests drive it without sleeping.
func Watch(ctx context.Context, interval time.Duration, clk clock.Clock, look func(context.Context) *Document, emit func(*Document, *Change) error) error {
	clk = clock.Or(clk)
	var prev *Document
	for {
		doc := look(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if c := Diff(prev, doc); prev == nil || !c.Empty() {
			if err := emit(doc, c); err != nil {
				return fmt.Errorf("doctor --watch: %w", err)
			}
		}
		prev = doc
		select {
		case <-ctx.Done():
			return nil
		case <-clk.After(interval):
		}
	}
}
