package repair

import (
	"testing"

	"github.com/IBM/sarama"
)

// blockError reads the per-partition error sarama decodes into unexported
// fields; if sarama renames them, this test fails instead of Reassign
// silently taking a refused partition for accepted.
func TestBlockErrorReadsSaramaFields(t *testing.T) {
	rsp := &sarama.AlterPartitionReassignmentsResponse{}
	msg := "replica 7 is not live"
	rsp.AddError("t", 3, sarama.ErrReplicaNotAvailable, &msg)
	rsp.AddError("t", 4, sarama.ErrNoError, nil)
	if code, m := blockError(rsp.Errors["t"][3]); code != sarama.ErrReplicaNotAvailable || m != ": replica 7 is not live" {
		t.Fatalf("partition 3: %v %q", code, m)
	}
	if code, m := blockError(rsp.Errors["t"][4]); code != sarama.ErrNoError || m != "" {
		t.Fatalf("partition 4: %v %q", code, m)
	}
	if code, _ := blockError(nil); code != sarama.ErrNoError {
		t.Fatalf("nil: %v", code)
	}
}
