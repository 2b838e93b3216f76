package main

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// toolJVMFlags are the flags kafka-run-class.sh gives a command-line tool
// by default (KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS), so the JVM
// tools run as they do in an init job.
var toolJVMFlags = []string{
	"-Xmx256M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// toolsLog4j is the tools' logging: warnings to stderr, as
// tools-log4j2.yaml configures them.
const toolsLog4j = `status = warn
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = STDERR
`

// kafkaTool returns how a row runs one of Kafka's command-line tools as
// kafka-run-class.sh does: its JVM flags, the tools' logging (written to
// <name>-log4j2.properties in the bed's directory) and the distribution's
// classpath, then the tool's class and its arguments.
func kafkaTool(b *bed, name string) (func(cls string, args ...string) []string, error) {
	log4j := filepath.Join(b.dir, name+"-log4j2.properties")
	if err := os.WriteFile(log4j, []byte(toolsLog4j), 0o644); err != nil {
		return nil, err
	}
	return func(cls string, args ...string) []string {
		argv := append([]string{"java"}, toolJVMFlags...)
		argv = append(argv, "-Dlog4j2.configurationFile="+log4j, "-cp", b.dist.Classpath(), cls)
		return append(argv, args...)
	}, nil
}

// findClass returns the first of the candidate classes present in the
// distribution's jars.
func findClass(dist *testbed.Dist, candidates ...string) (string, error) {
	jars, _ := filepath.Glob(filepath.Join(dist.LibDir, "*.jar"))
	want := map[string]string{}
	for _, c := range candidates {
		want[strings.ReplaceAll(c, ".", "/")+".class"] = c
	}
	found := map[string]bool{}
	for _, j := range jars {
		zr, err := zip.OpenReader(j)
		if err != nil {
			continue
		}
		for _, f := range zr.File {
			if c, ok := want[f.Name]; ok {
				found[c] = true
			}
		}
		zr.Close()
	}
	for _, c := range candidates {
		if found[c] {
			return c, nil
		}
	}
	return "", fmt.Errorf("none of %v in Kafka %s's jars", candidates, dist.Version)
}

// gateEnv is the environment of a connect-init for the Connect cluster
// described by props on the bench cluster.
func gateEnv(props map[string]string, extra ...string) []string {
	env := append(testbed.BaseEnv(), testbed.EnvFromProps(props)...)
	env = append(env, "CONNECT_INIT_EXPECTED_BROKERS=3", "CONNECT_INIT_TIMEOUT=3m")
	return append(env, extra...)
}

// freshGroup returns the group and internal topic names of a new Connect
// cluster.
func freshGroup(name string) map[string]string {
	id := fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano()%1e9)
	return map[string]string{
		"group.id":             id,
		"config.storage.topic": id + "-configs",
		"offset.storage.topic": id + "-offsets",
		"status.storage.topic": id + "-status",
	}
}

// overheadWarmups are the rounds of every command of rows 1 run before
// the recorded ones.
const overheadWarmups = 5

var tookRe = regexp.MustCompile(`msg="cluster ready".* took=([0-9.]+)(ms|s|µs)`)

