package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// waitFor is how long row 9 waits for a broker that never answers.
const waitFor = 60 * time.Second

// benchWaiting is row 9 (issue 48): what waiting costs. `connect-init
// prepare` waits waitFor for a broker that does not answer (a closed
// loopback port, the normal case at `docker compose up` before the brokers
// listen), at the default log level and at debug (sarama's own lines
// included), beside a JVM admin client doing the same (kafka-topics
// --list, Kafka's AdminClient, until default.api.timeout.ms), in the same
// run: CPU seconds (user + system, from rusage) and log lines per minute.
// The broker gate's backoff once overflowed and spun: 12.6 s of CPU in
// 30 s, 195,629 sarama lines in 38 s. Target: under 1 s of CPU for 60 s.
func benchWaiting(ctx context.Context, b *bed, _ options, rep *report) error {
	closed, err := closedLoopbackPort()
	if err != nil {
		return err
	}
	props, err := b.cluster.WorkerProps(freshGroup("waiting"))
	if err != nil {
		return err
	}
	topicCls, err := findClass(b.dist, "org.apache.kafka.tools.TopicCommand", "kafka.admin.TopicCommand")
	if err != nil {
		return err
	}
	java, err := kafkaTool(b, "waiting")
	if err != nil {
		return err
	}
	adminProps := filepath.Join(b.dir, "waiting-admin.properties")
	if err := os.WriteFile(adminProps, []byte(fmt.Sprintf("default.api.timeout.ms=%d\n", waitFor.Milliseconds())), 0o644); err != nil {
		return err
	}
	secs := fmt.Sprintf("%ds", int(waitFor.Seconds()))
	prepare := func(level string) []string {
		return gateEnv(props, "CONNECT_BOOTSTRAP_SERVERS="+closed, "CONNECT_INIT_EXPECTED_BROKERS=1",
			"CONNECT_INIT_TIMEOUT="+secs, "CONNECT_INIT_LOG_LEVEL="+level)
	}
	jvm := java(topicCls, "--bootstrap-server", closed, "--command-config", adminProps, "--list")
	runs := []struct {
		id, what string
		argv     []string
		env      []string
	}{
		{"9a", "`connect-init prepare`, default log level (info)", []string{b.binary, "prepare"}, prepare("info")},
		{"9b", "`connect-init prepare --log-level=debug` (sarama's lines included)", []string{b.binary, "prepare"}, prepare("debug")},
		{"9c", "`kafka-topics --list` (" + topicCls[strings.LastIndex(topicCls, ".")+1:] + ": Kafka's AdminClient, JVM, tools' log level warn), default.api.timeout.ms=" + secs, jvm, os.Environ()},
	}
	for _, r := range runs {
		res, err := timeRun(ctx, r.argv, r.env)
		if err != nil {
			return err
		}
		if res.code == 0 {
			return fmt.Errorf("%s exited 0 against a closed port:\n%s", r.id, tailString(res.out, 2000))
		}
		cpu := (res.user + res.sys).Seconds()
		lines := strings.Count(res.out, "\n")
		perMin := float64(lines) / res.wall.Minutes()
		progress("waiting: %s %.1f s wall, %.2f s CPU (%.2f user, %.2f sys), %d lines", r.id, res.wall.Seconds(), cpu, res.user.Seconds(), res.sys.Seconds(), lines)
		rep.add(r.id, "waiting "+secs+" for a broker that does not answer (closed loopback port): "+r.what, "CPU s",
			[]float64{cpu}, fmt.Sprintf("%.1f s wall, exit %d; %.0f log lines a minute (%d in all); target under 1 s of CPU", res.wall.Seconds(), res.code, perMin, lines))
	}
	return nil
}

// closedLoopbackPort is a loopback address nobody listens on.
func closedLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}
