# connect-init: the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
STATICCHECK_VERSION ?= 2026.2.2
GOBIN := $(shell $(GO) env GOPATH)/bin
# A count, not a duration: Go 1.26's fuzz coordinator can report a spurious
# "context deadline exceeded" when a duration runs out (golang/go#75804).
FUZZTIME ?= 50000x

.PHONY: build jar deps demo test unit lint integration containers smoke-3x smoke-zk fuzz bench chaos rolling monitoring live-storm release release-check reproducible clean

## build: the static binary, version stamped
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/connect-init ./cmd/connect-init

## jar: the in-worker startup lock's ConfigProvider (java/connect-init-provider), for the worker's classpath
MVN ?= mvn
JAR := bin/connect-init-provider.jar
jar: $(JAR)
$(JAR): java/connect-init-provider/pom.xml $(shell find java/connect-init-provider/src -name '*.java' 2>/dev/null)
	$(MVN) -q -B -Dstyle.color=never -f java/connect-init-provider/pom.xml package
	@mkdir -p bin && cp java/connect-init-provider/target/connect-init-provider.jar $@

## release: what a user takes, into dist/: static linux/amd64 and linux/arm64 binaries, the provider jar, a
## CycloneDX SBOM per binary and SHA256SUMS (checked at the end with sha256sum -c). No -X stamp: the
## binaries carry the module version (the tag, or a pseudo-version of the commit) and the VCS revision in
## their build information, and fixed flags (-trimpath, -buildid=) make two builds of one commit the same
## bytes (make reproducible). Run it in a clone: Go records the VCS only from a .git directory, not from a
## git worktree, and the target refuses a binary without its revision.
RELEASE_ARCHES ?= amd64 arm64
RELEASE_LDFLAGS := -s -w -buildid=
CYCLONEDX_GOMOD ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
release:
	rm -rf dist && mkdir -p dist bin
	GOBIN=$(CURDIR)/bin GOFLAGS= $(GO) install $(CYCLONEDX_GOMOD)
	set -e; for arch in $(RELEASE_ARCHES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch GOFLAGS= $(GO) build -trimpath -buildvcs=true -ldflags "$(RELEASE_LDFLAGS)" \
	    -o dist/connect-init-linux-$$arch ./cmd/connect-init; \
	  $(GO) version -m dist/connect-init-linux-$$arch | grep -q 'vcs.revision=' || \
	    { echo "dist/connect-init-linux-$$arch has no VCS revision: run make release in a clone (not a git worktree)"; exit 1; }; \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch GOFLAGS= bin/cyclonedx-gomod app -json -std -noserial -notimestamp \
	    -main cmd/connect-init -output dist/connect-init-linux-$$arch.cdx.json .; \
	done
	$(MVN) -q -B -Dstyle.color=never -f java/connect-init-provider/pom.xml clean package
	cp java/connect-init-provider/target/connect-init-provider.jar dist/
	cd dist && sha256sum connect-init-linux-* connect-init-provider.jar > SHA256SUMS && sha256sum -c SHA256SUMS

## release-check: make release, then TestRelease (build tag release): the checksums verify, each SBOM lists
## the modules of go.mod that its binary links, at go.mod's versions, and the binaries say their commit
release-check: release
	CITEST_DIST=$(CURDIR)/dist $(GO) test -tags release -count=1 -run '^TestRelease$$' -v ./buildinfo/

## reproducible: make release twice, in two fresh clones of HEAD at different paths, each with an empty Go
## build cache and Maven output, the second clone and build under umask 077 (the jar's entries carried the
## file modes, issue 48), and compare the two dist/SHA256SUMS (several minutes: two cold builds)
reproducible:
	@set -e; tmp=$$(mktemp -d); trap 'chmod -R u+w $$tmp; rm -rf $$tmp' EXIT; rev=$$(git rev-parse HEAD); \
	for d in one:022 two/deeper:077; do \
	  m=$${d#*:}; d=$${d%%:*}; \
	  ( umask $$m; \
	    git clone --quiet --no-checkout "$(CURDIR)" $$tmp/$$d; \
	    git -C $$tmp/$$d checkout --quiet --detach $$rev; \
	    GOCACHE=$$tmp/cache-$${d%%/*} $(MAKE) --no-print-directory -C $$tmp/$$d release >/dev/null ); \
	done; \
	if cmp -s $$tmp/one/dist/SHA256SUMS $$tmp/two/deeper/dist/SHA256SUMS; then \
	  echo "reproducible: two builds of $$rev are the same bytes:"; cat $$tmp/one/dist/SHA256SUMS; \
	else diff $$tmp/one/dist/SHA256SUMS $$tmp/two/deeper/dist/SHA256SUMS; echo "reproducible: the two builds differ"; exit 1; fi

## demo: a local 3-broker KRaft cluster and two Connect workers started through connect-init (Ctrl-C stops all)
# Built, then run directly: `go run` exits 1 after forwarding a Ctrl-C, which
# make reports as an error; the demo itself exits 0 when stopped by a signal.
demo:
	@mkdir -p bin && $(GO) build -o bin/demo ./internal/demo
	@bin/demo

## test: everything CI runs: lint, unit tests, real-Kafka integration tests (newest 4.x), the 3.9 KRaft and
## 3.4 ZooKeeper-mode smoke tests, short fuzzing
test: deps lint unit integration smoke-3x smoke-zk fuzz

## deps: what the integration tests need besides Go, Java and Maven, from Debian's packages: the MIT
## Kerberos KDC (GSSAPI tests), docker.io with a running dockerd (Swarm and Compose scenarios) and
## prometheus (promtool for the shipped alert rules' tests; the server for the watcher's test).
## Idempotent: installs only what is missing (apt, as root or with sudo), starts dockerd only when none answers.
deps:
	bash .ci/install-kdc
	bash .ci/install-docker
	bash .ci/install-prometheus

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags integration ./...
	$(GO) vet -tags release ./buildinfo/
	$(GO) vet -tags 'integration rolling' ./internal/containerbed/
	$(GO) vet -tags 'integration long' ./cmd/connect-init/ ./internal/containerbed/
	$(GO) vet -tags 'integration monitoring' ./internal/monitoring/
	@test -x $(GOBIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(GOBIN)/staticcheck ./...
	$(GOBIN)/staticcheck -tags integration ./...
	$(GOBIN)/staticcheck -tags release ./buildinfo/
	$(GOBIN)/staticcheck -tags 'integration rolling' ./internal/containerbed/
	$(GOBIN)/staticcheck -tags 'integration long' ./cmd/connect-init/ ./internal/containerbed/
	$(GOBIN)/staticcheck -tags 'integration monitoring' ./internal/monitoring/

unit:
	$(GO) test -race -count=1 ./...

# Integration packages each start one real cluster; -p 1 keeps one cluster at a time on a 2-core machine.
# internal/zkmode runs only on its ZooKeeper-mode cluster: smoke-zk runs it.
integration: jar
	$(GO) test -tags integration -count=1 -p 1 -timeout 45m $$($(GO) list ./... | grep -v '/internal/zkmode$$')

# The real Docker Swarm / Compose scenarios alone (part of integration too);
# .ci/install-docker installs and starts what they need.
containers:
	$(GO) test -tags integration -count=1 -p 1 -timeout 30m -v ./internal/containerbed/

smoke-3x: jar
	CITEST_KAFKA_VERSION=3.9.1 $(GO) test -tags integration -count=1 -timeout 10m -run 'TestE2E|TestConnectProtocolBytes' -v ./cmd/connect-init/
	CITEST_KAFKA_VERSION=3.9.1 $(GO) test -tags integration -count=1 -timeout 10m -v ./internal/degraded/

## smoke-zk: prepare, a repeated prepare, doctor --json, run with the startup lock, a killed and a stopped broker on
## Kafka 3.4.1 in ZooKeeper mode (the Kafka of Confluent Platform 7.4), 70-95 s
smoke-zk: jar
	$(GO) test -tags integration -count=1 -timeout 10m -v ./internal/zkmode/

fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

bench: jar
	$(GO) run ./internal/bench

## chaos: the startup lock's fault harness, long: CI's short version plus $(CHAOS_ROUNDS) rounds of
## 8 contenders with faults drawn from a seed (CHAOS_SEED=n replays a run), then the table between the
## chaos-table markers of docs/benchmarks.md is replaced. About 1.5 min a round: run it on a quiet machine.
CHAOS_ROUNDS ?= 50
CHAOS_SEED ?=
chaos:
	mkdir -p bin
	CITEST_CHAOS_ROUNDS=$(CHAOS_ROUNDS) CITEST_CHAOS_SEED=$(CHAOS_SEED) CITEST_CHAOS_TABLE=$(CURDIR)/bin/chaos-table.md \
		$(GO) test -tags integration -count=1 -timeout 600m -run TestChaos -v ./internal/chaos/ | tee bin/chaos.log; \
	status=$${PIPESTATUS[0]}; \
	awk -v table=bin/chaos-table.md '/<!-- chaos-table:end -->/{while((getline l < table)>0) print l; skip=0} !skip{print} /<!-- chaos-table:start -->/{skip=1}' \
		docs/benchmarks.md > bin/benchmarks.md.new && mv bin/benchmarks.md.new docs/benchmarks.md; \
	exit $$status

## rolling: a measured rolling update of the Swarm example (issues 32, 39): 3 workers, 2 connectors x 4 tasks,
## `docker service update --force` on the example as it stands (example), the same with Connect's default
## scheduled.rebalance.max.delay.ms (default-delay) and without connect-init (bare); per replaced worker its
## rejoin against bare's, its tasks' outage and its start-up profile; the failing update's rollback. Long
## (20-25 min), so not in CI: the test has its own build tag. The table goes to bin/rolling-table.md (for
## docs/benchmarks.md). ROLLING_VARIANTS=example,bare runs some variants only.
ROLLING_VARIANTS ?=
rolling:
	mkdir -p bin
	CITEST_ROLLING_VARIANTS=$(ROLLING_VARIANTS) CITEST_ROLLING_TABLE=$(CURDIR)/bin/rolling-table.md \
		$(GO) test -tags 'integration rolling' -count=1 -timeout 150m -run '^TestSwarmRollingUpdate$$' -v ./internal/containerbed/ | tee bin/rolling.log; \
	exit $${PIPESTATUS[0]}

## monitoring: the shipped alert rules on the two incidents, on a full outage (every broker stopped, then the watcher) and the watcher's
## memory over 510 looks (not in CI, about 28 min): the watcher scraped by a real Prometheus; how long after the cause each alert fires
## and resolves (MEASURE lines)
monitoring:
	mkdir -p bin
	$(GO) test -tags 'integration monitoring' -count=1 -p 1 -timeout 45m -run 'TestAlertsFireOnIncidents|TestAlertsInOutage|TestWatcherMemory' -v ./internal/monitoring/ | tee bin/monitoring.log; \
	exit $${PIPESTATUS[0]}

## live-storm: incident 1 while it happens (issue 47), STORM_ROUNDS rounds (default 10) at random phases of the
## storm, with STORM_HOGS busy processes beside it (default 2): doctor exits 1 naming the foreign worker and run
## refuses with the lock off, before the exec and in the worker, every round (CI runs 1 round with 1 hog)
STORM_ROUNDS ?= 10
STORM_HOGS ?= 2
live-storm: jar
	CITEST_STORM_ROUNDS=$(STORM_ROUNDS) CITEST_STORM_HOGS=$(STORM_HOGS) $(GO) test -tags integration -count=1 -timeout 60m \
		-run '^TestLiveStormVerdictEveryPhase$$' -v ./cmd/connect-init/

## long: the integration tests kept out of CI for time (a rebalance storm, 2-3 min; real workers through a lock
## leader's kill -9, 1.5 min, whose ground the fault harness's short run in CI also covers; the Compose example
## under Compose v1, 3 min)
long: jar
	$(GO) test -tags 'integration long' -count=1 -timeout 20m -run 'TestRebalanceStormInProgress|TestStartupLockSurvivesLeaderFailover' -v ./cmd/connect-init/
	$(GO) test -tags 'integration long' -count=1 -timeout 20m -run 'TestComposeExampleV1' -v ./internal/containerbed/

clean:
	rm -rf bin dist
