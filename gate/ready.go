package gate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/restclient"
)

// WorkerReadiness decides whether a worker that took the startup lock has
// finished joining, so the next one may go. A worker is ready when it is a
// member of the Stable worker group whose reported config offset equals
// its assignment's (it caught up with the config topic: the loop of
// incident 1 cannot be in progress), or when its REST API says so
// (restclient.Client.Health: GET /health, Kafka >= 3.9, answers 200 only
// once the herder runs; older workers answer the herder's 404).
type WorkerReadiness struct {
	Admin   sarama.ClusterAdmin
	GroupID string
	REST    *restclient.Client
}

// NewWorkerReadiness builds the check with a short-retrying REST client
// (the lock's poll calls it again soon anyway) that uses restTLS, the REST
// client TLS settings of the worker, for https holders, and the REST
// credentials.
func NewWorkerReadiness(admin sarama.ClusterAdmin, groupID string, restTLS *tls.Config, auth restclient.Auth) *WorkerReadiness {
	return &WorkerReadiness{Admin: admin, GroupID: groupID, REST: &restclient.Client{TLS: restTLS, Auth: auth, Timeout: 3 * time.Second, Retries: 1}}
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
		if d.GroupId != r.GroupID || d.State != "Stable" || d.ProtocolType != proto.ProtocolType {
			continue
		}
		for _, m := range d.Members {
			md, err := proto.DecodeMemberMetadata(m.MemberMetadata)
			if err != nil || md.URL != url {
				continue
			}
			as, err := proto.DecodeAssignment(m.MemberAssignment)
			if err != nil {
				continue
			}
			if proto.CaughtUp(&md, &as) {
				return true, fmt.Sprintf("member of the stable group at config offset %d", md.ConfigOffset), nil
			}
		}
	}
	return false, "", nil
}

// healthy asks the worker's REST API.
func (r *WorkerReadiness) healthy(ctx context.Context, url string) (bool, string, error) {
	t, err := restclient.Parse(url)
	if err != nil {
		return false, "", err
	}
	res := r.REST.Health(ctx, t, nil)
	if !res.Ready {
		return false, "", errors.New(res.Reason)
	}
	return true, res.Reason, nil
}
