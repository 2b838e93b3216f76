package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
	"github.com/connect-init/connect-init/workerconfig"
)

// ConnectorPluginsPath is the REST request that lists what a worker can
// load: connectors, converters, header converters, transformations and
// predicates (connectorsOnly=false, Kafka 3.2+; older workers list only
// connectors, so a missing transformation there is never a peer's proof).
const ConnectorPluginsPath = "connector-plugins?connectorsOnly=false"

// DefaultPluginPeerTimeout bounds one member's answer: the list comes
// from the worker's plugin registry, not its herder, so a member in the
// group answers at once; one that does not is reported and not counted.
const DefaultPluginPeerTimeout = 5 * time.Second

// PluginPeerError is a member whose GET /connector-plugins gave no list:
// it proves nothing either way, so the verdict leaves it out and the
// message names it.
type PluginPeerError struct {
	URL   string `json:"url"`
	Error string `json:"error"`
	// Refused is set when the member answered 401 or 403: it is up, and
	// only other REST credentials let it be judged. Fix says which.
	Refused bool   `json:"refused,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// PluginPeers asks every member URL for GET /connector-plugins in parallel,
// bounded by client's Timeout (DefaultPluginPeerTimeout when 0), and
// returns the members that answered, in the order of urls (leader first),
// and those that did not.
func PluginPeers(ctx context.Context, client *restclient.Client, urls []string) ([]plugins.Peer, []PluginPeerError) {
	if client == nil {
		client = &restclient.Client{}
	}
	if client.Timeout == 0 {
		c := *client
		c.Timeout = DefaultPluginPeerTimeout
		client = &c
	}
	lists := make([][]plugins.RemotePlugin, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lists[i], errs[i] = connectorPlugins(ctx, client, u)
		}()
	}
	wg.Wait()
	var peers []plugins.Peer
	var failed []PluginPeerError
	for i, u := range urls {
		if errs[i] != nil {
			pe := PluginPeerError{URL: u, Error: errs[i].Error()}
			var ae *restclient.AuthError
			if errors.As(errs[i], &ae) {
				pe.Refused, pe.Fix = true, ae.Fix()
			}
			failed = append(failed, pe)
			continue
		}
		peers = append(peers, plugins.Peer{Member: u, Plugins: lists[i]})
	}
	return peers, failed
}

// connectorPlugins is one member's list. A failed attempt is tried once
// more after a short pause: a member busy with a rebalance may drop one
// connection, and a worker counted as not answering weakens the verdict.
func connectorPlugins(ctx context.Context, client *restclient.Client, rawURL string) ([]plugins.RemotePlugin, error) {
	t, err := restclient.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, last
			case <-time.After(500 * time.Millisecond):
			}
		}
		resp, err := client.GetLarge(ctx, t, ConnectorPluginsPath)
		if err == nil {
			if err := restclient.Refused("GET /"+ConnectorPluginsPath, t, resp, client.Auth); err != nil {
				return nil, err // an answer: asking again changes nothing
			}
		}
		switch {
		case err != nil:
			last = fmt.Errorf("GET /%s: %w", ConnectorPluginsPath, err)
		case resp.Status != http.StatusOK:
			last = fmt.Errorf("GET /%s answered %s", ConnectorPluginsPath, resp.StatusText)
		default:
			return plugins.DecodeConnectorPlugins(bytes.NewReader(resp.Body))
		}
	}
	return nil, last
}

// PluginConfigs are the connector configurations the plugins step judges:
// those of our config topic as read (nil: none read), with the
// definitions of CONNECT_INIT_CONNECTORS_DIR over them, since `apply`
// beside the worker writes those.
func PluginConfigs(log *store.ConfigLog, defs map[string]map[string]string) map[string]map[string]string {
	out := map[string]map[string]string{}
	if log != nil {
		for name, c := range log.Configs {
			out[name] = c
		}
	}
	for name, c := range defs {
		out[name] = c
	}
	return out
}

// PluginScanOptions are a worker's plugin.path, classpath and
// plugin.discovery as its Connect will read them, with cmd its command
// (nil for doctor, which has none: the classpath is then $CLASSPATH and
// the image's library directories). A plugin.path that is set but empty makes
// Connect scan its working directory (PluginUtils.pluginLocations splits ""
// into one empty element); a bad plugin.discovery makes the worker refuse
// to start, so it is bad configuration here too.
func PluginScanOptions(cfg *settings.Config, cmd *entrypoint.Command, root string) (plugins.Options, error) {
	var opts plugins.Options
	if v, ok := cfg.Worker["plugin.path"]; ok {
		opts.PluginPath = strings.TrimSpace(v)
		if opts.PluginPath == "" {
			opts.PluginPath = "."
		}
	}
	d, err := plugins.ParseDiscoveryMode(cfg.Worker.Get("plugin.discovery", ""))
	if err != nil {
		return opts, &settings.ConfigError{Setting: cfg.Sources.Setting(cfg.Flavour, "plugin.discovery", cfg.BaseFile), Problem: err.Error(),
			Fix: "use only_scan, hybrid_warn, hybrid_fail or service_load, as the worker accepts"}
	}
	opts.Discovery = d
	opts.Classpath = workerClasspath(cfg, cmd, root)
	return opts, nil
}

// workerClasspath is the worker JVM's classpath as the image's launcher
// builds it: a java command line's own -cp (or $CLASSPATH) is all of it;
// a launcher script (the image's run script, connect-distributed) puts
// $CLASSPATH first and then the image's library directories
// (workerconfig.LibraryDirs), of which those that exist under root count:
// as "dir/*", or, under Kafka's kafka-run-class.sh (apache/kafka,
// Debezium), file by file without the files it leaves out.
func workerClasspath(cfg *settings.Config, cmd *entrypoint.Command, root string) []string {
	var cp []string
	if cmd != nil {
		env, _ := workerconfig.LookupEnv(cmd.Env, "CLASSPATH")
		cp = plugins.ClasspathFromArgs(cmd.Argv, env)
		if filepath.Base(cmd.Path) == "java" {
			return cp
		}
	} else if env, _ := workerconfig.LookupEnv(cfg.Environ, "CLASSPATH"); env != "" {
		cp = plugins.SplitClasspath(env)
	}
	if root == "" {
		root = "/"
	}
	for _, d := range workerconfig.LibraryDirs(cfg.Flavour) {
		dir := filepath.Join(root, d)
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			continue
		}
		if !workerconfig.ListsLibraryFiles(cfg.Flavour) {
			cp = append(cp, filepath.Join(dir, "*"))
			continue
		}
		// kafka-run-class.sh: file by file, connect-file-*.jar left out,
		// so a FileStream connector counts only where plugin.path has it.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() && !workerconfig.SkipsLibraryFile(e.Name()) {
				cp = append(cp, filepath.Join(dir, e.Name()))
			}
		}
	}
	return cp
}

// PluginGate is the plugins gate (issue 24): before this worker joins, the
// classes the cluster's connectors name must be loadable here whenever the
// other members load them. A worker that lacks one joins like any other,
// is assigned the connector or its tasks, and fails them ("Failed to find
// any class that implements Connector ...") once a rebalance moves them to
// it. A class no member loads is broken everywhere: a warning, never a
// refusal, which would only take more workers down.
type PluginGate struct {
	// Mode is CONNECT_INIT_PLUGIN_CHECK; the caller skips the gate when off.
	Mode plugins.CheckMode
	// Scan is this worker's plugin.path, classpath and plugin.discovery;
	// the gate sets Want to the classes the connectors name.
	Scan plugins.Options
	// Configs are the connectors' configurations (PluginConfigs).
	Configs map[string]map[string]string
	// Members are the other members' advertised REST URLs, leader first.
	Members []string
	// REST asks them (Connect's REST client TLS settings).
	REST *restclient.Client
	Log  *slog.Logger
}

// PluginReport is what the plugins gate saw and decided.
type PluginReport struct {
	Uses       []plugins.Use
	Local      *plugins.Inventory
	Peers      []plugins.Peer
	Unanswered []PluginPeerError
	// Findings are the verdict as the mode reports it (CheckMode.Apply).
	Findings []plugins.Finding
	Refused  bool
}

// Check scans this worker, asks the members, judges, logs every finding
// and refuses (a *GateError) when the mode says so.
func (g *PluginGate) Check(ctx context.Context) (*PluginReport, error) {
	log := g.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	start := time.Now()
	rep := &PluginReport{Uses: plugins.UsedClasses(g.Configs)}
	opts := g.Scan
	opts.Want = plugins.Classes(rep.Uses)
	inv, err := plugins.Scan(ctx, opts)
	if err != nil {
		return rep, &GateError{Gate: step.Plugins, Err: fmt.Errorf("scan this worker's plugins: %w", err)}
	}
	rep.Local = inv
	if len(rep.Uses) > 0 && len(g.Members) > 0 {
		rep.Peers, rep.Unanswered = PluginPeers(ctx, g.REST, g.Members)
	}
	for _, u := range rep.Unanswered {
		log.Warn("group member did not list its plugins; it is not counted either way", "gate", step.Plugins, "member", u.URL, "error", u.Error)
	}
	findings := plugins.Verdict(plugins.Input{Uses: rep.Uses, Local: inv, Peers: rep.Peers})
	rep.Refused, rep.Findings = g.Mode.Apply(findings)
	for _, f := range rep.Findings {
		level := slog.LevelInfo
		if f.Severity != checks.Info {
			level = slog.LevelWarn
		}
		if !rep.Refused || f.Severity != checks.Error {
			log.Log(ctx, level, "plugin check", "gate", step.Plugins, "id", f.ID, "subject", f.Subject, "finding", f.Summary, "evidence", f.Evidence, "fix", f.Fix)
		}
	}
	log.Info("plugins checked", "gate", step.Plugins, "connectors", len(g.Configs), "classes_used", len(opts.Want),
		"peers_answered", len(rep.Peers), "peers_unanswered", len(rep.Unanswered), "plugins_here", len(inv.Plugins),
		"jars", inv.Stats.Files, "scan_took", inv.Stats.Duration.Round(time.Millisecond).String(),
		"took", time.Since(start).Round(time.Millisecond).String())
	if rep.Refused {
		return rep, pluginRefusal(rep.Findings)
	}
	return rep, nil
}

// pluginRefusal is the gate's one-line refusal: the first error finding
// whole (the connector, the class, the peers' version, where this worker
// looked, the fix), then the other connectors at risk by name.
func pluginRefusal(findings []plugins.Finding) *GateError {
	var errs []plugins.Finding
	for _, f := range findings {
		if f.Severity == checks.Error {
			errs = append(errs, f)
		}
	}
	if len(errs) == 0 {
		return &GateError{Gate: step.Plugins, Err: errors.New("refused without an error finding")}
	}
	first := errs[0]
	msg := "this worker would fail connectors its peers run: " + first.Summary
	if first.Evidence != "" {
		msg += " (" + first.Evidence + ")"
	}
	if len(errs) > 1 {
		var more []string
		for _, f := range errs[1:] {
			more = append(more, fmt.Sprintf("connector %q needs %s", f.Connector, f.Class))
		}
		sort.Strings(more)
		msg += fmt.Sprintf("; %d more: %s", len(more), strings.Join(more, ", "))
	}
	return &GateError{Gate: step.Plugins, Err: errors.New(msg),
		Fix: first.Fix + "; or set CONNECT_INIT_PLUGIN_CHECK=warn to start it anyway"}
}
