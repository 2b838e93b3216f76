package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka/kafkalog"
)

// Kind is what a config-topic record is about, from its key prefix.
type Kind string

// Record kinds, named after KafkaConfigBackingStore's key prefixes.
const (
	KindConnector   Kind = "connector"
	KindTask        Kind = "task"
	KindCommit      Kind = "commit"
	KindTargetState Kind = "target-state"
	KindRestart     Kind = "restart"
	KindTaskCount   Kind = "tasks-fencing"
	KindSessionKey  Kind = "session-key"
	KindLogger      Kind = "logger-cluster"
	KindOther       Kind = "other"
)

// ConfigRecord is one record of the config topic, reduced to what names a
// connector.
type ConfigRecord struct {
	Offset int64
	Kind   Kind
	// Connector is the connector the record is about ("" for session-key,
	// logger and unknown keys).
	Connector string
	// Task is the task number of a task record, else -1.
	Task int32
	// Null is true for a null value (a deleted connector's tombstone).
	Null bool
	// TargetState is the state of a target-state record (state.v2, else
	// state), empty otherwise.
	TargetState string
}

// ConfigLog is a config topic as read, end to end.
type ConfigLog struct {
	Topic string
	// End is the offset the read stopped at (the last stable offset, the
	// high watermark without open transactions): what a caught-up worker
	// reports as its config offset.
	End int64
	// Records are in offset order.
	Records []ConfigRecord
	// Configs is each connector's latest configuration ("connector-<name>"
	// records' properties; a null record removes it), as a worker that read
	// to End runs it: the plugins step names what the cluster's connectors
	// load from it, so the group gate's one read serves both.
	Configs map[string]map[string]string
}

// ParseKey classifies a config-topic key the way
// KafkaConfigBackingStore.ConsumeCallback does, in the same order of
// prefixes ("target-state-" before "connector-", "task-" before "commit-").
func ParseKey(key string) (kind Kind, connector string, task int32) {
	task = -1
	switch {
	case strings.HasPrefix(key, "target-state-"):
		return KindTargetState, strings.TrimPrefix(key, "target-state-"), task
	case strings.HasPrefix(key, "connector-"):
		return KindConnector, strings.TrimPrefix(key, "connector-"), task
	case strings.HasPrefix(key, "task-"):
		rest := strings.TrimPrefix(key, "task-")
		i := strings.LastIndexByte(rest, '-')
		if i <= 0 {
			return KindOther, "", task
		}
		n, err := strconv.ParseInt(rest[i+1:], 10, 32)
		if err != nil {
			return KindOther, "", task
		}
		return KindTask, rest[:i], int32(n)
	case strings.HasPrefix(key, "commit-"):
		return KindCommit, strings.TrimPrefix(key, "commit-"), task
	case strings.HasPrefix(key, "restart-connector-"):
		return KindRestart, strings.TrimPrefix(key, "restart-connector-"), task
	case strings.HasPrefix(key, "tasks-fencing-"):
		return KindTaskCount, strings.TrimPrefix(key, "tasks-fencing-"), task
	case key == "session-key":
		return KindSessionKey, "", task
	case strings.HasPrefix(key, "logger-cluster-"):
		return KindLogger, "", task
	}
	return KindOther, "", task
}

// ReadConfig reads the whole config topic (partition 0), committed
// records only: only a worker with exactly.once.source.support=enabled
// writes the config topic transactionally, and such a worker reads it
// read_committed (KafkaConfigBackingStore's consumer: ISOLATION_LEVEL_CONFIG
// = READ_COMMITTED), so an aborted record is never part of any worker's
// config snapshot.
func ReadConfig(ctx context.Context, client sarama.Client, topic string) (*ConfigLog, error) {
	l := &ConfigLog{Topic: topic, Configs: map[string]map[string]string{}}
	end, err := kafkalog.ReadWith(ctx, client, topic, 0, kafkalog.Committed, func(r kafkalog.Record) error {
		kind, conn, task := ParseKey(string(r.Key))
		rec := ConfigRecord{Offset: r.Offset, Kind: kind, Connector: conn, Task: task, Null: r.Value == nil}
		if kind == KindConnector {
			l.applyConnectorConfig(conn, r.Value)
		}
		if kind == KindTargetState && r.Value != nil {
			var v struct {
				State   string `json:"state"`
				StateV2 string `json:"state.v2"`
			}
			if json.Unmarshal(r.Value, &v) == nil {
				rec.TargetState = v.StateV2
				if rec.TargetState == "" {
					rec.TargetState = v.State
				}
			}
		}
		l.Records = append(l.Records, rec)
		return nil
	})
	l.End = end
	if err != nil {
		return l, fmt.Errorf("config topic %q: %w", topic, err)
	}
	return l, nil
}