// benchOverhead is row 1: `connect-init prepare` on a healthy cluster whose
// internal topics exist, against Kafka's JVM tools, alternating, plus
// `connect-init version` as the floor of starting a process.
func benchOverhead(ctx context.Context, b *bed, o options, rep *report) error {
	props, err := b.cluster.WorkerProps(freshGroup("gate"))
	if err != nil {
		return err
	}
	env := gateEnv(props, "CONNECT_INIT_LOCK=false")
	// The first prepare creates the topics; then the cluster is "healthy,
	// topics exist". Retry once: a prepare right after creating topics can
	// race their propagation.
	prof := profiles{} // row 1a's start-up profile lines
	var first oneShot
	for i := 0; i < 3; i++ {
		if first, err = timeRun(ctx, []string{b.binary, "prepare"}, env); err != nil {
			return err
		}
		if first.code == 0 {
			break
		}
	}
	if first.code != 0 {
		return fmt.Errorf("connect-init prepare exited %d:\n%s", first.code, first.out)
	}
	progress("first prepare (creates the topics) took %s", first.wall.Round(time.Millisecond))

	apiCls, err := findClass(b.dist, "org.apache.kafka.tools.BrokerApiVersionsCommand", "kafka.admin.BrokerApiVersionsCommand")
	if err != nil {
		return err
	}
	topicCls, err := findClass(b.dist, "org.apache.kafka.tools.TopicCommand", "kafka.admin.TopicCommand")
	if err != nil {
		return err
	}
	java, err := kafkaTool(b, "tools")
	if err != nil {
		return err
	}
	type cmd struct {
		id, what, short string
		argv            []string
		env             []string
		wall            []float64
		rss             []float64
		took            []float64
	}
	cmds := []*cmd{
		{id: "1a", short: "`connect-init prepare`", what: "`connect-init prepare` (all cluster gates: brokers, 3 topics' layout, coordinator, group)", argv: []string{b.binary, "prepare"}, env: env},
		{id: "1b", short: "`kafka-broker-api-versions`", what: "`kafka-broker-api-versions --bootstrap-server` (" + apiCls[strings.LastIndex(apiCls, ".")+1:] + ", JVM)", argv: java(apiCls, "--bootstrap-server", b.cluster.Bootstrap()), env: os.Environ()},
		{id: "1c", short: "`kafka-topics --describe`", what: "`kafka-topics --describe --topic <config topic>` (" + topicCls[strings.LastIndex(topicCls, ".")+1:] + ", JVM)", argv: java(topicCls, "--bootstrap-server", b.cluster.Bootstrap(), "--describe", "--topic", props["config.storage.topic"]), env: os.Environ()},
		{id: "1d", short: "`connect-init version`", what: "`connect-init version` (process start floor)", argv: []string{b.binary, "version"}, env: testbed.BaseEnv()},
	}
	if o.baseline != "" {
		// The same prepare by another build, interleaved with row 1a's runs:
		// the cost of a change, measured as a difference within one run.
		cmds = append(cmds, &cmd{id: "1a-base", short: "baseline `connect-init prepare`", what: "`connect-init prepare` of the -baseline binary " + filepath.Base(o.baseline), argv: []string{o.baseline, "prepare"}, env: env})
	}
	// Warm-up rounds, not recorded: the page cache, the JVM tools' class
	// data, and the brokers' own JIT. The bed's brokers have just started,
	// and their first rounds of requests are slow: with one warm-up run
	// each (before 2026-12-05), the first five recorded prepares of a run
	// took 30-35 ms against 22-25 ms for the last five, which measured the
	// bed's start rather than connect-init (a worker restarts against
	// brokers that have run for hours).
	for i := range overheadWarmups {
		for _, c := range cmds {
			r, err := timeRun(ctx, c.argv, c.env)
			if err != nil {
				return err
			}
			if r.code != 0 {
				return fmt.Errorf("%s exited %d:\n%s", strings.Join(c.argv, " "), r.code, tailString(r.out, 3000))
			}
		}
		progress("overhead warm-up round %d/%d (not recorded)", i+1, overheadWarmups)
	}
	for i := 0; i < o.runs; i++ {
		for j := range cmds {
			c := cmds[(i+j)%len(cmds)] // rotate the order every round
			r, err := timeRun(ctx, c.argv, c.env)
			if err != nil {
				return err
			}
			if r.code != 0 {
				return fmt.Errorf("%s exited %d:\n%s", strings.Join(c.argv, " "), r.code, tailString(r.out, 3000))
			}
			c.wall = append(c.wall, ms(r.wall))
			c.rss = append(c.rss, float64(r.maxRSS)/1024)
			if c == cmds[0] {
				prof.add(r.out)
			}
			if m := tookRe.FindStringSubmatch(r.out); m != nil {
				v, _ := strconv.ParseFloat(m[1], 64)
				switch m[2] {
				case "s":
					v *= 1000
				case "µs":
					v /= 1000
				}
				c.took = append(c.took, v)
			}
		}
		progress("overhead round %d/%d: prepare %.0f ms, api-versions %.0f ms, topics %.0f ms, version %.1f ms", i+1, o.runs,
			last(cmds[0].wall), last(cmds[1].wall), last(cmds[2].wall), last(cmds[3].wall))
	}
	for _, c := range cmds {
		rep.add(c.id, c.what+": wall time", "ms", c.wall, fmt.Sprintf("after %d warm-up rounds, not recorded", overheadWarmups))
	}
	prep := median(cmds[0].wall)
	rep.add("1e", "ratio: kafka-broker-api-versions / connect-init prepare (medians)", "×", []float64{median(cmds[1].wall) / prep}, "the JVM tool only lists API versions")
	rep.add("1f", "ratio: kafka-topics --describe / connect-init prepare (medians)", "×", []float64{median(cmds[2].wall) / prep}, "the JVM tool only describes one topic")
	if len(cmds[0].took) > 0 {
		rep.add("1g", "`connect-init prepare`: gate time it logs (`cluster ready took=`), excluding process start and client setup", "ms", cmds[0].took, "")
	}
	prof.addRows(rep, "1a", "`connect-init prepare`")
	for _, c := range cmds[:3] {
		rep.add(c.id+"-rss", c.short+": peak RSS", "MiB", c.rss, "rusage maxrss")
	}
	b.prepareRSS = cmds[0].rss
	return nil
}

func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}

func tailString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// footprint is row 4: the binary's size and linkage, and the peak RSS
// figures gathered by rows 1 and 5.
func footprint(b *bed, rep *report) error {
	st, err := os.Stat(b.binary)
	if err != nil {
		return err
	}
	kind := "unknown linkage"
	if out, err := exec.Command("file", "-b", b.binary).Output(); err == nil {
		f := strings.TrimSpace(string(out))
		switch {
		case strings.Contains(f, "statically linked"):
			kind = "statically linked"
		case strings.Contains(f, "dynamically linked"):
			kind = "DYNAMICALLY linked"
		}
		if strings.Contains(f, ", stripped") {
			kind += ", stripped"
		} else if strings.Contains(f, "not stripped") {
			kind += ", NOT stripped"
		}
	} else if out, err := exec.Command("ldd", b.binary).CombinedOutput(); err == nil || strings.Contains(string(out), "not a dynamic") {
		if strings.Contains(string(out), "not a dynamic") {
			kind = "statically linked (ldd: not a dynamic executable)"
		}
	}
	rep.add("4a", "connect-init binary size (CGO_ENABLED=0, -trimpath -ldflags \"-s -w\")", "MiB", []float64{float64(st.Size()) / (1 << 20)}, kind)
	if len(b.prepareRSS) > 0 {
		rep.add("4b", "peak RSS of `connect-init prepare` (row 1a)", "MiB", b.prepareRSS, "rusage maxrss")
	}
	if len(b.waiterHWM) > 0 {
		rep.add("4c", "peak RSS of a `connect-init run` waiting on the startup lock (row 5)", "MiB", b.waiterHWM, "VmHWM sampled just before it acquires")
	}
	return nil
}
