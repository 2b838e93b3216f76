package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka/kafkalog"
)

// StatusLog is what a status topic says about which workers ran what: the
// worker_id of the latest status record of every connector and task.
type StatusLog struct {
	Topic string
	// ByWorker maps a worker id (host:port) to the status keys whose latest
	// record it wrote.
	ByWorker map[string][]string
}

// ReadStatus reads every partition of the status topic.
func ReadStatus(ctx context.Context, client sarama.Client, topic string) (*StatusLog, error) {
	n, err := kafkalog.Partitions(client, topic)
	if err != nil {
		return nil, fmt.Errorf("status topic %q: %w", topic, err)
	}
	latest := map[string]string{}
	for p := int32(0); p < n; p++ {
		_, err := kafkalog.ReadAll(ctx, client, topic, p, func(r kafkalog.Record) error {
			key := string(r.Key)
			if !strings.HasPrefix(key, "status-connector-") && !strings.HasPrefix(key, "status-task-") {
				return nil
			}
			if r.Value == nil {
				delete(latest, key)
				return nil
			}
			var v struct {
				WorkerID string `json:"worker_id"`
			}
			if json.Unmarshal(r.Value, &v) != nil || v.WorkerID == "" {
				return nil
			}
			latest[key] = v.WorkerID
			return nil
		})
		if err != nil && !errors.Is(err, kafkalog.ErrNoTopic) {
			return nil, fmt.Errorf("status topic %q: %w", topic, err)
		}
	}
	s := &StatusLog{Topic: topic, ByWorker: map[string][]string{}}
	for k, w := range latest {
		s.ByWorker[w] = append(s.ByWorker[w], k)
	}
	return s, nil
}

// WorkerID returns the worker id Connect derives from an advertised REST
// URL (host:port), or "" when the URL does not parse.
func WorkerID(advertisedURL string) string {
	u, err := url.Parse(advertisedURL)
	if err != nil || u.Hostname() == "" || u.Port() == "" {
		return ""
	}
	return u.Host // "host:port", an IPv6 host in brackets as java.net.URI.getHost gives it
}
