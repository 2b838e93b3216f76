package proto

import (
	"fmt"
	"strconv"
)

// TaskID names one task of a connector, as Connect's ConnectorTaskId does.
type TaskID struct {
	// Connector is the connector's name.
	Connector string
	// Task is the task number, from 0. [ConnectorTask] (-1) is not a task:
	// it stands for the connector itself and is decoded into
	// Assignment.Connectors instead.
	Task int32
}

// String formats the id as Connect logs it: "<connector>-<task>".
func (t TaskID) String() string { return t.Connector + "-" + strconv.FormatInt(int64(t.Task), 10) }

// Assignment is what the group leader hands each Connect worker in SyncGroup
// (and what a v1/v2 worker echoes back as its previous allocation in its
// member metadata). For the identity gate the interesting fields are Leader,
// LeaderURL and ConfigOffset: every worker refuses to start work until its own
// config topic has been read exactly up to ConfigOffset.
//
// Under the eager protocol (v0) Connectors/Tasks are the worker's whole
// assignment. Under the cooperative protocols (v1, v2) the leader sends only
// the newly assigned connectors and tasks plus the revoked ones; the worker
// adds the rest from its previous assignment, and the merged result is what
// it later reports as its allocation in MemberMetadata.
type Assignment struct {
	// Version is the protocol version from the header (0, 1 or 2; higher
	// values are parsed as v1, as Kafka does).
	Version int16
	// Error is [AssignmentNoError] or [AssignmentConfigMismatch].
	Error int16
	// Leader is the group member id of the leader that computed this
	// assignment.
	Leader string
	// LeaderURL is the leader's advertised REST URL; followers forward
	// requests there.
	LeaderURL string
	// ConfigOffset is the config-topic offset the assignment was computed at:
	// the maximum offset any member reported when it joined (see the package
	// documentation for what an offset means).
	ConfigOffset int64
	// Connectors are the connector instances assigned (task number -1 on the
	// wire), in wire order.
	Connectors []string
	// Tasks are the tasks assigned, in wire order.
	Tasks []TaskID
	// RevokedConnectors are connectors the worker must stop (v1+).
	RevokedConnectors []string
	// RevokedTasks are tasks the worker must stop (v1+).
	RevokedTasks []TaskID
	// Delay is the scheduled rebalance delay in milliseconds (v1+), while a
	// departed worker's work is held back for it.
	Delay int32
}

// DecodeAssignment decodes a Connect assignment of any protocol version, as
// a worker's WorkerCoordinator does (IncrementalCooperativeConnectProtocol
// .deserializeAssignment, used for v0 too): the header, then Error, Leader,
// LeaderUrl and ConfigOffset, which must be present, then the optional
// Assignment, Revoked and Delay, which default to empty/empty/0 when the
// bytes end before them. A null Assignment or Revoked array decodes as
// empty. Empty input returns an error wrapping [ErrEmpty] (the member has no
// assignment yet, or the group is not Stable); anything else that does not
// parse wraps [ErrMalformed].
func DecodeAssignment(b []byte) (Assignment, error) {
	if len(b) == 0 {
		return Assignment{}, fmt.Errorf("decoding Connect assignment: %w", ErrEmpty)
	}
	r := &reader{b: b}
	a, err := decodeAssignment(r)
	if err != nil {
		return Assignment{}, fmt.Errorf("decoding Connect assignment: %w", err)
	}
	return a, nil
}

func decodeAssignment(r *reader) (Assignment, error) {
	var a Assignment
	var err error
	if a.Version, err = r.int16("version"); err != nil {
		return Assignment{}, err
	}
	if a.Version < 0 {
		return Assignment{}, r.fail("version", "unsupported Connect protocol version %d", a.Version)
	}
	if a.Error, err = r.int16("error"); err != nil {
		return Assignment{}, err
	}
	if a.Leader, err = r.string("leader"); err != nil {
		return Assignment{}, err
	}
	if a.LeaderURL, err = r.string("leader-url"); err != nil {
		return Assignment{}, err
	}
	if a.ConfigOffset, err = r.int64("config-offset"); err != nil {
		return Assignment{}, err
	}
	// ASSIGNMENT_V1 tolerates missing trailing fields: a field is read only
	// if any byte is left, else it takes its default.
	if r.remaining() > 0 {
		if a.Connectors, a.Tasks, err = decodeConnectorAssignments(r, "assignment"); err != nil {
			return Assignment{}, err
		}
	}
	if r.remaining() > 0 {
		if a.RevokedConnectors, a.RevokedTasks, err = decodeConnectorAssignments(r, "revoked"); err != nil {
			return Assignment{}, err
		}
	}
	if r.remaining() > 0 {
		if a.Delay, err = r.int32("delay"); err != nil {
			return Assignment{}, err
		}
	}
	return a, nil
}

