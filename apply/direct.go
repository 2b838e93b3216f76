package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/connect-init/connect-init/restclient"
)

// Direct is the API of the worker at raw for a dry run that reaches only
// Connect's REST API (apply --dry-run --url on a CI runner, which often
// reaches no broker): the worker must answer GET / as Connect does and be
// ready (restclient.Health), and nothing more is proven. A dry run writes
// nothing, but its plan must be what the apply would do: the API carries
// that the worker is unproven, so that the prune's guard (Options.Unproven)
// runs in the dry run as in the apply.
func Direct(ctx context.Context, rest *restclient.Client, raw string) (*API, string, error) {
	t, err := restclient.Parse(raw)
	if err != nil {
		return nil, "", err
	}
	a := &API{REST: rest, Target: t, unproven: directUnproven}
	v, err := a.Version(ctx)
	if err != nil {
		return nil, "", err
	}
	if r := rest.Health(ctx, t, nil); r.Refused != nil {
		return nil, "", r.Refused
	} else if !r.Ready {
		return nil, "", fmt.Errorf("the worker at %s is not ready: %s", t.Raw, r.Reason)
	}
	return a, v, nil
}

// directUnproven is why a worker reached through Direct is not proven a
// member of the cluster the definitions are for.
const directUnproven = "the worker is not proven a member of the group (that needs the brokers)"

// Version is the worker's version (GET /, Connect's "version"), read once
// and kept.
func (a *API) Version(ctx context.Context) (string, error) {
	if a.version != "" {
		return a.version, nil
	}
	resp, err := a.REST.Get(ctx, a.Target, "", nil)
	if err != nil {
		return "", fmt.Errorf("GET / at %s: %w", a.Target.Raw, err)
	}
	if err := restclient.Refused("GET /", a.Target, resp, a.REST.Auth); err != nil {
		return "", err
	}
	var root struct {
		Version        string `json:"version"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &root) != nil || root.Version == "" || root.KafkaClusterID == "" {
		return "", fmt.Errorf("GET / at %s answered %d, not as Connect does (version and kafka_cluster_id)", a.Target.Raw, resp.Status)
	}
	a.version = root.Version
	return a.version, nil
}

// KafkaVersion is the Apache Kafka release a worker's version string
// stands for: "4.3.1" and "3.7.0-SNAPSHOT" as they are; Confluent
// Platform's "7.6.0-ccs" (or -ce) is its Kafka 3.6, as CP 6.x is Kafka
// 2.(x+6), 7.x Kafka 3.x and 8.x Kafka 4.x. ok is false when it cannot be
// read.
func KafkaVersion(v string) (major, minor int, ok bool) {
	core, suffix, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	if s := strings.ToLower(suffix); strings.HasPrefix(s, "ccs") || strings.HasPrefix(s, "ce") {
		switch major {
		case 6:
			return 2, minor + 6, true
		case 7:
			return 3, minor, true
		case 8:
			return 4, minor, true
		}
		return 0, 0, false
	}
	return major, minor, true
}

// AtLeast reports whether the version v is Kafka major.minor or later
// (false when v cannot be read: the caller takes the older way).
func AtLeast(v string, major, minor int) bool {
	ma, mi, ok := KafkaVersion(v)
	return ok && (ma > major || ma == major && mi >= minor)
}
