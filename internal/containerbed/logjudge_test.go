package containerbed

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// connectInitLog renders events as connect-init does (cmd/connect-init
// newLogger: slog's text or JSON handler with component=connect-init).
func connectInitLog(json bool, events ...[]any) string {
	var b bytes.Buffer
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if json {
		h = slog.NewJSONHandler(&b, nil)
	}
	log := slog.New(h).With("component", "connect-init")
	for _, e := range events {
		log.Info(e[0].(string), e[1:]...)
	}
	return b.String()
}

// Lines of a container's log from a run of TestSwarmReplicasBehindOneName
// (2026-12-04), kept as they were written.
const (
	realSkipped = `time=2026-12-04T15:28:51.890Z level=INFO msg="gate skipped" component=connect-init gate=lock reason="CONNECT_INIT_LOCK=false"`
	realRefused = `time=2026-12-04T15:29:11.890Z level=ERROR msg="REST peer check failed" component=connect-init url=http://replicas-dnsrr-true:8083/ source=own host=replicas-dnsrr-true resolved=10.0.1.6,10.0.1.7,10.0.1.8,10.0.1.9 status=other-host error="our advertised URL http://replicas-dnsrr-true:8083/ was answered by another host" fix="set CONNECT_REST_ADVERTISED_HOST_NAME"`
	jettyLine   = `[2026-12-04 15:30:02,123] INFO 10.0.1.7 - - [04/Dec/2026:15:30:02 +0000] "GET /connectors HTTP/1.1" 200 2 "-" "Go-http-client/1.1" 3 (org.apache.kafka.connect.runtime.rest.RestServer:62)`
)

func TestParseEventRealLines(t *testing.T) {
	e, ok := ParseEvent(realRefused)
	if !ok || e["msg"] != "REST peer check failed" || e["source"] != "own" || e["status"] != "other-host" ||
		e["resolved"] != "10.0.1.6,10.0.1.7,10.0.1.8,10.0.1.9" || !strings.HasPrefix(e["error"], "our advertised URL") {
		t.Fatalf("%v %v", ok, e)
	}
	if e, ok := ParseEvent(realSkipped); !ok || e["reason"] != "CONNECT_INIT_LOCK=false" {
		t.Fatalf("%v %v", ok, e)
	}
	if _, ok := ParseEvent(jettyLine); ok {
		t.Fatal("a worker's log line read as connect-init's")
	}
}

func TestOwnProof(t *testing.T) {
	pass := func(resolved string) []any {
		return []any{"REST peer ok", "url", "http://connect:8083/", "source", "own", "resolved", resolved, "status", "self", "settled", "5s"}
	}
	// The pass of the loaded run of issue 41 (before the settle window).
	unsettled := []any{"REST peer ok", "url", "http://replicas-dnsrr-true-8:8083/", "source", "own", "resolved", "10.0.1.63", "status", "self"}
	start := []any{"starting the worker", "command", "/etc/confluent/docker/run"}
	workerMode := []any{"startup lock mode", "mode", "worker"}
	join := []any{"the worker joins its group now"}
	for _, json := range []bool{false, true} {
		cases := []struct {
			name            string
			logs            string
			started, proven bool
		}{
			{"alone", connectInitLog(json, pass("10.0.1.6"), start) + jettyLine, true, true},
			{"round robin", connectInitLog(json, pass("10.0.1.6,10.0.1.7"), start), true, false},
			{"alone, not settled", connectInitLog(json, unsettled, start), true, false},
			// The assertion the judge exists for: a start without a pass.
			{"no pass", realSkipped + "\n" + connectInitLog(json, start) + jettyLine, true, false},
			{"pass after the exec", connectInitLog(json, start, pass("10.0.1.6")), true, false},
			{"member pass only", connectInitLog(json, []any{"REST peer ok", "url", "http://b:8083/", "source", "member", "resolved", "10.0.1.9", "status", "ok"}, start), true, false},
			{"refused", realSkipped + "\n" + realRefused + "\n", false, false},
			// The in-worker lock: the lock's child runs the peers step
			// after the exec, and the worker joins when it says so.
			{"in-worker", connectInitLog(json, workerMode, start, pass("10.0.1.6"), join), true, true},
			{"in-worker, no pass before the join", connectInitLog(json, workerMode, start, join, pass("10.0.1.6")), true, false},
		}
		for _, c := range cases {
			if got := Started(c.logs); got != c.started {
				t.Errorf("json=%v %s: started %v", json, c.name, got)
			}
			if _, got := ProvenAlone(c.logs); got != c.proven {
				t.Errorf("json=%v %s: proven %v", json, c.name, got)
			}
		}
	}
}

func TestConnectInitPart(t *testing.T) {
	logs := realSkipped + "\n" + jettyLine + "\n" + connectInitLog(false, []any{"starting the worker"}) + jettyLine + "\n" +
		connectInitLog(false, []any{"apply child done"})
	part := ConnectInitPart(logs)
	if !strings.Contains(part, `gate=lock`) || !strings.Contains(part, "starting the worker") {
		t.Fatalf("part lacks connect-init's lines:\n%s", part)
	}
	if strings.Contains(part, "RestServer") || strings.Contains(part, "apply child done") {
		t.Fatalf("part has lines that are not connect-init's before the exec:\n%s", part)
	}
}
