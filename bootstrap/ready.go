package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/connect-init/connect-init/bootstrap/connectproto"
)

// WorkerReadiness decides whether a worker that took the startup lock has
// finished joining, so the next one may go. A worker is ready when it is a
// member of the Stable worker group whose reported config offset equals
// its assignment's (it caught up with the config topic: the loop of
// incident 1 cannot be in progress), or when its REST /health answers 200
// (Kafka >= 3.9 answers so only once the herder runs).
type WorkerReadiness struct {
	Admin   sarama.ClusterAdmin
	GroupID string
	HTTP    *retryablehttp.Client
}

// NewWorkerReadiness builds the check with a short-retrying HTTP client:
// the lock's poll calls it again soon anyway.
func NewWorkerReadiness(admin sarama.ClusterAdmin, groupID string, log *slog.Logger) *WorkerReadiness {
	hc := retryablehttp.NewClient()
	hc.RetryMax = 1
	hc.RetryWaitMin = 100 * time.Millisecond
	hc.RetryWaitMax = 300 * time.Millisecond
	hc.HTTPClient.Timeout = 3 * time.Second
	hc.Logger = nil
	hc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	return &WorkerReadiness{Admin: admin, GroupID: groupID, HTTP: hc}
}

// Ready reports whether the worker advertising url is ready, and why.
func (r *WorkerReadiness) Ready(ctx context.Context, url string) (bool, string, error) {
	if ok, why, err := r.inGroup(url); err == nil && ok {
		return true, why, nil
	}
	return r.healthy(ctx, url)
}

// inGroup looks for url among the Stable group's members.
func (r *WorkerReadiness) inGroup(url string) (bool, string, error) {
	descs, err := r.Admin.DescribeConsumerGroups([]string{r.GroupID})
	if err != nil {
		return false, "", fmt.Errorf("describe group %q: %w", r.GroupID, err)
	}
	for _, d := range descs {
		if d.GroupId != r.GroupID || d.State != "Stable" || d.ProtocolType != connectproto.ProtocolType {
			continue
		}
		for _, m := range d.Members {
			md, err := connectproto.DecodeMemberMetadata(m.MemberMetadata)
			if err != nil || md.URL != url {
				continue
			}
			as, err := connectproto.DecodeAssignment(m.MemberAssignment)
			if err != nil {
				continue
			}
			if as.Error == connectproto.AssignmentNoError && md.ConfigOffset == as.ConfigOffset {
				return true, fmt.Sprintf("member of the stable group at config offset %d", md.ConfigOffset), nil
			}
		}
	}
	return false, "", nil
}

// healthy asks the worker's GET /health.
func (r *WorkerReadiness) healthy(ctx context.Context, url string) (bool, string, error) {
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+"/health", nil)
	if err != nil {
		return false, "", err
	}
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return false, "", err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true, "GET /health answered 200", nil
	}
	return false, "", fmt.Errorf("GET /health answered %d", resp.StatusCode)
}
