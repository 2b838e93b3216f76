package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// Poll is the pause between two looks for a worker.
const Poll = time.Second

// logEvery is the longest gap between two "waiting for a worker" lines.
const logEvery = 5 * time.Second

// restTimeout bounds one request of the proof: GET /, /health, a listing.
const restTimeout = 5 * time.Second

// Finder finds a worker of our group that is ready, and proves it ours
// before apply writes anything to it.
type Finder struct {
	Config  *settings.Config
	Clients *kafka.Clients
	Log     *slog.Logger
	Clock   clock.Clock
	// Local restricts the candidates to this container's worker (apply
	// --wait-local, the child of run), reached on its local REST URL once
	// its advertised URL is a member of the group.
	Local bool
	// Explicit are the candidates an operator named (--url, or
	// CONNECT_INIT_PEERS), and ExplicitFrom names where they came from in
	// messages; empty means the group's members.
	Explicit     []string
	ExplicitFrom string

	rest *restclient.Client
}

// ForeignError is a worker proven to belong to another Kafka or Connect
// cluster, or an unusable candidate: waiting does not heal it.
type ForeignError struct{ msg string }

func (e *ForeignError) Error() string { return e.msg }

// rootInfo is Connect's GET / answer.
type rootInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// Find waits until a candidate is proven ours and ready, and returns the
// API of that worker. It is bounded by CONNECT_INIT_TIMEOUT, or, with
// Local, by ctx, which the caller ends when this container's worker exits
// (WhileWorkerLives).
func (f *Finder) Find(ctx context.Context) (*apply.API, error) {
	if !f.Local {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.Config.Settings.Timeout)
		defer cancel()
	}
	rest, err := f.client()
	if err != nil {
		return nil, err
	}
	clk := clock.Or(f.Clock)
	start, lastLog := clk.Now(), time.Time{}
	for {
		t, why, err := f.round(ctx, rest, nil)
		if err == nil && why == "" {
			return &apply.API{REST: rest, Target: t, Clock: f.Clock}, nil
		}
		var fe *ForeignError
		if errors.As(err, &fe) || restclient.IsAuth(err) {
			// Another cluster, or a 401/403: waiting changes neither.
			return nil, err
		}
		if err != nil {
			why = err.Error()
		}
		now := clk.Now()
		if now.Sub(lastLog) >= logEvery {
			lastLog = now
			f.logger().Info("waiting for a worker of the group", "gate", "apply", "group", f.Config.GroupID, "why", why, "waited", now.Sub(start).Round(time.Second).String())
		}
		select {
		case <-ctx.Done():
			if WorkerExited(ctx) {
				return nil, fmt.Errorf("%w before it was ready", ErrWorkerExited)
			}
			return nil, fmt.Errorf("none within %s: %s", now.Sub(start).Round(time.Second), why)
		case <-clk.After(Poll):
		}
	}
}

// client is the REST client of every request to the workers: the REST
// client TLS settings, or, with Local, the settings for the local URL.
func (f *Finder) client() (*restclient.Client, error) {
	if f.rest != nil {
		return f.rest, nil
	}
	f.rest = &restclient.Client{TLS: f.Config.RESTClientTLS, Auth: f.Config.Settings.RESTAuth(), Timeout: restTimeout, Clock: f.Clock}
	if f.Local {
		h, err := peers.LocalHealth(f.Config.Worker, f.Config.AdvertisedURL, f.Config.RESTClientTLS, f.Config.Settings.RESTAuth(), restTimeout)
		if err != nil {
			return nil, err
		}
		f.rest = h.REST
		f.rest.Clock = f.Clock
	}
	return f.rest, nil
}

func (f *Finder) logger() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// group is one look at the worker group: our Kafka cluster id, the
// members' advertised URLs (leader first) and their set, keyed by
// scheme://host:port.
type group struct {
	clusterID string
	members   []string
	set       map[string]bool
	state     string
}

