package workers

import (
	"context"
	"fmt"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/restclient"
)

// Leads says whether this container's worker is its group's leader now
// (apply.WatchOptions.Active for the in-run watcher), and why or why not.
// Connect elects exactly one leader per group and elects another when it
// dies, so the watcher beside the leader is the one watcher of the Connect
// cluster that acts, with no lease of ours to renew: the rebalance that
// ends a leader's membership is the failover. The leader is the member the
// Stable group's assignments name; during a rebalance no one is.
func (f *Finder) Leads(ctx context.Context) (bool, string) {
	if err := ctx.Err(); err != nil {
		return false, err.Error()
	}
	own, err := restclient.Parse(f.Config.AdvertisedURL)
	if err != nil {
		return false, fmt.Sprintf("this worker's advertised URL %q does not parse: %v", f.Config.AdvertisedURL, err)
	}
	descs, err := f.Clients.Admin.DescribeConsumerGroups([]string{f.Config.GroupID})
	if err != nil {
		return false, fmt.Sprintf("cannot describe the group %s: %v", f.Config.GroupID, err)
	}
	for _, d := range descs {
		if d.GroupId != f.Config.GroupID {
			continue
		}
		if d.State != "Stable" {
			return false, fmt.Sprintf("the group %s is %s: its leader is known once it is Stable", f.Config.GroupID, d.State)
		}
		urls := proto.LeaderFirstURLs(gate.NewGroupReport(f.Config.GroupID, f.Config.ConfigTopic().Name, d).Decoded)
		if len(urls) == 0 {
			return false, fmt.Sprintf("no assignment of the group %s names a leader", f.Config.GroupID)
		}
		leader, err := restclient.Parse(urls[0])
		if err == nil && key(leader) == key(own) {
			return true, "this worker (" + own.Raw + ") is the group's leader"
		}
		return false, "the group's leader is " + urls[0] + ", not this worker (" + own.Raw + "): its watcher acts"
	}
	return false, fmt.Sprintf("the group %s has no members", f.Config.GroupID)
}
