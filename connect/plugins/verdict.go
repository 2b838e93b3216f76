package plugins

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// The findings' stable ids: scripts and alerting match on them, so they
// are never renamed or reused for another condition.
const (
	// IDPluginMissing: a class the cluster uses that peers load and this
	// worker cannot: it would fail whatever of that connector it is given.
	IDPluginMissing = "plugin-missing"
	// IDPluginMissingEverywhere: a class no member can load: the connector
	// is broken everywhere; refusing would only take more workers down.
	IDPluginMissingEverywhere = "plugin-missing-everywhere"
	// IDPluginVersionDiffers: this worker and peers have different
	// versions of a plugin the cluster uses.
	IDPluginVersionDiffers = "plugin-version-differs"
	// IDPluginVersionUnverified: a connector asks for a plugin version and
	// this worker's jar does not say its version reliably.
	IDPluginVersionUnverified = "plugin-version-unverified"
	// IDPluginNoManifest: plugins without a ServiceLoader manifest, found
	// only by the slow reflective scan, or ignored under service_load.
	IDPluginNoManifest = "plugin-no-manifest"
	// IDPluginPathProblem: a plugin.path entry, location or file the
	// worker skips.
	IDPluginPathProblem = "plugin-path-problem"
)

// Finding is one verdict result, shaped as connect-init's check results
// (id, severity, subject, summary, evidence, fix) with the plugin facts
// kept apart for doctor's JSON.
type Finding struct {
	// Result is the finding as every check reports one: ID (one of the
	// IDPlugin* ids), Severity (before CheckMode.Apply), Subject (the
	// connector, "connector <name>", or the location), Summary, Evidence
	// (the setting, the members' versions, where this worker looked) and
	// Fix.
	checks.Result
	// Connector, Key and Class are the use concerned (Class as resolved
	// when a member resolves it, else as written); empty for location
	// findings.
	Connector string `json:"connector,omitempty"`
	Key       string `json:"key,omitempty"`
	Class     string `json:"class,omitempty"`
	// Peers are the members that load the class (IDPluginMissing) or
	// that run another version (IDPluginVersionDiffers).
	Peers []string `json:"peers,omitempty"`
}

// Input is what the verdict judges: the classes the cluster's connectors
// use, what this worker can load, and what each other member reports.
type Input struct {
	// Uses are the classes the connectors name (UsedClasses).
	Uses []Use
	// Local is this worker's scan (Scan), or a member's REST answer
	// (PeerInventory) when doctor judges that member.
	Local *Inventory
	// Peers are the other members that answered; a member that did not
	// answer is left out (it can prove nothing either way).
	Peers []Peer
}

// Verdict judges plugin parity, as a pure function of its input: for each
// use, whether this worker can load what the peers load (else
// IDPluginMissing, an error, or IDPluginMissingEverywhere when no member
// can, a warning), and whether the versions agree (IDPluginVersionDiffers,
// IDPluginVersionUnverified); then this worker's plugins without manifests
// (IDPluginNoManifest) and the entries it skips (IDPluginPathProblem).
// Findings come errors first, then in input order.
func Verdict(in Input) []Finding {
	local := in.Local
	if local == nil {
		local = &Inventory{}
	}
	var out []Finding
	for _, u := range in.Uses {
		out = append(out, judgeUse(u, local, in.Peers)...)
	}
	out = append(out, noManifestFindings(local)...)
	out = append(out, problemFindings(local)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() < out[j].Severity.Rank() })
	return out
}

// peerMatch is what one peer loads for a use.
type peerMatch struct {
	member  string
	plugins []Plugin
}

// judgeUse judges one use against this worker and the peers.
func judgeUse(u Use, local *Inventory, peers []Peer) []Finding {
	vr, err := parseVersionRange(u.Version)
	if err != nil {
		vr = versionRange{} // Connect refuses the config itself: no plugin question
	}
	all := local.Lookup(u.Class, u.Kind)
	mine := keepVersions(all, vr, false)
	var have []peerMatch
	for _, p := range peers {
		if ps := keepVersions(lookup(asPlugins(p.Member, p.Plugins), u.Class, u.Kind), vr, true); len(ps) > 0 {
			have = append(have, peerMatch{member: p.Member, plugins: ps})
		}
	}
	switch {
	case len(mine) == 0 && len(have) > 0:
		return []Finding{missingHere(u, vr, local, all, have)}
	case len(mine) == 0:
		return []Finding{missingEverywhere(u, local, len(peers))}
	}
	var out []Finding
	if f, ok := versionDiffers(u, mine, have); ok {
		out = append(out, f)
	}
	if f, ok := versionUnverified(u, vr, mine); ok {
		out = append(out, f)
	}
	return out
}

