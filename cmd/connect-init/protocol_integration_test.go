//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/internal/testbed"
)

// TestConnectProtocolBytesFromRealWorkers decodes the group metadata and
// assignments real Connect workers exchange (sessioned, the default, and
// eager) and checks them against what the workers are known to be: their
// URLs, their config topic's end offset, the connector they run. With
// CITEST_CAPTURE_DIR set it also writes the bytes as capture files
// for connect/proto's unit tests (testdata/captures).
func TestConnectProtocolBytesFromRealWorkers(t *testing.T) {
	for _, c := range []struct {
		protocol, connectProtocol string
		workers                   int
	}{
		{"sessioned", "sessioned", 2},
		{"default", "eager", 1},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			group := uniqueGroup(t, "proto-"+c.connectProtocol)
			var workers []*testbed.Worker
			var urls []string
			for i := 0; i < c.workers; i++ {
				props, err := cluster.WorkerProps(merge(group, map[string]string{"connect.protocol": c.connectProtocol}))
				if err != nil {
					t.Fatal(err)
				}
				w := startTestWorker(t, fmt.Sprintf("%s-%d", group["group.id"], i), props)
				spec := w.Spec
				workers = append(workers, w)
				urls = append(urls, spec.RESTURL+"/")
			}
			for _, w := range workers {
				if err := w.WaitHealthy(ctx); err != nil {
					t.Fatal(err)
				}
			}
			input := filepath.Join(workers[0].Spec.Dir, "proto-input.txt")
			if err := os.WriteFile(input, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(map[string]any{"name": "proto-src", "config": map[string]string{
				"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
				"tasks.max":       "1", "file": input, "topic": group["group.id"] + "-out"}})
			resp, err := http.Post(workers[0].Spec.RESTURL+"/connectors", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			waitConnectorRunning(ctx, t, workers[0].Spec.RESTURL, "proto-src")

			admin := newAdmin(t)
			var desc *sarama.GroupDescription
			var members []proto.Member
			var end int64
			for {
				end = configEndOffset(t, group["config.storage.topic"])
				descs, err := admin.DescribeConsumerGroups([]string{group["group.id"]})
				if err == nil && len(descs) == 1 && descs[0].State == "Stable" && len(descs[0].Members) == c.workers {
					desc = descs[0]
					members = decodeMembers(desc)
					if allCaughtUp(members, end) && runsConnector(members, "proto-src") {
						break
					}
				}
				select {
				case <-ctx.Done():
					t.Fatalf("group never settled with the connector assigned: %+v", members)
				case <-time.After(300 * time.Millisecond):
				}
			}
			if desc.ProtocolType != proto.ProtocolType || desc.Protocol != c.protocol {
				t.Fatalf("group protocol %s/%s, want connect/%s", desc.ProtocolType, desc.Protocol, c.protocol)
			}
			wantVersion, _ := proto.ProtocolVersion(c.protocol)
			for _, m := range members {
				if m.MetadataErr != nil || m.AssignmentErr != nil {
					t.Fatalf("member %s: %v / %v", m.MemberID, m.MetadataErr, m.AssignmentErr)
				}
				if m.Metadata.Version != wantVersion || m.Assignment.Version != wantVersion {
					t.Errorf("member %s: versions %d/%d, want %d", m.MemberID, m.Metadata.Version, m.Assignment.Version, wantVersion)
				}
				if !slices.Contains(urls, m.Metadata.URL) || !slices.Contains(urls, m.Assignment.LeaderURL) {
					t.Errorf("member %s: URL %q, leader URL %q, want among %v", m.MemberID, m.Metadata.URL, m.Assignment.LeaderURL, urls)
				}
				if m.Assignment.Error != proto.AssignmentNoError || m.Assignment.ConfigOffset != end {
					t.Errorf("member %s: assignment error %d at offset %d, want 0 at the config topic's end %d", m.MemberID, m.Assignment.Error, m.Assignment.ConfigOffset, end)
				}
			}
			if dir := os.Getenv("CITEST_CAPTURE_DIR"); dir != "" {
				writeCaptures(t, dir, c.protocol, desc)
			}
		})
	}
}

func configEndOffset(t *testing.T, topic string) int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	end, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return end
}

func decodeMembers(desc *sarama.GroupDescription) []proto.Member {
	var out []proto.Member
	for id, m := range desc.Members {
		cm := proto.Member{MemberID: id, ClientID: m.ClientId, ClientHost: m.ClientHost, ProtocolType: desc.ProtocolType, Protocol: desc.Protocol}
		cm.Decode(m.MemberMetadata, m.MemberAssignment)
		out = append(out, cm)
	}
	return out
}

func allCaughtUp(members []proto.Member, end int64) bool {
	for _, m := range members {
		if m.Metadata == nil || m.Assignment == nil || m.Metadata.ConfigOffset != end || m.Assignment.ConfigOffset != end {
			return false
		}
	}
	return true
}

// runsConnector reports whether some member runs the connector: in the
// assignment, or (cooperative protocols send deltas) in the previous
// allocation its metadata carries.
func runsConnector(members []proto.Member, name string) bool {
	for _, m := range members {
		if m.Assignment != nil && slices.Contains(m.Assignment.Connectors, name) {
			return true
		}
		if m.Metadata != nil && m.Metadata.Allocation != nil && slices.Contains(m.Metadata.Allocation.Connectors, name) {
			return true
		}
	}
	return false
}

func writeCaptures(t *testing.T, dir, protocol string, desc *sarama.GroupDescription) {
	t.Helper()
	i := 0
	for _, m := range desc.Members {
		for kind, b := range map[string][]byte{"metadata": m.MemberMetadata, "assignment": m.MemberAssignment} {
			doc := map[string]any{
				"description": fmt.Sprintf("real worker of a %d-member %s group, FileStreamSource connector running", len(desc.Members), protocol),
				"source":      fmt.Sprintf("Kafka %s worker on the test bed, captured by TestConnectProtocolBytesFromRealWorkers", testbed.Version()),
				"kind":        kind, "protocol": protocol, "hex": hex.EncodeToString(b),
			}
			out, _ := json.MarshalIndent(doc, "", "  ")
			name := filepath.Join(dir, fmt.Sprintf("real-%s-%s-member%d-%s.json", testbed.Version(), protocol, i, kind))
			if err := os.WriteFile(name, append(out, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		i++
	}
}