// applyConnectorConfig records a "connector-<name>" record's
// configuration, as KafkaConfigBackingStore.processConnectorConfigRecord
// does: null removes the connector, a value replaces its configuration. A
// value that does not decode is ignored, as Connect logs and skips it
// ("Invalid connector config").
func (l *ConfigLog) applyConnectorConfig(connector string, value []byte) {
	if value == nil {
		delete(l.Configs, connector)
		return
	}
	var v struct {
		Properties map[string]*string `json:"properties"`
	}
	if json.Unmarshal(value, &v) != nil || v.Properties == nil {
		return
	}
	if l.Configs == nil {
		l.Configs = map[string]map[string]string{}
	}
	cfg := make(map[string]string, len(v.Properties))
	for k, p := range v.Properties {
		if p != nil {
			cfg[k] = *p
		}
	}
	l.Configs[connector] = cfg
}

// DefinedAt returns the connectors a worker that had read the records below
// offset would have in its config snapshot: those whose last
// "connector-<name>" record below offset is not null
// (processConnectorConfigRecord: null removes the connector). A negative
// offset (nothing read) defines nothing. Sorted.
func (l *ConfigLog) DefinedAt(offset int64) []string {
	last := map[string]bool{}
	for _, r := range l.Records {
		if r.Offset >= offset {
			break
		}
		if r.Kind == KindConnector {
			last[r.Connector] = !r.Null
		}
	}
	var out []string
	for c, ok := range last {
		if ok {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// Defined reports whether connector is defined after every record read.
func (l *ConfigLog) Defined(connector string) bool {
	defined := false
	for _, r := range l.Records {
		if r.Kind == KindConnector && r.Connector == connector {
			defined = !r.Null
		}
	}
	return defined
}

// Mentions reports whether any record of the topic, at any offset, names
// connector (its config, tasks, task commit, target state, restart request
// or fencing record). A connector our config topic never mentions cannot
// have been assigned by a leader reading it: Connect's leader assigns only
// the connectors in its config snapshot (IncrementalCooperativeAssignor
// .performTaskAssignment: configSnapshot.connectors(); EagerAssignor
// likewise), and a snapshot is built from these records. Compaction keeps
// the latest record of each key, and a deleted connector's tombstone only
// goes after delete.retention.ms (24h by default), long after the rebalance
// its deletion triggers (DistributedHerder.onConnectorConfigRemove sets
// needsReconfigRebalance) has revoked it everywhere.
func (l *ConfigLog) Mentions(connector string) bool {
	for _, r := range l.Records {
		if r.Connector == connector && r.Kind != KindOther {
			return true
		}
	}
	return false
}

// Counts returns how many records and distinct connectors (ever named) the
// topic holds, for log lines.
func (l *ConfigLog) Counts() (records, connectors int) {
	seen := map[string]bool{}
	for _, r := range l.Records {
		if r.Kind == KindConnector {
			seen[r.Connector] = true
		}
	}
	return len(l.Records), len(seen)
}

// RejoinRecord is the first record at an offset in [from, to) whose
// reading makes a worker of this cluster request a rejoin, or nil. Reading
// committed task configs (a "commit-" record: onTaskConfigUpdate), a
// connector's first definition (onConnectorConfigUpdate for a name not yet
// configured) or its removal (onConnectorConfigRemove) sets
// DistributedHerder's needsReconfigRebalance, and the worker rejoins the
// group with the config offset it then holds. A member still reporting an
// offset at or below such a record has not read it.
func (c *ConfigLog) RejoinRecord(from, to int64) *ConfigRecord {
	if c == nil {
		return nil
	}
	defined := map[string]bool{}
	for i := range c.Records {
		r := &c.Records[i]
		rejoins := false
		switch r.Kind {
		case KindCommit:
			rejoins = true
		case KindConnector:
			rejoins = r.Null == defined[r.Connector] // added, or removed
			defined[r.Connector] = !r.Null
		}
		if rejoins && r.Offset >= from && r.Offset < to {
			return r
		}
	}
	return nil
}
