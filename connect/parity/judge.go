package parity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// Ids of the parity checks (stable: metrics and alert rules match on them).
const (
	// IDSettingDiffers: a must-equal setting differs from the group's.
	IDSettingDiffers = "worker-setting-differs"
	// IDSignatureNotVerified: a worker's signature algorithm is missing
	// from another worker's verification list.
	IDSignatureNotVerified = "worker-signature-not-verified"
	// IDStagedTransition: a staged setting one step from the group's
	// (warning) or more (error).
	IDStagedTransition = "worker-setting-transition"
	// IDLeaderSettingDiffers: a leader-wins setting differs.
	IDLeaderSettingDiffers = "worker-leader-setting-differs"
	// IDAdvertisedURLShared: a live member already advertises this
	// worker's URL.
	IDAdvertisedURLShared = "worker-advertised-url-shared"
)

// Peer is a live, registered worker of the group.
type Peer struct {
	URL, Host string
	// Settings is its published fingerprint; nil when its connect-init
	// predates the fingerprint (unknown, not drift).
	Settings Fingerprint
}

// Subject is one worker judged against the group's live workers.
type Subject struct {
	GroupID string
	// URL and Settings are the judged worker's.
	URL      string
	Settings Fingerprint
	// Peers are the other live, registered workers.
	Peers []Peer
	// GroupProtocol is the protocol the group's members use now, from
	// DescribeGroups ("default" is eager, "compatible", "sessioned");
	// "" when unknown (no member, or no Stable snapshot).
	GroupProtocol string
	// SharedURL lists the live members (their client hosts) that advertise
	// URL although they are not this worker.
	SharedURL []string
	// Name renders a setting for messages (the image's variable and the
	// property); nil: the property.
	Name func(key string) string
}

// Difference is one setting on which the judged worker and the group
// disagree: a check's subject.
type Difference struct {
	GroupID string
	Row     Row
	// Key is the setting (a provider's own class key for that row);
	// Setting is how the messages name it.
	Key, Setting string
	// URL and Mine are the judged worker and its value ("" unset).
	URL, Mine string
	// Holders maps each other value to the workers holding it.
	Holders map[string][]string
	// Steps is the largest distance of a Staged row between Mine and a
	// holder's value (-1: a value that is no stage).
	Steps int
	// Unknown counts the live workers whose fingerprint is unknown.
	Unknown int
}

// Checks are the parity rules over one difference, in the checks style:
// the group step fails on the error results, doctor renders all.
func Checks() []checks.Check[Difference] {
	is := func(c Class) func(Difference) bool { return func(d Difference) bool { return d.Row.Class == c } }
	subject := func(d Difference) string { return d.Setting }
	return []checks.Check[Difference]{
		{ID: IDSettingDiffers, Severity: checks.Error, Test: is(MustEqual), Subject: subject,
			Summary: func(d Difference) string {
				return fmt.Sprintf("worker %s has %s=%s but the live workers of group %q have %s: %s", d.URL, d.Setting, show(d.Mine), d.GroupID, holders(d), d.Row.Effect)
			},
			Evidence: evidence,
			Fix: func(d Difference) string {
				return fmt.Sprintf("set %s on this worker to the group's value (%s), or change it on every worker of the group together: stop them all, change it, start them", d.Setting, groupValue(d))
			}},
		{ID: IDSignatureNotVerified, Severity: checks.Error, Test: is(Compatible), Subject: subject,
			Summary: func(d Difference) string {
				return fmt.Sprintf("inter-worker signatures of group %q do not verify: %s=%s on %s against %s: %s", d.GroupID, d.Setting, show(d.Mine), d.URL, holders(d), d.Row.Effect)
			},
			Evidence: evidence,
			Fix: func(d Difference) string {
				return "add every worker's inter.worker.signature.algorithm to inter.worker.verification.algorithms on every worker first (a rolling restart), then change the signature algorithm (another rolling restart)"
			}},
		{ID: IDStagedTransition, Severity: checks.Warning, Test: is(Staged), Subject: subject,
			Escalate: func(d Difference) bool { return d.Steps != 1 },
			Summary: func(d Difference) string {
				return fmt.Sprintf("worker %s has %s=%s and the live workers of group %q have %s (%s): %s", d.URL, d.Setting, show(d.Mine), d.GroupID, holders(d), steps(d), d.Row.Effect)
			},
			Evidence: evidence,
			Fix: func(d Difference) string {
				return fmt.Sprintf("move %s one step at a time (%s) with a rolling restart of every worker at each step; set it on this worker to %s", d.Setting, strings.Join(d.Row.Stages, " -> "), groupValue(d))
			}},
		{ID: IDLeaderSettingDiffers, Severity: checks.Warning, Test: is(LeaderWins), Subject: subject,
			Summary: func(d Difference) string {
				return fmt.Sprintf("worker %s has %s=%s and the live workers of group %q have %s: only the leader's value acts, so %s", d.URL, d.Setting, show(d.Mine), d.GroupID, holders(d), d.Row.Effect)
			},
			Evidence: evidence,
			Fix: func(d Difference) string {
				return fmt.Sprintf("give %s one value on every worker", d.Setting)
			}},
		{ID: IDAdvertisedURLShared, Severity: checks.Error, Test: is(MustDiffer), Subject: subject,
			Summary: func(d Difference) string {
				return fmt.Sprintf("worker %s advertises the REST address a live member of group %q already advertises (%s): %s", d.URL, d.GroupID, holders(d), d.Row.Effect)
			},
			Fix: func(d Difference) string {
				return "give this worker its own rest.advertised.host.name/rest.advertised.port (CONNECT_REST_ADVERTISED_HOST_NAME / _PORT): an address only it answers on"
			}},
	}
}

