//go:build integration

package chaos

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// The fault harness on real brokers (issue 33). CI runs the short version:
// the first deployment (8 contenders on a brand-new cluster with the lock
// leader killed, a waiter stopped and a holder dying), the broken-lock
// control and the unwritable lock topic. `make chaos` sets
// CITEST_CHAOS_ROUNDS (random rounds on top) and
// CITEST_CHAOS_TABLE (where the table of docs/benchmarks.md is
// written). CITEST_CHAOS_SEED replays a round: every round logs its
// seed.

func TestMain(m *testing.M) {
	code := m.Run()
	testbed.KillAll()
	os.Exit(code)
}

// tally is what make chaos reports.
type tally struct {
	rounds, violations int
	faults             map[string]int
	took               []time.Duration
	stalls             []Stall
}

func (t *tally) add(r *Result) {
	t.rounds++
	t.violations += len(r.Violations)
	for _, f := range r.Faults {
		t.faults[f]++
	}
	t.took = append(t.took, r.Took)
	t.stalls = append(t.stalls, r.Stalls...)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestChaos(t *testing.T) {
	ctx := context.Background()
	b, err := NewBed(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	seed := time.Now().UnixNano() % 1e9
	if s, err := strconv.ParseInt(os.Getenv("CITEST_CHAOS_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d (replay with CITEST_CHAOS_SEED=%d)", seed, seed)
	tal := &tally{faults: map[string]int{}}
	report := func(t *testing.T, r *Result) {
		t.Helper()
		tal.add(r)
		st := StartTimes(r.History)
		t.Logf("faults %v: %d violations, %d started, last after %s, stalls %+v", r.Faults, len(r.Violations), len(st), r.Took.Round(time.Millisecond), r.Stalls)
		for _, v := range r.Violations {
			t.Errorf("%s", v)
		}
		if len(r.Violations) > 0 {
			t.Logf("the lock topic's records of this round:\n%s", r.History.RecordLines())
		}
		// Written after every round, so that a run cut short still
		// leaves the table of the rounds it ran.
		if path := os.Getenv("CITEST_CHAOS_TABLE"); path != "" {
			if err := os.WriteFile(path, []byte(tal.table(seed)), 0o644); err != nil {
				t.Error(err)
			}
		}
	}

	// Must run first: the cluster is brand-new (no __consumer_offsets).
	t.Run("first-deployment", func(t *testing.T) {
		r, err := Round(ctx, b, Options{Name: "first", N: 8, Seed: seed, Binary: b.Binary, LockLease: 15 * time.Second, ReadyAfter: 2 * time.Second,
			Faults: Faults{KillLeader: true, StopWaiter: true, HolderDies: true}, Logf: t.Logf})
		if err != nil {
			t.Fatal(err)
		}
		report(t, r)
		if len(r.Stalls) == 0 {
			t.Error("the lock leader's kill was not measured")
		}
		for _, s := range r.Stalls {
			// Issue 33, item 4: the queue moves within a few seconds of
			// the cluster's own failover. A waiter writes every lease/3
			// (5 s here) and retries a failed write at its next poll.
			if s.Resumed > 5*time.Second {
				t.Errorf("the queue resumed %s after the cluster elected a new lock leader (failover %s), want within 5 s", s.Resumed, s.Failover)
			}
		}
	})

	t.Run("broken-lock-caught", func(t *testing.T) {
		for attempt := 1; attempt <= 4; attempt++ {
			r, err := StaleClaim(ctx, b, b.Mutant, seed+int64(attempt), t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range r.Violations {
				t.Logf("mutant (attempt %d): %s", attempt, v)
				if v.Property == "safety" {
					return
				}
			}
		}
		t.Fatal("the lock built with -tags lockmutant (claims never validated) went through four stale-claim rounds without a safety violation: the harness cannot tell a broken lock")
	})

	t.Run("unwritable-lock-topic", func(t *testing.T) {
		after := 20 * time.Second
		r, err := Unwritable(ctx, b, after, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		report(t, r)
		for _, c := range r.History.Contenders {
			if c.Unlocked.IsZero() {
				t.Errorf("%s did not log that it starts without the lock; log tail:\n%s", c.Name, c.LogTail)
				continue
			}
			if !strings.Contains(c.LogTail, r.History.Scope) && !strings.Contains(c.LogTail, "_chaos-lock-") {
				t.Errorf("%s: the warning does not name the lock topic:\n%s", c.Name, c.LogTail)
			}
			if waited := c.Unlocked.Sub(r.History.Start); waited < after {
				t.Errorf("%s started without the lock after %s, before the %s bound", c.Name, waited, after)
			}
		}
	})

	rounds := envInt("CITEST_CHAOS_ROUNDS", 0)
	if rounds > 0 {
		t.Run("stale-claim-validated", func(t *testing.T) {
			r, err := StaleClaim(ctx, b, b.Binary, seed, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			report(t, r)
		})
	}
	rng := rand.New(rand.NewSource(seed))
	for i := range rounds {
		rs := rng.Int63n(1e9)
		t.Run(fmt.Sprintf("random-%d", i), func(t *testing.T) {
			f := RandomFaults(rand.New(rand.NewSource(rs)))
			r, err := Round(ctx, b, Options{Name: fmt.Sprintf("r%d", i), N: 8, Seed: rs, Binary: b.Binary, LockLease: 15 * time.Second,
				ReadyAfter: 2 * time.Second, Faults: f, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("round seed %d (the whole run replays with CITEST_CHAOS_SEED=%d and the same CITEST_CHAOS_ROUNDS)", rs, seed)
			report(t, r)
		})
	}
}

func (t *tally) table(seed int64) string {
	sort.Slice(t.took, func(i, j int) bool { return t.took[i] < t.took[j] })
	med, worst := time.Duration(0), time.Duration(0)
	if n := len(t.took); n > 0 {
		med, worst = t.took[n/2], t.took[n-1]
	}
	var fs []string
	for k, v := range t.faults {
		fs = append(fs, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(fs)
	var sb strings.Builder
	fmt.Fprintf(&sb, "| rounds | faults injected | violations | all started: median | all started: worst |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&sb, "| %d | %s | %d | %.1f s | %.1f s |\n", t.rounds, strings.Join(fs, ", "), t.violations, med.Seconds(), worst.Seconds())
	if len(t.stalls) > 0 {
		fmt.Fprintf(&sb, "\nLock leader killed %d times: cluster failover / queue resumed after the new leader / every waiter written again:\n\n", len(t.stalls))
		for _, s := range t.stalls {
			fmt.Fprintf(&sb, "- %.1f s / %.1f s / %.1f s\n", s.Failover.Seconds(), s.Resumed.Seconds(), s.AllBack.Seconds())
		}
	}
	fmt.Fprintf(&sb, "\nSeed %d.\n", seed)
	return sb.String()
}
