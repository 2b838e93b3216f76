package repair

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ConsumerOffsets is the broker's offsets topic, the one incident 2 left
// with a single replica per partition.
const ConsumerOffsets = "__consumer_offsets"

// InternalTopic is one of Connect's internal topics as the worker is
// configured for it: its role (config, offset, status) and the configured
// replication factor (-1: the brokers' default.replication.factor).
type InternalTopic struct {
	Name              string
	Role              string
	ReplicationFactor int
}

// Registered is a broker the cluster lists, as the brokers gate's probe
// found it: Up when it answered on its advertised listener.
type Registered struct {
	ID   int32
	Addr string
	Up   bool
	// Err is why it did not answer.
	Err string
}

// Absent is a broker the cluster knows of that is not live; ID is -1 when
// the cluster knows it only by address.
type Absent struct {
	ID   int32
	Name string
}

// KnownBrokers are the brokers a default target is computed from: how many
// are live, how many the cluster knows by id (live, and fenced or gone),
// and those known by id that are not live.
type KnownBrokers struct {
	Live, Known int
	Absent      []string
}

// BrokersDownError is a registered broker that does not answer: its
// replicas cannot be read, and a target counted on it would be short, so
// repair refuses before planning.
type BrokersDownError struct {
	Down []string
}

func (e *BrokersDownError) Error() string { return strings.Join(e.Down, "; ") }

// CountBrokers is the brokers a repair plans over, from the probe of the
// registered brokers and the brokers known but absent. A registered broker
// that does not answer is a BrokersDownError naming each.
func CountBrokers(registered []Registered, absent []Absent) (KnownBrokers, error) {
	var down []string
	for _, b := range registered {
		if !b.Up {
			down = append(down, fmt.Sprintf("broker %d at %s is registered but does not answer (%s)", b.ID, b.Addr, b.Err))
		}
	}
	if len(down) > 0 {
		return KnownBrokers{}, &BrokersDownError{Down: down}
	}
	known := KnownBrokers{Live: len(registered), Known: len(registered)}
	for _, a := range absent {
		if a.ID >= 0 {
			known.Known++
			known.Absent = append(known.Absent, a.Name)
		}
	}
	return known, nil
}

// TargetSpec is what a repair is asked for: which topics, and the target
// replication factor when one was asked for explicitly.
type TargetSpec struct {
	// Offsets includes __consumer_offsets.
	Offsets bool
	// Internal are Connect's internal topics to include.
	Internal []InternalTopic
	// ReplicationFactor is --replication-factor; 0 follows each topic's
	// configuration.
	ReplicationFactor int
	Brokers           KnownBrokers
}