// look reads the group through the group gate's offset rules: a foreign
// member in the group is a *ForeignError.
func (f *Finder) look(ctx context.Context) (*group, error) {
	clusterID, err := registry.KafkaClusterID(f.Clients.Member, f.Config.ConfigTopic().Name)
	if err != nil {
		return nil, err
	}
	g := &gate.GroupGate{Admin: f.Clients.Admin, Client: f.Clients.Member, GroupID: f.Config.GroupID, ConfigTopic: f.Config.ConfigTopic().Name,
		Log: slog.New(slog.DiscardHandler), Clock: f.Clock, StableWait: 10 * time.Second}
	rep, err := g.Check(ctx)
	if err != nil {
		var ge *gate.GateError
		if errors.As(err, &ge) && rep != nil && len(rep.Foreign) > 0 {
			return nil, &ForeignError{msg: err.Error()}
		}
		return nil, err
	}
	out := &group{clusterID: clusterID, members: proto.LeaderFirstURLs(rep.Decoded), set: map[string]bool{}, state: rep.State}
	for _, u := range out.members {
		if t, err := restclient.Parse(u); err == nil {
			out.set[key(t)] = true
		}
	}
	return out, nil
}

// key is how a worker URL is compared: scheme://host:port.
func key(t restclient.Target) string { return t.Scheme + "://" + t.HostPort() }

// round takes one look: the group's members, then each candidate not in
// skip. It returns the first proven ready, else why none is.
func (f *Finder) round(ctx context.Context, rest *restclient.Client, skip map[string]bool) (restclient.Target, string, error) {
	g, err := f.look(ctx)
	if err != nil {
		return restclient.Target{}, "", err
	}
	if len(g.members) == 0 {
		return restclient.Target{}, fmt.Sprintf("the group %s has no members yet (state %s)", f.Config.GroupID, g.state), nil
	}
	candidates, why, err := f.candidates(g)
	if err != nil || why != "" {
		return restclient.Target{}, why, err
	}
	var whys []string
	for _, u := range candidates {
		t, err := restclient.Parse(u)
		if err != nil {
			return restclient.Target{}, "", &ForeignError{msg: err.Error()}
		}
		if skip[key(t)] {
			continue
		}
		why, err := f.prove(ctx, rest, t, g.clusterID, g.set)
		if err != nil {
			return restclient.Target{}, "", err
		}
		if why == "" {
			return t, "", nil
		}
		whys = append(whys, why)
	}
	if len(whys) == 0 {
		return restclient.Target{}, "no other candidate", nil
	}
	return restclient.Target{}, strings.Join(whys, "; "), nil
}

// candidates are the URLs to try, in order; why is set when there is none
// yet (this container's worker is not a member).
func (f *Finder) candidates(g *group) ([]string, string, error) {
	switch {
	case f.Local:
		own, _ := restclient.Parse(f.Config.AdvertisedURL)
		if !g.set[key(own)] {
			return nil, fmt.Sprintf("this worker (%s) is not a member of the group %s yet", f.Config.AdvertisedURL, f.Config.GroupID), nil
		}
		local, err := workerconfig.LocalRESTURL(f.Config.Worker)
		if err != nil {
			return nil, "", err
		}
		return []string{local}, "", nil
	case len(f.Explicit) > 0:
		return f.Explicit, "", nil
	}
	return g.members, "", nil
}