func show(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// holders renders "X on w1, w2; Y on w3".
func holders(d Difference) string {
	vals := make([]string, 0, len(d.Holders))
	for v := range d.Holders {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = show(v) + " on " + strings.Join(d.Holders[v], ", ")
	}
	return strings.Join(parts, "; ")
}

// groupValue is the value most live workers hold.
func groupValue(d Difference) string {
	best, n := "", -1
	for v, ws := range d.Holders {
		if len(ws) > n || len(ws) == n && v < best {
			best, n = v, len(ws)
		}
	}
	return show(best)
}

func steps(d Difference) string {
	if d.Steps < 0 {
		return "not a step of " + strings.Join(d.Row.Stages, " -> ")
	}
	if d.Steps == 1 {
		return "one step apart: a rolling change in progress"
	}
	return fmt.Sprintf("%d steps apart; one at a time is allowed", d.Steps)
}

func evidence(d Difference) string {
	e := "Kafka: " + d.Row.Source
	if d.Unknown > 0 {
		e += fmt.Sprintf("; %d live worker(s) publish no settings (connect-init before the fingerprint): not compared", d.Unknown)
	}
	return e
}

// Results judges s: the broken rules of Checks over each difference.
func Results(s Subject) []checks.Result {
	var out []checks.Result
	for _, d := range Judge(s) {
		out = append(out, checks.Run(Checks(), d)...)
	}
	return out
}

// Judge returns the settings on which s's worker and its group's live
// workers disagree, in table order. Peers with no fingerprint are counted
// as unknown, never as drift; a setting a peer does not publish (the
// version of one that could not tell it) is not compared with it.
func Judge(s Subject) []Difference {
	name := s.Name
	if name == nil {
		name = func(k string) string { return k }
	}
	unknown := 0
	for _, p := range s.Peers {
		if p.Settings == nil {
			unknown++
		}
	}
	var out []Difference
	if len(s.SharedURL) > 0 {
		r, _ := RowOf(KeyAdvertisedURL)
		out = append(out, Difference{GroupID: s.GroupID, Row: r, Key: r.Key, Setting: name(r.Key), URL: s.URL, Mine: s.URL,
			Holders: map[string][]string{s.URL: s.SharedURL}})
	}
	for _, k := range allKeys(s) {
		r, ok := rowFor(k)
		if !ok || s.Settings == nil {
			continue
		}
		d := Difference{GroupID: s.GroupID, Row: r, Key: k, Setting: name(k), URL: s.URL, Mine: s.Settings[k], Holders: map[string][]string{}, Unknown: unknown}
		switch r.Class {
		case MustEqual, LeaderWins, Staged:
			differ(&d, s)
		case Compatible:
			compatible(&d, s)
		default:
			continue
		}
		if len(d.Holders) > 0 {
			out = append(out, d)
		}
	}
	if d, ok := groupProtocol(s, name, out); ok {
		out = append(out, d)
	}
	return out
}

// allKeys are the keys s's worker or a peer publishes, in table order.
func allKeys(s Subject) []string {
	union := Fingerprint{}
	for k := range s.Settings {
		union[k] = ""
	}
	for _, p := range s.Peers {
		for k := range p.Settings {
			union[k] = ""
		}
	}
	return union.Keys()
}

// differ fills d's holders of other values (and the steps of a Staged
// row).
func differ(d *Difference, s Subject) {
	if _, ok := s.Settings[d.Key]; !ok {
		return // not published by this worker (its version unknown; a provider only peers declare, judged on config.providers)
	}
	for _, p := range s.Peers {
		pv, ok := p.Settings[d.Key]
		if !ok || pv == d.Mine {
			continue
		}
		d.Holders[pv] = append(d.Holders[pv], p.URL)
		if d.Row.Class == Staged {
			n := stageDistance(d.Row, d.Mine, pv)
			if n < 0 || d.Steps >= 0 && n > d.Steps {
				d.Steps = n
			}
		}
	}
}

// stageDistance is how many steps of r lie between a and b; -1 when one
// is no stage.
func stageDistance(r Row, a, b string) int {
	ia, ib := stage(r, a), stage(r, b)
	if ia < 0 || ib < 0 {
		return -1
	}
	if ia > ib {
		return ia - ib
	}
	return ib - ia
}

func stage(r Row, v string) int {
	for i, st := range r.Stages {
		if st == v {
			return i
		}
	}
	return -1
}

// compatible fills d (the signature or the verification row): the peers
// whose verification list lacks this worker's signature algorithm, or
// whose signature algorithm this worker's list lacks.
func compatible(d *Difference, s Subject) {
	for _, p := range s.Peers {
		if p.Settings == nil {
			continue
		}
		switch d.Key {
		case KeySignature:
			if list, ok := p.Settings[KeyVerification]; ok && !inList(d.Mine, list) {
				v := "verification list " + show(list)
				d.Holders[v] = append(d.Holders[v], p.URL)
			}
		case KeyVerification:
			if sig, ok := p.Settings[KeySignature]; ok && !inList(sig, d.Mine) {
				v := "signature algorithm " + show(sig)
				d.Holders[v] = append(d.Holders[v], p.URL)
			}
		}
	}
}

func inList(item, list string) bool {
	for _, it := range splitList(list) {
		if it == item {
			return true
		}
	}
	return false
}

// groupProtocol judges this worker's connect.protocol against the
// protocol the group's members use now (DescribeGroups), which needs no
// fingerprint; nothing when the fingerprints already disagree on it.
func groupProtocol(s Subject, name func(string) string, found []Difference) (Difference, bool) {
	if s.GroupProtocol == "" || s.Settings == nil {
		return Difference{}, false
	}
	for _, d := range found {
		if d.Key == KeyProtocol {
			return Difference{}, false
		}
	}
	r, _ := RowOf(KeyProtocol)
	inUse := strings.ToLower(s.GroupProtocol)
	if inUse == "default" {
		inUse = "eager" // ConnectProtocolCompatibility.EAGER's protocol name
	}
	mine := s.Settings[KeyProtocol]
	if mine == inUse {
		return Difference{}, false
	}
	return Difference{GroupID: s.GroupID, Row: r, Key: KeyProtocol, Setting: name(KeyProtocol), URL: s.URL, Mine: mine,
		Holders: map[string][]string{inUse: {"the group's members (the protocol in use, DescribeGroups)"}}, Steps: stageDistance(r, mine, inUse)}, true
}
