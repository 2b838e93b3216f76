package containerbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// Bed is a started test bed: daemon, swarm, images and broker stack.
type Bed struct {
	Dir string
	// Image is the cp-kafka-connect 7.9 (dub) stand-in; the other
	// stand-ins are tagged Image plus their Standin.Suffix.
	Image   string
	Brokers *Brokers
}

// Start brings the whole bed up once: the daemon (started when none
// runs), a swarm on loopback, a sweep of what an earlier run left, the
// image, and the broker stack. Close removes everything it created.
func Start(ctx context.Context) (*Bed, error) {
	dir, err := os.MkdirTemp("", "containerbed-")
	if err != nil {
		return nil, err
	}
	b := &Bed{Dir: dir, Image: "connect-init-bed:" + strconv.Itoa(os.Getpid())}
	if err := EnsureDaemon(ctx, filepath.Join(os.TempDir(), "containerbed-dockerd.log")); err != nil {
		return b, err
	}
	if err := EnsureSwarm(ctx); err != nil {
		return b, err
	}
	if err := SweepAll(ctx); err != nil {
		return b, fmt.Errorf("containerbed: sweep before start: %w", err)
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		return b, err
	}
	if err := BuildImage(ctx, filepath.Join(dir, "image"), b.Image, dist); err != nil {
		return b, err
	}
	// The brokers run on the apache/kafka stand-in, as Kafka's own image.
	if b.Brokers, err = StartBrokers(ctx, dir, b.Image+"-apache"); err != nil {
		return b, err
	}
	return b, nil
}

// Close removes everything the bed created, even after a failed start.
func (b *Bed) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := SweepAll(ctx)
	os.RemoveAll(b.Dir)
	return err
}

// StackPrefix starts the name of every stack and Compose project the
// tests deploy, so that SweepAll finds them.
const StackPrefix = "cbed"

// SweepAll removes the bed's stacks and Compose projects, then everything
// labelled Label.
func SweepAll(ctx context.Context) error {
	out, _ := Docker(ctx, "stack", "ls", "--format", "{{.Name}}")
	for _, s := range strings.Fields(out) {
		if strings.HasPrefix(s, StackPrefix) {
			Docker(ctx, "stack", "rm", s) //nolint:errcheck // the sweep below reports leftovers
		}
	}
	out, _ = Docker(ctx, "ps", "-aq", "--filter", "label=com.docker.compose.project")
	for _, c := range strings.Fields(out) {
		p, _ := Docker(ctx, "inspect", "--format", `{{index .Config.Labels "com.docker.compose.project"}}`, c)
		if strings.HasPrefix(p, StackPrefix) {
			Docker(ctx, "rm", "-f", c) //nolint:errcheck
		}
	}
	// Stack services are removed asynchronously; wait for their tasks.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		out, _ := Docker(ctx, "ps", "-aq", "--filter", "label=com.docker.stack.namespace")
		if strings.TrimSpace(out) == "" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	out, _ = Docker(ctx, "volume", "ls", "-q")
	for _, v := range strings.Fields(out) {
		if strings.HasPrefix(v, StackPrefix) {
			Docker(ctx, "volume", "rm", "-f", v) //nolint:errcheck
		}
	}
	out, _ = Docker(ctx, "network", "ls", "--format", "{{.Name}}")
	for _, n := range strings.Fields(out) {
		if strings.HasPrefix(n, StackPrefix) {
			Docker(ctx, "network", "rm", n) //nolint:errcheck
		}
	}
	return Sweep(ctx)
}

var joined = regexp.MustCompile(`Joined group at generation (\d+) with protocol version \d+ and got assignment: Assignment\{error=0, leader='[^']*', leaderUrl='([^']*)'`)

// Generation returns the generation and leader URL a worker's log last
// joined with (-1 before the first join).
func Generation(logs string) (int, string) {
	m := joined.FindAllStringSubmatch(logs, -1)
	if len(m) == 0 {
		return -1, ""
	}
	g, _ := strconv.Atoi(m[len(m)-1][1])
	return g, m[len(m)-1][2]
}
