package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The tracker over a Kafka client (saramaOffsetsLog), on an in-process
// Kafka (kfake) whose __consumer_offsets partition holds records built by
// Kafka's schema: the generation is read across looks, and a broker that
// refuses the fetch (TOPIC_AUTHORIZATION_FAILED, the missing ACL) makes
// the look count its window and name the right to grant. The real
// broker's refusal is TestDoctorWatchCountsGenerations (cmd/connect-init).
func TestGenerationOverAKafkaClient(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, consumerOffsets))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	write := func(group string, gen int32) {
		t.Helper()
		r := &kgo.Record{Topic: consumerOffsets, Partition: 2, Key: groupKey(group), Value: groupValue(3, gen, 2)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	write("g", 4)
	write("other", 9)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	log := saramaOffsetsLog{client: client, partition: 2}
	tr := NewGenerationTracker()
	if gl := tr.Observe(ctx, log, "g", 2, 0); gl.Source != SourceGeneration || gl.Generation != 4 || gl.Added != 0 {
		t.Fatalf("first look: %+v (%s)", gl, gl.Err)
	}
	write("g", 5)
	write("g", 6)
	if gl := tr.Observe(ctx, log, "g", 2, 0); gl.Generation != 6 || gl.Added != 2 {
		t.Errorf("second look: %+v (%s), want generation 6, 2 added", gl, gl.Err)
	}

	c.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		fr := req.(*kmsg.FetchRequest)
		resp := fr.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range fr.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset, sp.RecordBatches = -1, -1, -1, []byte{}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	write("g", 7)
	gl := tr.Observe(ctx, log, "g", 2, 0)
	if gl.Source != SourceWindow || !gl.Changed || !strings.Contains(gl.Err, "grant it Read and Describe on the topic __consumer_offsets") {
		t.Errorf("refused: %+v", gl)
	}
}