// Targets reads the target replication factor of each topic to repair:
// the explicit factor, else the broker's offsets.topic.replication.factor
// for __consumer_offsets (raised to min(3, brokers) when it is 1 on a
// multi-broker cluster: that setting is incident 2's cause) and the
// configured factor for Connect's topics (-1: the broker's
// default.replication.factor).
func Targets(ctx context.Context, c Cluster, spec TargetSpec) ([]TopicRequest, error) {
	st, err := c.Describe(ctx, nil)
	if err != nil {
		return nil, err
	}
	if len(st.Brokers) == 0 {
		return nil, errors.New("the cluster lists no live broker")
	}
	defaults := brokerDefaults{cluster: c, id: st.Brokers[0].ID}
	var out []TopicRequest
	if spec.Offsets {
		t, err := offsetsTarget(spec, len(st.Brokers), defaults)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	ts, err := internalTargets(spec, defaults)
	if err != nil {
		return nil, err
	}
	return append(out, ts...), nil
}

// brokerDefaults reads the cluster's default settings from one live
// broker, for the targets that follow the brokers' configuration.
type brokerDefaults struct {
	cluster Cluster
	id      int32
}

// number is the broker's setting name, which must be a whole number.
func (b brokerDefaults) number(name string) (int, error) {
	v, err := b.cluster.BrokerSetting(b.id, name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("broker %d reports %s=%q, not a number", b.id, name, v)
	}
	return n, nil
}

// offsetsTarget is the request for __consumer_offsets: the explicit factor,
// else offsets.topic.replication.factor, raised towards min(3, brokers
// known) when it is 1 on a multi-broker cluster, and no higher than the
// live brokers allow (Wanted then says what it would have been).
func offsetsTarget(spec TargetSpec, live int, defaults brokerDefaults) (TopicRequest, error) {
	rf, brokers := spec.ReplicationFactor, spec.Brokers
	t := TopicRequest{Name: ConsumerOffsets, TargetRF: rf, Why: fmt.Sprintf("--replication-factor %d", rf)}
	if rf != 0 {
		return t, nil
	}
	n, err := defaults.number("offsets.topic.replication.factor")
	if err != nil {
		return TopicRequest{}, err
	}
	t.TargetRF, t.Why = n, fmt.Sprintf("offsets.topic.replication.factor=%d on the brokers", n)
	if n < 2 && brokers.Known >= 2 {
		want := min(3, brokers.Known)
		t.TargetRF = min(want, live)
		t.Why = fmt.Sprintf("offsets.topic.replication.factor=%d on the brokers, too few for a %d-broker cluster (a single-replica __consumer_offsets); raising to %d; set offsets.topic.replication.factor=%d on the brokers too",
			n, brokers.Known, t.TargetRF, want)
		if t.TargetRF < want {
			t.Wanted = want
			t.Why += fmt.Sprintf("; only %d of the %d brokers are live (%s), so not to %d", live, brokers.Known, strings.Join(brokers.Absent, ", "), want)
		}
	}
	return t, nil
}

// internalTargets are the requests for Connect's internal topics: the
// explicit factor, else each topic's configured factor, and the brokers'
// default.replication.factor for a configured -1.
func internalTargets(spec TargetSpec, defaults brokerDefaults) ([]TopicRequest, error) {
	rf := spec.ReplicationFactor
	var out []TopicRequest
	for _, it := range spec.Internal {
		t := TopicRequest{Name: it.Name, TargetRF: rf, Why: fmt.Sprintf("--replication-factor %d", rf)}
		if rf == 0 {
			t.TargetRF = it.ReplicationFactor
			t.Why = fmt.Sprintf("%s.storage.replication.factor=%d", it.Role, it.ReplicationFactor)
			if it.ReplicationFactor < 1 {
				n, err := defaults.number("default.replication.factor")
				if err != nil {
					return nil, err
				}
				t.TargetRF = n
				t.Why = fmt.Sprintf("%s.storage.replication.factor=-1, default.replication.factor=%d on the brokers", it.Role, n)
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// ShortTargets are the requests aiming below the factor they wanted (too
// few brokers live), unless the factor was asked for explicitly: such a
// plan is printed, and not carried out.
func ShortTargets(reqs []TopicRequest, explicit bool) []string {
	var out []string
	for _, t := range reqs {
		if t.Short(explicit) {
			out = append(out, fmt.Sprintf("%s to %d replicas, not %d", t.Name, t.TargetRF, t.Wanted))
		}
	}
	return out
}

// Short reports whether the request aims below the factor it wanted,
// unless the factor was asked for explicitly.
func (t TopicRequest) Short(explicit bool) bool { return !explicit && t.Wanted > t.TargetRF }

// BelowWantedError refuses an --execute whose plan aims below the default
// replication factor: the missing brokers should be started first, or the
// lower factor asked for explicitly.
type BelowWantedError struct {
	Short []string
}

func (e *BelowWantedError) Error() string {
	return "the plan aims below the default replication factor: " + strings.Join(e.Short, "; ")
}

// MayExecute is whether a repair asked to execute may carry its plan out:
// not when a target is short (ShortTargets).
func MayExecute(execute bool, short []string) bool { return execute && len(short) == 0 }

// RefuseShort is the refusal of an --execute that was held back because
// its targets are short (MayExecute false), after the plan was made: a
// BelowWantedError when there was something to do, nil when the plan was
// empty, and nil when planning itself failed (that error is the one to
// report).
func RefuseShort(execute bool, short []string, res Result, runErr error) error {
	if execute && len(short) > 0 && runErr == nil && (!res.Plan.Empty() || len(res.Plan.Blocked) > 0) {
		return &BelowWantedError{Short: short}
	}
	return nil
}
