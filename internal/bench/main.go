// Command bench measures what connect-init costs and what it saves, on the
// real test bed (KRaft brokers and Connect workers from the Maven jars),
// side by side with the alternatives, and writes a markdown table.
//
//	go run ./internal/bench [-runs 10] [-quick] [-out bench/results.md]
//
// Rows: (1) gate overhead of `connect-init prepare` on a healthy cluster vs
// Kafka's own JVM tools; (2) reaction time to the last broker starting;
// (3) bring-up of 4 real Connect workers bare, with the startup lock, and
// with 4 permits; (4) footprint; (5) the startup lock with 32 contenders;
// (restart) one worker of a running group restarted in Swarm and in
// Compose's layout, bare beside connect-init; (6) `connect-init repair`
// raising 50 partitions from 1 to 3 replicas;
// (7) the plugins step's scan of real plugin directories; (8) `connect-init
// apply`, the first and a no-op; (9) what waiting 60 s for a broker that
// does not answer costs, beside a JVM admin client.
// Timings are reported, never asserted: the machine may be shared and slow.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// defaultOut is where make bench writes its results; only a run written
// there fills the README's figures.
const defaultOut = "bench/results.md"

// options are the command-line flags.
type options struct {
	runs        int
	quick       bool
	out         string
	reactRuns   int
	bringupRuns int
	// restartRounds is -restart-rounds: restarts per variant of the
	// restart rows.
	restartRounds int
	contenders    int
	only          string
	keep          bool
	baseline      string
	serve         bool
	scenarios     string
	// workers is -bringup-workers: the group sizes of row 3.
	workers string
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 10, "repetitions of each quick measurement (rows 1 and 4)")
	flag.BoolVar(&o.quick, "quick", false, "skip the expensive rows (3: Connect bring-up, 2: reaction, 5: lock scale)")
	flag.StringVar(&o.out, "out", defaultOut, "markdown file to write (relative to the repository root)")
	flag.IntVar(&o.reactRuns, "reaction-runs", 4, "repetitions of the reaction-time measurement (row 2)")
	flag.IntVar(&o.bringupRuns, "bringup-runs", 2, "repetitions of each bring-up scenario (row 3)")
	flag.IntVar(&o.restartRounds, "restart-rounds", defaultRestartRounds, "restarts of each variant in the restart rows (Swarm and Compose)")
	flag.IntVar(&o.contenders, "contenders", 32, "startup-lock contenders (row 5)")
	flag.StringVar(&o.only, "only", "", "comma-separated subset of rows to run: overhead,reaction,bringup,lockscale,swarm,restart,repair,plugins,apply,waiting (default all)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (logs of brokers, workers and connect-init)")
	flag.StringVar(&o.baseline, "baseline", "", "another connect-init binary (e.g. built from an earlier commit): row 1a-base times its prepare beside row 1a's, in the same rounds")
	flag.StringVar(&o.scenarios, "bringup-scenarios", "", "comma-separated subset of the bring-up scenarios (row 3: 3a,3b,3c,3d,3e,3f,3g,3h, or by name: bare (3a), exec (3b), default (3d), each (3h); default all): a shorter run that still alternates bare and the variants")
	flag.StringVar(&o.workers, "bringup-workers", "4", "comma-separated group sizes of the bring-up (row 3), e.g. 4,8: rows of 4 keep their ids (3a), others get the size after a dot (3a.8)")
	flag.BoolVar(&o.serve, "serve", false, "start the test bed, print the binary and bootstrap servers, and wait for Ctrl-C (for profiling by hand)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, o)
	stop()
	os.Exit(code)
}

func (o options) want(row string) bool {
	if o.only == "" {
		if o.quick {
			return row == "overhead"
		}
		return true
	}
	for _, r := range strings.Split(o.only, ",") {
		if strings.TrimSpace(r) == row {
			return true
		}
	}
	return false
}

// bed is the shared test bed of one benchmark run.
type bed struct {
	dist    *testbed.Dist
	cluster *testbed.Cluster
	binary  string // connect-init, static and stripped
	standin string // the stand-in worker
	dir     string
	logDir  string

	prepareRSS []float64 // MiB, row 1a
	waiterHWM  []float64 // MiB, row 5
}

