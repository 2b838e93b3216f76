package gate

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clocktest"
	"github.com/connect-init/connect-init/kafka"
)

// Waiting costs nothing (issue 48): the topics step's own wait loops (the
// others are lookAgain's, TestLookAgainPace), each driven through two
// hours of injected time by a cluster whose answer stays "not yet".

// topicsHorizon is how long each loop waits here.
const topicsHorizon = 2 * time.Hour

// judgeFrom: an internal topic with a partition that never gets a leader
// is judged again every 150-250 ms (jittered 200 ms), with one wait line
// every 5 s, until the deadline; each judgement is one DescribeTopics (and
// one DescribeConfigs).
func TestTopicsOfflinePartitionWaitPace(t *testing.T) {
	offline := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, -1)}
	var configReads atomic.Int64
	admin := &topicAdmin{describes: [][]*sarama.TopicMetadata{offline}, configs: func(names []string) ([]*sarama.ConfigResourceResult, error) {
		configReads.Add(1)
		return compactConfigs(names)
	}}
	least := 200 * time.Millisecond * 3 / 4
	limit := int(topicsHorizon/least) + 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(topicsHorizon, 2*limit, cancel)
	logs := &clocktest.Logs{}
	g := &TopicGate{Admin: admin, Specs: testSpecs, Log: logs.Logger(), Clock: clk, Create: true}
	if _, err := g.judgeUntilSettled(ctx, clk, mustDescribe(t, g), nil); err == nil {
		t.Fatal("judgeUntilSettled: no error with a partition that never gets a leader")
	}
	clk.AssertReached(t)
	clk.AssertPace(t, least, int(time.Minute/least)+1)
	if n := admin.looks(); n > limit+1 {
		t.Errorf("%d DescribeTopics in %v, want at most %d", n, topicsHorizon, limit+1)
	}
	if n := int(configReads.Load()); n > limit+1 {
		t.Errorf("%d DescribeConfigs in %v, want at most %d", n, topicsHorizon, limit+1)
	}
	if n, most := logs.Count("waiting for internal topics"), int(topicsHorizon/waitLineEvery)+2; n > most || n == 0 {
		t.Errorf("%d wait lines in %v, want between 1 and %d (one every 5 s)", n, topicsHorizon, most)
	}
	if n, most := logs.Total(), 2*(int(topicsHorizon/waitLineEvery)+2); n > most {
		t.Errorf("%d log lines in all in %v, want at most %d", n, topicsHorizon, most)
	}
	t.Logf("%d looks, %d pauses, %d wait lines, %d lines in all in %v of injected time", admin.looks(), clk.Pauses(),
		logs.Count("waiting for internal topics"), logs.Total(), clk.Elapsed())
}

// describeTopicConfigs: a broker that answers every topic's settings with
// a "not yet" code (a topic just created, unknown to the answering broker)
// is asked again every 75-125 ms (jittered 100 ms), with one wait line
// every 5 s.
func TestTopicsSettingsWaitPace(t *testing.T) {
	var reads atomic.Int64
	admin := &topicAdmin{describes: [][]*sarama.TopicMetadata{{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}},
		configs: func(names []string) ([]*sarama.ConfigResourceResult, error) {
			reads.Add(1)
			var out []*sarama.ConfigResourceResult
			for _, n := range names {
				out = append(out, &sarama.ConfigResourceResult{Name: n, ErrorCode: sarama.ErrUnknownTopicOrPartition})
			}
			return out, nil
		}}
	if !kafka.CodeNotYet(sarama.ErrUnknownTopicOrPartition) {
		t.Fatal("UNKNOWN_TOPIC_OR_PARTITION is not \"not yet\": this test needs a code the loop waits out")
	}
	least := 100 * time.Millisecond * 3 / 4
	limit := int(topicsHorizon/least) + 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(topicsHorizon, 2*limit, cancel)
	logs := &clocktest.Logs{}
	g := &TopicGate{Admin: admin, Specs: testSpecs, Log: logs.Logger(), Clock: clk, Create: true}
	out := g.describeTopicConfigs(ctx, mustDescribe(t, g))
	if out["c"].err == "" {
		t.Fatalf("describeTopicConfigs = %+v, want the last \"not yet\" answer at the deadline", out)
	}
	clk.AssertReached(t)
	clk.AssertPace(t, least, int(time.Minute/least)+1)
	if n := int(reads.Load()); n > limit+1 {
		t.Errorf("%d DescribeConfigs in %v, want at most %d", n, topicsHorizon, limit+1)
	}
	const line = "waiting for the cluster to finish creating or moving"
	if n, most := logs.Count(line), int(topicsHorizon/waitLineEvery)+2; n > most || n == 0 {
		t.Errorf("%d wait lines in %v, want between 1 and %d (one every 5 s)", n, topicsHorizon, most)
	}
	if n := logs.Total(); n > logs.Count(line)+2 {
		t.Errorf("%d log lines in all, %d of them wait lines: the loop logs more than its wait line", n, logs.Count(line))
	}
	t.Logf("%d reads, %d wait lines in %v of injected time", reads.Load(), logs.Count(line), clk.Elapsed())
}
