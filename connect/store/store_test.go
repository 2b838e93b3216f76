package store

import "testing"

func TestParseKey(t *testing.T) {
	// Keys as KafkaConfigBackingStore writes them; task keys split on the
	// last "-" as parseTaskId does.
	cases := []struct {
		key       string
		kind      Kind
		connector string
		task      int32
	}{
		{"connector-my-source", KindConnector, "my-source", -1},
		{"task-my-source-12", KindTask, "my-source", 12},
		{"task-x", KindOther, "", -1},
		{"task-x-y", KindOther, "", -1},
		{"commit-my-source", KindCommit, "my-source", -1},
		{"target-state-connector-x", KindTargetState, "connector-x", -1},
		{"restart-connector-a", KindRestart, "a", -1},
		{"tasks-fencing-a", KindTaskCount, "a", -1},
		{"session-key", KindSessionKey, "", -1},
		{"logger-cluster-org.apache", KindLogger, "", -1},
		{"something-else", KindOther, "", -1},
	}
	for _, c := range cases {
		kind, conn, task := ParseKey(c.key)
		if kind != c.kind || conn != c.connector || task != c.task {
			t.Errorf("ParseKey(%q) = %s %q %d, want %s %q %d", c.key, kind, conn, task, c.kind, c.connector, c.task)
		}
	}
}

func TestDefinedAtAndMentions(t *testing.T) {
	// 0 session key; a at 1-3; b at 4-6; a deleted at 7.
	l := &ConfigLog{End: 8, Records: []ConfigRecord{
		{Offset: 0, Kind: KindSessionKey},
		{Offset: 1, Kind: KindConnector, Connector: "a"}, {Offset: 2, Kind: KindTask, Connector: "a"}, {Offset: 3, Kind: KindCommit, Connector: "a"},
		{Offset: 4, Kind: KindConnector, Connector: "b"}, {Offset: 5, Kind: KindTask, Connector: "b"}, {Offset: 6, Kind: KindCommit, Connector: "b"},
		{Offset: 7, Kind: KindConnector, Connector: "a", Null: true},
	}}
	for _, c := range []struct {
		offset int64
		want   string
	}{{-1, ""}, {1, ""}, {2, "a"}, {5, "a,b"}, {8, "b"}} {
		got := ""
		for i, n := range l.DefinedAt(c.offset) {
			if i > 0 {
				got += ","
			}
			got += n
		}
		if got != c.want {
			t.Errorf("DefinedAt(%d) = %q, want %q", c.offset, got, c.want)
		}
	}
	if l.Defined("a") || !l.Defined("b") {
		t.Error("Defined: a was deleted, b was not")
	}
	if !l.Mentions("a") || !l.Mentions("b") || l.Mentions("c") {
		t.Error("Mentions: a and b, never c")
	}
}

func TestWorkerID(t *testing.T) {
	for url, want := range map[string]string{
		"http://10.0.0.7:8083/": "10.0.0.7:8083",
		"https://w-1.svc:8443/": "w-1.svc:8443",
		"http://[::1]:8083/":    "[::1]:8083",
		"http://no-port/":       "",
		"::not a url":           "",
	} {
		if got := WorkerID(url); got != want {
			t.Errorf("WorkerID(%q) = %q, want %q", url, got, want)
		}
	}
}

func TestRejoinRecord(t *testing.T) {
	log := &ConfigLog{Records: []ConfigRecord{
		{Offset: 0, Kind: KindSessionKey},
		{Offset: 1, Kind: KindConnector, Connector: "a"},
		{Offset: 2, Kind: KindTask, Connector: "a", Task: 0},
		{Offset: 3, Kind: KindCommit, Connector: "a"},
		{Offset: 4, Kind: KindConnector, Connector: "a"}, // an update: no rejoin
		{Offset: 5, Kind: KindTargetState, Connector: "a"},
		{Offset: 6, Kind: KindConnector, Connector: "a", Null: true}, // removed
	}, End: 7}
	for _, c := range []struct {
		from, to int64
		want     int64 // -1: none
	}{{0, 7, 1}, {2, 7, 3}, {4, 6, -1}, {4, 7, 6}, {7, 9, -1}} {
		got := log.RejoinRecord(c.from, c.to)
		if (got == nil) != (c.want < 0) || got != nil && got.Offset != c.want {
			t.Errorf("RejoinRecord(%d, %d) = %+v, want offset %d", c.from, c.to, got, c.want)
		}
	}
}

// TestConnectorConfigs follows connector records as Connect does: the
// latest value wins, null removes the connector, a value that is not
// Connect's {"properties":{...}} is skipped, and a null property is left
// out.
func TestConnectorConfigs(t *testing.T) {
	l := &ConfigLog{}
	l.applyConnectorConfig("a", []byte(`{"properties":{"connector.class":"FileStreamSource","topic":"x"}}`))
	l.applyConnectorConfig("b", []byte(`{"properties":{"connector.class":"org.example.B","transforms":null}}`))
	l.applyConnectorConfig("a", []byte(`{"properties":{"connector.class":"FileStreamSink"}}`))
	l.applyConnectorConfig("b", []byte(`not json`))
	l.applyConnectorConfig("c", []byte(`{"properties":{"connector.class":"C"}}`))
	l.applyConnectorConfig("c", nil)
	if len(l.Configs) != 2 || l.Configs["a"]["connector.class"] != "FileStreamSink" || len(l.Configs["a"]) != 1 {
		t.Fatalf("configs %v", l.Configs)
	}
	if b := l.Configs["b"]; b["connector.class"] != "org.example.B" || len(b) != 1 {
		t.Errorf("b: %v (the undecodable record must not replace it; a null property is left out)", b)
	}
}
