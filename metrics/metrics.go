// Package metrics is connect-init's one Prometheus registry and its HTTP
// endpoint, shared by the watchers (apply --watch, doctor --watch): each
// registers its own collectors on a registry made here, and Serve exposes
// it. Keeping the registry's construction in one place means both watchers
// expose the same process and Go runtime metrics under the same names, so
// one dashboard reads the memory of either.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry is a registry with the process collector (resident memory,
// open file descriptors, CPU) and the Go runtime collector, which is what
// a long-running watcher's leaks show up in, and connect_init_build_info,
// which tells a dashboard or an alert which build serves the series (a
// rule's behaviour changes with the binary that feeds it).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector(), buildInfo())
	return reg
}

// build is the binary's identity as its command resolved it (SetBuild):
// the version `connect-init version` prints, so that the scrape and the
// command never name two versions for one binary.
var build struct {
	sync.Mutex
	set               bool
	version, revision string
}

// SetBuild records the build's version and VCS revision as the command
// resolved them (buildinfo.Read of its -ldflags stamp); connect_init_build_info
// serves them. The command calls it once, before any registry is made.
// This package stays a leaf (internal/layers), so the command hands the
// identity down rather than this package reading the stamp.
func SetBuild(version, revision string) {
	build.Lock()
	defer build.Unlock()
	build.set, build.version, build.revision = true, version, revision
}

// buildInfo is the constant series connect_init_build_info{version,
// revision, goversion} 1 (the Prometheus convention for build
// information: join it on instance to label other series): the build
// SetBuild recorded, else (a test's registry) the module version and
// revision the toolchain recorded.
func buildInfo() prometheus.Collector {
	labels := prometheus.Labels{"version": "(devel)", "revision": "", "goversion": runtime.Version()}
	build.Lock()
	set, version, revision := build.set, build.version, build.revision
	build.Unlock()
	if set {
		labels["version"], labels["revision"] = version, revision
	} else if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			labels["version"] = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				labels["revision"] = s.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "connect_init_build_info",
		Help:        "The build of connect-init serving these metrics (always 1): its version (as connect-init version prints it), VCS revision and Go version.",
		ConstLabels: labels}, func() float64 { return 1 })
}

// Serve listens on addr (host:port) and serves g at /metrics until ctx
// ends. The listener is opened before it returns, so that an address in use
// is an error at once, not a line in the log later. A failed scrape answers
// 500 with the error instead of a partial page, so that Prometheus marks
// the target down rather than seeing series vanish.
func Serve(ctx context.Context, addr string, g prometheus.Gatherer) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot serve the metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown below
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr(), nil
}