// prove checks one candidate: "" when it is a ready worker of our group, a
// reason to keep waiting, or a *ForeignError.
func (f *Finder) prove(ctx context.Context, rest *restclient.Client, t restclient.Target, clusterID string, members map[string]bool) (string, error) {
	resp, err := rest.Get(ctx, t, "", nil)
	if err != nil {
		return fmt.Sprintf("GET / at %s: %v", t.Raw, err), nil
	}
	if err := restclient.Refused("GET /", t, resp, rest.Auth); err != nil {
		return "", err
	}
	var root rootInfo
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &root) != nil || root.Version == "" || root.KafkaClusterID == "" {
		return fmt.Sprintf("GET / at %s answered %d, not as Connect does (version and kafka_cluster_id): not the worker yet", t.Raw, resp.Status), nil
	}
	if root.KafkaClusterID != clusterID {
		return "", &ForeignError{msg: fmt.Sprintf("the worker at %s belongs to Kafka cluster %s, ours is %s: refusing to apply to another cluster", t.Raw, root.KafkaClusterID, clusterID)}
	}
	if !f.Local && !members[key(t)] {
		ok, why, err := runsOnMembers(ctx, rest, t, members)
		if err != nil {
			return "", err
		}
		if !ok {
			return fmt.Sprintf("%s (%s) is not an advertised URL of the group %s's members (%s), and %s", t.Raw, f.ExplicitFrom, f.Config.GroupID, strings.Join(sortedSet(members), ", "), why), nil
		}
	}
	return ready(ctx, rest, t)
}

// ready is "" when the worker at t serves requests (restclient.Health),
// else why not; a 401 or 403 is an error, since no wait changes it.
func ready(ctx context.Context, rest *restclient.Client, t restclient.Target) (string, error) {
	r := rest.Health(ctx, t, nil)
	switch {
	case r.Refused != nil:
		return "", r.Refused
	case !r.Ready:
		return r.Reason, nil
	}
	return "", nil
}