// keepVersions keeps the plugins that meet the version requirement. A
// peer's version is the plugin's own word; this worker's is what its jar
// says, so a version from a file name (or none) is kept unless strict: the
// start is never refused on a guess.
func keepVersions(ps []Plugin, vr versionRange, strict bool) []Plugin {
	if vr.any() {
		return ps
	}
	var out []Plugin
	for _, p := range ps {
		if (!strict && !p.VersionFrom.trusted()) || (p.Version != "" && vr.contains(p.Version)) {
			out = append(out, p)
		}
	}
	return out
}

// missingHere is IDPluginMissing: peers load the class, this worker
// cannot.
func missingHere(u Use, vr versionRange, local *Inventory, mine []Plugin, have []peerMatch) Finding {
	class := have[0].plugins[0].Class
	f := Finding{Result: checks.Result{ID: IDPluginMissing, Severity: checks.Error, Subject: "connector " + u.Connector},
		Connector: u.Connector, Key: u.Key, Class: class}
	for _, h := range have {
		f.Peers = append(f.Peers, h.member)
	}
	f.Summary = fmt.Sprintf("connector %q needs %s %s, which %s can load and this worker cannot",
		u.Connector, kindWord(u.Kind), class, peerPhrase(have))
	ev := []string{fmt.Sprintf("%s=%s", u.Key, u.Class)}
	if !vr.any() {
		ev = append(ev, fmt.Sprintf("%s=%s", versionKey(u.Key), vr.spec))
	}
	ev = append(ev, "peers: "+peerVersions(have))
	if len(mine) > 0 {
		ev = append(ev, "this worker has "+versionsOf(mine))
	}
	hidden := lookup(local.Invisible, u.Class, u.Kind)
	if len(hidden) > 0 {
		ev = append(ev, fmt.Sprintf("it is in %s without a ServiceLoader manifest, which plugin.discovery=service_load ignores", hidden[0].Location))
	}
	ev = append(ev, "this worker looked in "+local.Where())
	f.Evidence = strings.Join(ev, "; ")
	f.Fix = missingFix(u, class, local, mine, hidden, have)
	return f
}

// missingFix says how to give this worker what its peers load.
func missingFix(u Use, class string, local *Inventory, mine, hidden []Plugin, have []peerMatch) string {
	want := versionText(have[0].plugins)
	switch {
	case len(hidden) > 0:
		return fmt.Sprintf("run bin/connect-plugin-path.sh sync-manifests --plugin-location %s on this image (KIP-898) so that ServiceLoader finds it, or set plugin.discovery=hybrid_warn", hidden[0].Location)
	case len(mine) > 0:
		return fmt.Sprintf("install %s%s on this worker, as on %s, or change %s of connector %q", class, want, have[0].member, versionKey(u.Key), u.Connector)
	}
	fix := fmt.Sprintf("install the plugin that provides %s%s on this worker, as on %s: in a directory under one of its plugin.path entries, or on its classpath; check that the image has the jar and that the volume holding it is mounted, then restart", class, want, have[0].member)
	for _, e := range local.PluginPath {
		if e.Problem != "" {
			fix += fmt.Sprintf("; plugin.path entry %s: %s", e.Path, e.Problem)
		}
	}
	return fix
}

// missingEverywhere is IDPluginMissingEverywhere: no member loads the
// class; the connector fails wherever it runs, and refusing this worker
// would not help it.
func missingEverywhere(u Use, local *Inventory, peers int) Finding {
	return Finding{Result: checks.Result{
		ID: IDPluginMissingEverywhere, Severity: checks.Warning, Subject: "connector " + u.Connector,
		Summary: fmt.Sprintf("connector %q needs %s %s, which no member can load (this worker and %d peers that answered): it fails on whichever worker runs it",
			u.Connector, kindWord(u.Kind), u.Class, peers),
		Evidence: fmt.Sprintf("%s=%s; this worker looked in %s", u.Key, u.Class, local.Where()),
		Fix:      fmt.Sprintf("install the plugin on every worker, or correct %s of connector %q (or delete the connector)", u.Key, u.Connector),
	}, Connector: u.Connector, Key: u.Key, Class: u.Class}
}
