package plugins

import (
	"fmt"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// versionDiffers is IDPluginVersionDiffers: this worker's known version
// of the plugin is none of a peer's known versions.
func versionDiffers(u Use, mine []Plugin, have []peerMatch) (Finding, bool) {
	if !knownVersion(mine) {
		return Finding{}, false
	}
	var differ []peerMatch
	for _, h := range have {
		if knownVersion(h.plugins) && !shareVersion(mine, h.plugins) {
			differ = append(differ, h)
		}
	}
	if len(differ) == 0 {
		return Finding{}, false
	}
	f := Finding{Result: checks.Result{
		ID: IDPluginVersionDiffers, Severity: checks.Warning, Subject: "connector " + u.Connector,
		Summary: fmt.Sprintf("connector %q uses %s in another version here than on %s: its tasks behave differently on this worker",
			u.Connector, mine[0].Class, peerPhrase(differ)),
		Evidence: fmt.Sprintf("this worker has %s; %s", versionsOf(mine), peerVersions(differ)),
		Fix: fmt.Sprintf("run one version of the plugin on every worker (the image of each must carry the same jar), or pin it with %s (KIP-891, Kafka 4.1+)",
			versionKey(u.Key)),
	}, Connector: u.Connector, Key: u.Key, Class: mine[0].Class}
	for _, d := range differ {
		f.Peers = append(f.Peers, d.member)
	}
	return f, true
}

// versionUnverified is IDPluginVersionUnverified: the connector asks for a
// version and this worker's jar states none, or only in its file name.
func versionUnverified(u Use, vr versionRange, mine []Plugin) (Finding, bool) {
	if vr.any() {
		return Finding{}, false
	}
	for _, p := range mine {
		if p.VersionFrom.trusted() {
			return Finding{}, false
		}
	}
	return Finding{Result: checks.Result{
		ID: IDPluginVersionUnverified, Severity: checks.Info, Subject: "connector " + u.Connector,
		Summary: fmt.Sprintf("connector %q asks for %s version %s, which this worker's jar does not state reliably: only the worker can tell",
			u.Connector, mine[0].Class, vr.spec),
		Evidence: fmt.Sprintf("%s=%s; this worker has %s", versionKey(u.Key), vr.spec, versionsOf(mine)),
		Fix:      "give the plugin's jar an Implementation-Version in its MANIFEST.MF, or check GET /connector-plugins on this worker once it runs",
	}, Connector: u.Connector, Key: u.Key, Class: mine[0].Class}, true
}

// noManifestFindings are IDPluginNoManifest, one per location: plugins
// only the reflective scan finds (it reads every class of the location at
// each start), and under service_load plugins never loaded.
func noManifestFindings(inv *Inventory) []Finding {
	var out []Finding
	for _, g := range byLocation(inv.Plugins, FoundScan) {
		sev, summary := checks.Info, "found only by Connect's reflective scan, which reads every class at each start"
		if inv.Discovery == HybridFail {
			sev, summary = checks.Warning, "plugin.discovery=hybrid_fail makes the worker refuse to start"
		}
		out = append(out, noManifest(g, sev, summary))
	}
	for _, g := range byLocation(inv.Invisible, "") {
		out = append(out, noManifest(g, checks.Info, "plugin.discovery=service_load ignores them: the worker does not load them"))
	}
	return out
}

// noManifest renders one location's plugins without manifests.
func noManifest(g []Plugin, sev checks.Severity, why string) Finding {
	loc := g[0].Location
	fix := fmt.Sprintf("bin/connect-plugin-path.sh sync-manifests --plugin-location %s (KIP-898) writes the manifests; then plugin.discovery=service_load skips the scan", loc)
	if loc == ClasspathLocation {
		fix = "add META-INF/services manifests to these jars, or move them to a plugin.path directory and run bin/connect-plugin-path.sh sync-manifests (KIP-898)"
	}
	return Finding{Result: checks.Result{
		ID: IDPluginNoManifest, Severity: sev, Subject: loc,
		Summary:  fmt.Sprintf("%d plugins in %s have no ServiceLoader manifest: %s", len(g), loc, why),
		Evidence: classList(g, 5),
		Fix:      fix,
	}}
}

// problemFindings are IDPluginPathProblem: what the worker skips.
func problemFindings(inv *Inventory) []Finding {
	var out []Finding
	for _, p := range inv.Problems {
		fix := p.Fix
		if fix == "" {
			fix = fixMount
		}
		out = append(out, Finding{Result: checks.Result{
			ID: IDPluginPathProblem, Severity: checks.Warning, Subject: p.Path,
			Summary:  fmt.Sprintf("%s: %s", p.Path, p.Detail),
			Evidence: "this worker looked in " + inv.Where(),
			Fix:      fix,
		}})
	}
	return out
}

// byLocation groups the plugins found a given way by location, in order;
// an empty found takes them all.
func byLocation(ps []Plugin, found Discovery) [][]Plugin {
	var order []string
	groups := map[string][]Plugin{}
	for _, p := range ps {
		if found != "" && p.Found != found {
			continue
		}
		if _, ok := groups[p.Location]; !ok {
			order = append(order, p.Location)
		}
		groups[p.Location] = append(groups[p.Location], p)
	}
	out := make([][]Plugin, 0, len(order))
	for _, loc := range order {
		out = append(out, groups[loc])
	}
	return out
}

// classList names up to n plugins' classes, then how many more.
func classList(ps []Plugin, n int) string {
	var names []string
	for i, p := range ps {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(ps)-n))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", p.Class, p.Kind))
	}
	return strings.Join(names, ", ")
}

