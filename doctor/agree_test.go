package doctor

import (
	"errors"
	"slices"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
)

// ruleIDs are the ids the topics and coordinator gates judge.
var ruleIDs = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range checks.TopicChecks() {
		m[c.ID] = true
	}
	for _, c := range checks.CoordinatorChecks() {
		m[c.ID] = true
	}
	return m
}()

func keys(rs []checks.Result, sev checks.Severity) []string {
	var out []string
	for _, r := range rs {
		if ruleIDs[r.ID] && r.Severity == sev {
			out = append(out, r.ID+" "+r.Subject)
		}
	}
	slices.Sort(out)
	return out
}

// The topics and coordinator gates and doctor judge one snapshot alike:
// the gate fails exactly when doctor has an error finding for their rules,
// and both name the same (id, subject) errors and warnings.
func TestGatesAndDoctorAgree(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *Snapshot)
		fails  bool
	}{
		{"healthy", func(*Snapshot) {}, false},
		{"config topic partitions, delete policy", func(s *Snapshot) {
			s.Topics.Topics[0].Partitions = 3
			s.Topics.Topics[2].CleanupPolicy = "delete"
		}, true},
		{"empty cleanup.policy", func(s *Snapshot) { s.Topics.Topics[1].CleanupPolicy = "" }, true},
		{"settings of one topic unreadable", func(s *Snapshot) {
			s.Topics.Topics[1].CleanupPolicy, s.Topics.Topics[1].MinInsyncReplicas = "", ""
			s.Topics.Topics[1].ConfigError = "TOPIC_AUTHORIZATION_FAILED"
		}, true},
		{"offline partition", func(s *Snapshot) { s.Topics.Topics[2].Offline = []int32{0} }, true},
		{"under-replicated, low replication, min ISR", func(s *Snapshot) {
			s.Topics.Topics[1].UnderReplicated = []int32{4}
			s.Topics.Topics[2].ReplicationFactor = 1
			s.Topics.Topics[0].MinInsyncReplicas = "3"
		}, false},
		{"missing topics on a fresh cluster", func(s *Snapshot) {
			for i := range s.Topics.Topics {
				s.Topics.Topics[i] = gate.TopicResult{Role: s.Topics.Topics[i].Role, Name: s.Topics.Topics[i].Name, Outcome: gate.TopicMissing}
			}
			s.Group, s.Peers = nil, nil
		}, false},
		{"single-replica coordinator partition", func(s *Snapshot) {
			s.Coordinator.Replicas, s.Coordinator.ISR = []int32{1}, []int32{1}
		}, false},
		{"single-replica coordinator partition, strict", func(s *Snapshot) {
			s.Coordinator.ISR, s.Strict = []int32{1}, true
		}, true},
		{"no coordinator", func(s *Snapshot) {
			s.Coordinator = &gate.CoordinatorReport{GroupID: s.GroupID, CoordinatorID: -1, Partition: -1, FindError: "coordinator not available"}
			s.Group, s.Peers = nil, nil
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := healthy()
			c.mutate(s)

			// The gates' verdicts, by the functions the gates decide with.
			topicErr := s.Topics.Judge(s.Specs)
			coordErr := s.Coordinator.Judge(s.Strict)
			var gateChecks []checks.Result
			for _, tr := range s.Topics.Topics {
				gateChecks = append(gateChecks, tr.Checks...)
			}
			gateChecks = append(gateChecks, s.Coordinator.Checks...)
			gateFails := topicErr != nil || coordErr != nil
			for _, err := range []error{topicErr, coordErr} {
				var ge *gate.GateError
				if err != nil && !errors.As(err, &ge) {
					t.Fatalf("gate error %v is not a *GateError", err)
				}
			}

			fs := Diagnose(s)
			doctorFails := len(keys(fs, checks.Error)) > 0
			if gateFails != c.fails || doctorFails != c.fails {
				t.Fatalf("gate fails %v (%v, %v), doctor fails %v (%+v); want both %v", gateFails, topicErr, coordErr, doctorFails, fs, c.fails)
			}
			for _, sev := range []checks.Severity{checks.Error, checks.Warning, checks.Info} {
				if g, d := keys(gateChecks, sev), keys(fs, sev); !slices.Equal(g, d) {
					t.Errorf("%s: gate %v, doctor %v", sev, g, d)
				}
			}
		})
	}
}
