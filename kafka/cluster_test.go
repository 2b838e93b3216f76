package kafka

import (
	"testing"

	"github.com/IBM/sarama"
)

// The mode from ApiVersions: KRaft finalizes metadata.version, ZooKeeper
// mode finalizes none; an answer older than v3 cannot say.
func TestModeOf(t *testing.T) {
	kraft := &sarama.ApiVersionsResponse{Version: 3, FinalizedFeatures: []sarama.FinalizedFeatureKey{{Name: "metadata.version", MaxVersionLevel: 21, MinVersionLevel: 21}}}
	zk := &sarama.ApiVersionsResponse{Version: 3}
	old := &sarama.ApiVersionsResponse{Version: 2}
	for _, c := range []struct {
		resp *sarama.ApiVersionsResponse
		want Mode
	}{{kraft, ModeKRaft}, {zk, ModeZooKeeper}, {old, ModeUnknown}, {nil, ModeUnknown}} {
		if got := ModeOf(c.resp); got != c.want {
			t.Errorf("ModeOf(%+v) = %q, want %q", c.resp, got, c.want)
		}
	}
}