// setUp makes the bed of one run under dir: the Kafka jars, the static
// binaries (connect-init, the stand-in worker, the rusage helper) and a
// 3-broker cluster, which the caller closes.
func setUp(ctx context.Context, root, dir string) (*bed, error) {
	b := &bed{dir: dir, logDir: filepath.Join(dir, "logs")}
	if err := os.MkdirAll(b.logDir, 0o755); err != nil {
		return nil, err
	}
	progress("fetching Kafka %s", testbed.Version())
	fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	var err error
	b.dist, err = testbed.Fetch(fctx, testbed.Version())
	cancel()
	if err != nil {
		return nil, err
	}
	progress("building connect-init (static, stripped) and the stand-in worker")
	if b.binary, err = buildStatic(root, dir, "./cmd/connect-init", "connect-init", "-X main.version=bench"); err != nil {
		return nil, err
	}
	if b.standin, err = buildStatic(root, dir, "./internal/bench/standin", "standin", ""); err != nil {
		return nil, err
	}
	if rusageHelper, err = buildStatic(root, dir, "./internal/bench/rusage", "rusage", ""); err != nil {
		return nil, err
	}
	progress("starting 3 KRaft brokers")
	// FreePort is racy on a shared machine (another test may take a port
	// before a broker binds it): try a fresh cluster a few times.
	for attempt := 1; attempt <= 3; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		b.cluster, err = testbed.StartCluster(sctx, b.dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(dir, fmt.Sprintf("cluster-%d", attempt))})
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
		progress("cluster start failed (attempt %d): %s", attempt, firstLineOf(err.Error()))
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func run(ctx context.Context, o options) int {
	defer testbed.KillAll()
	defer killStarted()
	root, err := testbed.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	out := o.out
	if !filepath.IsAbs(out) {
		out = filepath.Join(root, out)
	}
	dir, err := os.MkdirTemp("", "connect-init-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "bench: work directory", dir)
	} else {
		defer os.RemoveAll(dir)
	}

	b, err := setUp(ctx, root, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer b.cluster.Close()
	progress("cluster up: %s", b.cluster.Bootstrap())

	if o.serve {
		fmt.Printf("connect-init: %s\nstand-in: %s\nbootstrap: %s\ncluster dir: %s\nKafka libs: %s\n", b.binary, b.standin, b.cluster.Bootstrap(), b.cluster.Opts.Dir, b.dist.LibDir)
		<-ctx.Done()
		return 0
	}
	rep := &report{started: time.Now(), machine: describeMachine(ctx, b), opts: o}
	steps := []struct {
		row string
		fn  func(context.Context, *bed, options, *report) error
	}{
		{"overhead", benchOverhead},
		{"reaction", benchReaction},
		{"lockscale", benchLockScale},
		{"bringup", benchBringup},
		{"swarm", benchSwarm},
		{"restart", benchRestart},
		{"repair", benchRepair},
		{"plugins", benchPlugins},
		{"apply", benchApply},
		{"waiting", benchWaiting},
	}
	failed := false
	for _, s := range steps {
		if !o.want(s.row) || ctx.Err() != nil {
			continue
		}
		progress("== %s", s.row)
		if err := s.fn(ctx, b, o, rep); err != nil {
			failed = true
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", s.row, err)
			rep.problems = append(rep.problems, fmt.Sprintf("%s: %v", s.row, firstLineOf(err.Error())))
		}
	}
	if err := footprint(b, rep); err != nil {
		rep.problems = append(rep.problems, "footprint: "+err.Error())
	}
	md := rep.markdown()
	fmt.Println(md)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	progress("wrote %s", out)
	if o.out == defaultOut {
		// The README quotes this run (figures.go); a run that lacks a row
		// the README needs leaves it as it was, and says so.
		if err := updateReadme(out, filepath.Join(root, "README.md")); err != nil {
			progress("README figures not updated: %v", err)
		} else {
			progress("filled README.md's figures from %s", out)
		}
	}
	if ctx.Err() != nil || failed {
		return 1
	}
	return 0
}

// progress prints a timestamped progress line on stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