// kindWord names a plugin type in prose.
func kindWord(k Kind) string {
	switch k {
	case KindConnector, KindSource, KindSink:
		return "the connector class"
	case KindHeaderConverter:
		return "the header converter"
	case "":
		return "the class"
	}
	return "the " + strings.ReplaceAll(string(k), "_", " ")
}

// peerPhrase names the peers concerned: "peer http://a:8083" or "2 peers
// (http://a:8083, http://b:8083)".
func peerPhrase(ps []peerMatch) string {
	if len(ps) == 1 {
		return "peer " + ps[0].member
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.member
	}
	return fmt.Sprintf("%d peers (%s)", len(ps), strings.Join(names, ", "))
}

// peerVersions lists each peer's versions: "http://a:8083 has version 4.1.1".
func peerVersions(ps []peerMatch) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.member + " has " + versionsOf(p.plugins)
	}
	return strings.Join(parts, ", ")
}

// versionsOf names the distinct versions of plugins, with where this
// worker's come from: "version 2.5.0 (manifest)".
func versionsOf(ps []Plugin) string {
	seen := map[string]bool{}
	var vs []string
	for _, p := range ps {
		v := p.Version
		if v == "" {
			v = "no stated version"
		}
		if p.VersionFrom != VersionUnknown {
			v += " (from " + string(p.VersionFrom) + ")"
		}
		if !seen[v] {
			seen[v] = true
			vs = append(vs, v)
		}
	}
	if len(vs) == 1 && vs[0] == "no stated version" {
		return vs[0]
	}
	return "version " + strings.Join(vs, ", ")
}

// versionText is " version X" for the first known version of ps, or "".
func versionText(ps []Plugin) string {
	for _, p := range ps {
		if p.Version != "" {
			return " version " + p.Version
		}
	}
	return ""
}

// knownVersion reports a plugin of ps with a stated version.
func knownVersion(ps []Plugin) bool {
	for _, p := range ps {
		if p.Version != "" {
			return true
		}
	}
	return false
}

// shareVersion reports a version both lists hold (Maven-equal: 1.0 = 1.0.0).
func shareVersion(a, b []Plugin) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Version != "" && y.Version != "" && compareVersions(x.Version, y.Version) == 0 {
				return true
			}
		}
	}
	return false
}

// versionKey is the KIP-891 version setting beside a class setting:
// connector.class -> connector.plugin.version, transforms.x.type ->
// transforms.x.plugin.version, value.converter ->
// value.converter.plugin.version.
func versionKey(key string) string {
	switch {
	case key == "connector.class":
		return "connector.plugin.version"
	case strings.HasSuffix(key, ".type"):
		return strings.TrimSuffix(key, "type") + "plugin.version"
	}
	return key + ".plugin.version"
}