// runsOnMembers proves that a worker reached through another name (a load
// balancer) is of our group: connectors or tasks it reports run on worker
// ids (host:port) of our members. Ids of workers that are not members are
// inconclusive when some are members' (a worker that just left the group
// keeps its name in the status until its work is reassigned), and prove
// another Connect cluster when none is. A worker with no connectors proves
// nothing.
func runsOnMembers(ctx context.Context, rest *restclient.Client, t restclient.Target, members map[string]bool) (bool, string, error) {
	hosts := map[string]bool{}
	for m := range members {
		if mt, err := restclient.Parse(m + "/"); err == nil {
			hosts[mt.HostPort()] = true
		}
	}
	api := &apply.API{REST: rest, Target: t}
	l, err := api.List(ctx)
	if err != nil {
		return false, "its connectors cannot be read: " + err.Error(), nil
	}
	ours, elsewhere := 0, ""
	for _, name := range sortedKeys(l.Status) {
		st := l.Status[name]
		ids := []string{st.Connector.WorkerID}
		for _, tk := range st.Tasks {
			ids = append(ids, tk.WorkerID)
		}
		for _, id := range ids {
			switch {
			case id == "":
			case hosts[id]:
				ours++
			case elsewhere == "":
				elsewhere = fmt.Sprintf("%s on %s", name, id)
			}
		}
	}
	switch {
	case ours > 0:
		return true, "", nil
	case elsewhere != "":
		return false, "", &ForeignError{msg: fmt.Sprintf("the worker at %s runs %s, which is no member of our group, and nothing on a member: refusing to apply to another Connect cluster", t.Raw, elsewhere)}
	}
	return false, "it runs no connector that would prove its group", nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PeerURL turns a CONNECT_INIT_PEERS entry (host, host:port or a URL) into
// a URL with the scheme and port of our own advertised URL, by the one rule
// for such entries (restclient.ParsePeer; the settings step has already
// refused entries it cannot read).
func PeerURL(p, advertised string) (string, error) {
	scheme, port := "http", "8083"
	if t, err := restclient.Parse(advertised); err == nil {
		scheme, port = t.Scheme, t.Port
	}
	t, err := restclient.ParsePeer(p, scheme, port)
	if err != nil {
		return "", err
	}
	return t.Raw, nil
}

// anotherWait bounds one search for another worker: the group gate waits
// up to 10 s for a Stable snapshot, then each candidate is proven.
const anotherWait = 30 * time.Second

// Another is one look for a worker of the group other than not, proven
// ours and ready as Find proves it, for an apply whose worker stopped
// answering (apply.Workers). It does not wait: the caller looks again at
// its next poll. With Local there is no other worker.
func (f *Finder) Another(ctx context.Context, not restclient.Target) (restclient.Target, error) {
	if f.Local {
		return restclient.Target{}, errors.New("apply --wait-local talks to this container's worker only")
	}
	rest, err := f.client()
	if err != nil {
		return restclient.Target{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, anotherWait)
	defer cancel()
	t, why, err := f.round(ctx, rest, map[string]bool{key(not): true})
	if err != nil {
		return restclient.Target{}, err
	}
	if why != "" {
		return restclient.Target{}, errors.New(why)
	}
	return t, nil
}

// Members are the workers a plan may be read from next: the group's
// members (leader first), the operator's candidates (--url,
// CONNECT_INIT_PEERS), or with Local this container's worker
// (apply.Workers).
func (f *Finder) Members(ctx context.Context) ([]restclient.Target, error) {
	g, err := f.look(ctx)
	if err != nil {
		return nil, err
	}
	urls, why, err := f.candidates(g)
	if err != nil {
		return nil, err
	}
	if why != "" {
		return nil, errors.New(why)
	}
	var out []restclient.Target
	for _, u := range urls {
		if t, err := restclient.Parse(u); err == nil {
			out = append(out, t)
		}
	}
	return out, nil
}

// aliveWait bounds the TCP connection that tells a member is alive.
const aliveWait = 2 * time.Second

// Running are the worker ids (host:port of the advertised URL, as
// Connect's status names a worker) of the group's members, true for those
// that accept a connection on their REST port now (apply.Workers). A killed worker
// stays a member until its session times out (10 s by default), and its
// connectors' status keeps its name until the group reassigns them; the
// connection tells at once.
func (f *Finder) Running(ctx context.Context) (map[string]bool, error) {
	g, err := f.look(ctx)
	if err != nil {
		return nil, err
	}
	probe := &restclient.Client{Timeout: aliveWait}
	live := map[string]bool{}
	for _, u := range g.members {
		t, err := restclient.Parse(u)
		if err != nil {
			continue
		}
		live[t.HostPort()] = probe.Connect(ctx, t) == nil
	}
	return live, nil
}

// Member reports whether t is a live member of the group now: its URL
// (with Local, this worker's advertised URL) is among the advertised URLs
// of the Stable group's members; a URL no member advertises (a load
// balancer) still counts when every connector and task it reports runs on
// a member. During a rebalance the members' metadata is not visible: that
// is an error (not known yet), not a no.
func (f *Finder) Member(ctx context.Context, t restclient.Target) (bool, error) {
	descs, err := f.Clients.Admin.DescribeConsumerGroups([]string{f.Config.GroupID})
	if err != nil {
		return false, fmt.Errorf("describe group %q: %w", f.Config.GroupID, err)
	}
	members := map[string]bool{}
	for _, d := range descs {
		if d.GroupId != f.Config.GroupID {
			continue
		}
		if d.State != "Stable" {
			return false, fmt.Errorf("the group %s is %s: its members are known once it is Stable", f.Config.GroupID, d.State)
		}
		for _, m := range d.Members {
			if md, err := proto.DecodeMemberMetadata(m.MemberMetadata); err == nil {
				if mt, err := restclient.Parse(md.URL); err == nil {
					members[key(mt)] = true
				}
			}
		}
	}
	if f.Local {
		own, err := restclient.Parse(f.Config.AdvertisedURL)
		return err == nil && members[key(own)], err
	}
	if members[key(t)] {
		return true, nil
	}
	rest, err := f.client()
	if err != nil {
		return false, err
	}
	ok, _, err := runsOnMembers(ctx, rest, t, members)
	return ok, err
}
