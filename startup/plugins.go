package startup

import (
	"context"
	"log/slog"
	"strings"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// checkPlugins is the plugins step (issue 24): after the group gate, before
// the lock's join, this worker must be able to load every class the
// cluster's connectors name that the other members load, or it would be
// assigned connectors and tasks it fails once a rebalance moves them here.
// What this worker loads is found as its Connect will find it (scanWorker);
// what the cluster uses comes from our config topic (the group gate's read,
// else one read here) and CONNECT_INIT_CONNECTORS_DIR; the members answer
// GET /connector-plugins, leader first.
func checkPlugins(ctx context.Context, st *state, root string, log *slog.Logger) error {
	cfg := st.cfg
	mode, err := plugins.ParseCheckMode(st.settings.PluginCheck)
	if err != nil { // settings validated it; kept for a caller that did not
		return &settings.ConfigError{Setting: st.settings.Name("CONNECT_INIT_PLUGIN_CHECK"), Problem: err.Error()}
	}
	opts, err := gate.PluginScanOptions(cfg, st.command, root)
	if err != nil {
		return err
	}
	configs, err := clusterConfigs(ctx, st, log)
	if err != nil {
		return err
	}
	g := &gate.PluginGate{Mode: mode, Scan: opts, Configs: configs, Members: otherMembers(st.group, cfg.AdvertisedURL),
		REST: &restclient.Client{TLS: cfg.RESTClientTLS, Auth: cfg.Settings.RESTAuth(), Timeout: gate.DefaultPluginPeerTimeout}, Log: log}
	_, err = g.Check(ctx)
	return err
}

// clusterConfigs are the connector configurations to judge: our config
// topic as the group gate read it (read here only when it did not: an
// empty group, or its read failed), with CONNECT_INIT_CONNECTORS_DIR's
// definitions over them. A directory that cannot be read is logged and
// left out: the apply beside the worker reports it with file and line.
func clusterConfigs(ctx context.Context, st *state, log *slog.Logger) (map[string]map[string]string, error) {
	var cl *store.ConfigLog
	if st.group != nil {
		cl = st.group.Config
	}
	if cl == nil {
		var err error
		topic := st.cfg.ConfigTopic().Name
		// A broker killed or a leader moving while the step reads is "not
		// yet" (found by the fault harness: run exited 1 on "connection
		// refused" and "not leader" here); only a final answer fails.
		cl, err = gate.LookAgain(ctx, nil, log, step.Plugins, "config topic "+topic+" to be read", func() (*store.ConfigLog, error) {
			return store.ReadConfig(ctx, st.clients.Member, topic)
		})
		if err != nil {
			return nil, &gate.GateError{Gate: step.Plugins, Err: err,
				Fix: "check that this principal may READ the config topic; or set CONNECT_INIT_PLUGIN_CHECK=off to skip the plugin check"}
		}
	}
	var defs map[string]map[string]string
	if dir := strings.TrimSpace(st.settings.ConnectorsDir); dir != "" {
		conns, _, err := apply.Load(dir)
		if err != nil {
			log.Warn("the connector definitions are left out of the plugin check", "gate", step.Plugins, "dir", dir, "error", err.Error())
		}
		defs = map[string]map[string]string{}
		for _, c := range conns {
			defs[c.Name] = c.Config
		}
	}
	return gate.PluginConfigs(cl, defs), nil
}

// otherMembers are the group members' advertised URLs, leader first,
// without this worker's own (a restarted worker's old member may still be
// in the group under its URL).
func otherMembers(group *gate.GroupReport, own string) []string {
	if group == nil {
		return nil
	}
	var out []string
	for _, u := range proto.LeaderFirstURLs(group.Decoded) {
		if strings.TrimSuffix(u, "/") != strings.TrimSuffix(own, "/") {
			out = append(out, u)
		}
	}
	return out
}