// decodeConnectorAssignments reads a nullable ARRAY of {Connector STRING;
// Tasks ARRAY of INT32} and splits it the way ExtendedAssignment does: task
// -1 lists the connector, any other number a task.
func decodeConnectorAssignments(r *reader, field string) (connectors []string, tasks []TaskID, err error) {
	n, _, err := r.arrayLen(field, true)
	if err != nil {
		return nil, nil, err
	}
	for range n {
		name, err := r.string(field + ".connector")
		if err != nil {
			return nil, nil, err
		}
		m, _, err := r.arrayLen(field+".tasks", false)
		if err != nil {
			return nil, nil, err
		}
		for range m {
			t, err := r.int32(field + ".tasks")
			if err != nil {
				return nil, nil, err
			}
			if t == ConnectorTask {
				connectors = append(connectors, name)
			} else {
				tasks = append(tasks, TaskID{Connector: name, Task: t})
			}
		}
	}
	return connectors, tasks, nil
}

// Encode serializes the assignment as Connect writes it, so fakes can play
// a Connect leader or member. Under Version 0 it writes the eager layout
// (ConnectProtocol.serializeAssignment: no Revoked, no Delay) unless Revoked
// or Delay are set; from Version 1 on it always writes all fields. Connector
// entries are grouped like Kafka's asMap: one entry per connector in order of
// first appearance, connectors (task -1) before tasks. Unlike Kafka it does
// not drop duplicate connector names. A TaskID with Task -1 would decode as a
// connector. It panics on a string longer than 32767 bytes, which Kafka
// cannot encode either.
func (a Assignment) Encode() []byte {
	w := &writer{}
	a.encode(w)
	return w.b
}

func (a Assignment) encode(w *writer) {
	w.int16(a.Version)
	w.int16(a.Error)
	w.string("leader", a.Leader)
	w.string("leader-url", a.LeaderURL)
	w.int64(a.ConfigOffset)
	encodeConnectorAssignments(w, "assignment", a.Connectors, a.Tasks)
	if a.Version >= VersionCompatible || len(a.RevokedConnectors) > 0 || len(a.RevokedTasks) > 0 || a.Delay != 0 {
		encodeConnectorAssignments(w, "revoked", a.RevokedConnectors, a.RevokedTasks)
		w.int32(a.Delay)
	}
}

func encodeConnectorAssignments(w *writer, field string, connectors []string, tasks []TaskID) {
	var order []string
	byName := map[string][]int32{}
	add := func(name string, task int32) {
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], task)
	}
	for _, c := range connectors {
		add(c, ConnectorTask)
	}
	for _, t := range tasks {
		add(t.Connector, t.Task)
	}
	w.arrayLen(field, len(order))
	for _, name := range order {
		w.string(field+".connector", name)
		w.arrayLen(field+".tasks", len(byName[name]))
		for _, t := range byName[name] {
			w.int32(t)
		}
	}
}

// CaughtUp reports whether a member that joined with md and was handed a
// is caught up with its config topic: the assignment carries no error and
// is at the config offset the member reported. Such a member read the
// config topic to the leader's offset before it joined, so the loop of
// incident 1 ("does not match group assignment ... Forcing rebalance")
// is not in progress for it (DistributedHerder.handleRebalanceCompleted).
// The one home of the rule for the startup lock's readiness and the open
// group.
func CaughtUp(md *MemberMetadata, a *Assignment) bool {
	return md != nil && a != nil && a.Error == AssignmentNoError && md.ConfigOffset == a.ConfigOffset
}
