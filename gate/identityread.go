package gate

import (
	"context"

	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/step"
)

// The identity rules' inputs: the cluster registry and our config and
// status topics, read after the group's snapshot and before the verdict.

// registryRead is the Kafka cluster id and the registry's view of the
// group, read by readRegistry.
type registryRead struct {
	clusterID string
	view      *registry.View
	err       error
}

func (g *GroupGate) readRegistry(ctx context.Context) registryRead {
	var r registryRead
	if r.clusterID = g.Identity.KnownClusterID; r.clusterID == "" {
		r.clusterID, r.err = registry.KafkaClusterID(g.Client, g.ConfigTopic)
	}
	if r.err == nil {
		r.view, r.err = g.Identity.Registry.Read(ctx, r.clusterID, g.GroupID)
	}
	return r
}

// registryAhead starts reading the registry now, beside the config
// topic's end offsets (neither needs the other, and both come after the
// group's snapshot: one after the other they were two rounds of requests
// of every start, issue 39); nil when the identity is read by a test's
// identityFn or there is no registry. The caller stops it when it returns
// (a read still on its way must end before the client closes).
func (g *GroupGate) registryAhead(ctx context.Context) *future.Future[registryRead] {
	if g.identityFn != nil || g.Identity == nil || g.Identity.Registry == nil {
		return nil
	}
	return future.Go(ctx, func(ctx context.Context) (registryRead, error) { return g.readRegistry(ctx), nil })
}

// readIdentityWith reads the Kafka cluster id and the registry (or takes
// them from ahead, when not nil), and our config and status topics. Only
// reads: nothing is written before the verdict.
func (g *GroupGate) readIdentityWith(ctx context.Context, rep *GroupReport, ahead *future.Future[registryRead]) *identityInputs {
	in := &identityInputs{}
	id := g.Identity
	if id.Registry != nil {
		var r registryRead
		if ahead != nil {
			r, _ = ahead.Wait()
		} else {
			r = g.readRegistry(ctx)
		}
		in.clusterID, in.view, in.viewErr = r.clusterID, r.view, r.err
	}
	if len(rep.Members) == 0 {
		return in
	}
	// Our config and status topics were just created or checked by the
	// topics step: a read that meets a leader being elected is "not yet",
	// and run (UntilCalm) reads again rather than judge the members
	// without Connect's records.
	in.config, in.configErr = lookAgain(ctx, g.Clock, g.Log, step.Group, "config topic "+g.ConfigTopic+" to be read", g.UntilCalm,
		func() (*store.ConfigLog, error) { return store.ReadConfig(ctx, g.Client, g.ConfigTopic) })
	if in.configErr != nil {
		in.config = nil
	}
	if id.Cluster.StatusTopic != "" {
		in.status, in.statusErr = lookAgain(ctx, g.Clock, g.Log, step.Group, "status topic "+id.Cluster.StatusTopic+" to be read", g.UntilCalm,
			func() (*store.StatusLog, error) { return store.ReadStatus(ctx, g.Client, id.Cluster.StatusTopic) })
	}
	return in
}
