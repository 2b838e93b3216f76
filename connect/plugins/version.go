package plugins

import (
	"fmt"
	"strconv"
	"strings"
)

// VersionSource says where this worker's version of a plugin comes from,
// since without a JVM the plugin's own version() cannot be called: a
// peer's REST answer is the plugin's word, ours is what the jar says.
type VersionSource string

// The version sources, from the most to the least reliable.
const (
	// VersionKafka: a plugin of Kafka's own packages (org.apache.kafka.*)
	// reports AppInfoParser.getVersion(), the version of the kafka-clients
	// jar on the worker's classpath (kafka/kafka-version.properties).
	VersionKafka VersionSource = "kafka-clients"
	// VersionManifest: the Implementation-Version of the jar's MANIFEST.MF,
	// which most plugins' version() returns.
	VersionManifest VersionSource = "manifest"
	// VersionFileName: the version in the jar's file name, a fallback.
	VersionFileName VersionSource = "file-name"
	// VersionUnknown: nothing says (a class directory, a bare jar name).
	VersionUnknown VersionSource = ""
)

// trusted reports whether a version from this source is close enough to
// the plugin's own version() to refuse a start on it.
func (s VersionSource) trusted() bool { return s == VersionKafka || s == VersionManifest }

// versionRange is a KIP-891 plugin version requirement (the
// *.plugin.version settings): "latest" or empty means any version, a bare
// version is a hard requirement (PluginUtils.connectorVersionRequirement
// encloses it in [ ]), else a Maven version range such as "[1.0,2.0)" or
// "[1.0,2.0),[3.0,)".
type versionRange struct {
	spec   string
	ranges []bounds // empty: any version
}

// bounds is one interval of a Maven version range; "" is unbounded.
type bounds struct {
	low, high         string
	lowIncl, highIncl bool
}

// parseVersionRange reads a *.plugin.version value.
func parseVersionRange(spec string) (versionRange, error) {
	s := strings.TrimSpace(spec)
	vr := versionRange{spec: s}
	if s == "" || s == "latest" {
		return vr, nil
	}
	if s[0] != '[' && s[0] != '(' {
		vr.ranges = []bounds{{low: s, high: s, lowIncl: true, highIncl: true}}
		return vr, nil
	}
	for s != "" {
		end := strings.IndexAny(s, "])")
		if end < 0 || (s[0] != '[' && s[0] != '(') {
			return versionRange{}, fmt.Errorf("plugins: bad version range %q", spec)
		}
		b, err := parseBounds(s[:end+1])
		if err != nil {
			return versionRange{}, fmt.Errorf("plugins: bad version range %q: %w", spec, err)
		}
		vr.ranges = append(vr.ranges, b)
		s = strings.TrimLeft(strings.TrimSpace(s[end+1:]), ",")
		s = strings.TrimSpace(s)
	}
	return vr, nil
}

// parseBounds reads one "[low,high)" interval, or "[v]" for exactly v.
func parseBounds(r string) (bounds, error) {
	b := bounds{lowIncl: r[0] == '[', highIncl: r[len(r)-1] == ']'}
	inner := r[1 : len(r)-1]
	low, high, comma := strings.Cut(inner, ",")
	b.low, b.high = strings.TrimSpace(low), strings.TrimSpace(high)
	if !comma {
		if !b.lowIncl || !b.highIncl || b.low == "" {
			return bounds{}, fmt.Errorf("single version %q must be enclosed in [ ]", r)
		}
		b.high = b.low
	}
	return b, nil
}

// any reports whether the requirement accepts every version.
func (vr versionRange) any() bool { return len(vr.ranges) == 0 }

// contains reports whether version v meets the requirement.
func (vr versionRange) contains(v string) bool {
	if vr.any() {
		return true
	}
	for _, b := range vr.ranges {
		if b.contains(v) {
			return true
		}
	}
	return false
}

func (b bounds) contains(v string) bool {
	if b.low != "" {
		c := compareVersions(v, b.low)
		if c < 0 || (c == 0 && !b.lowIncl) {
			return false
		}
	}
	if b.high != "" {
		c := compareVersions(v, b.high)
		if c > 0 || (c == 0 && !b.highIncl) {
			return false
		}
	}
	return true
}

// compareVersions orders two versions after Maven's ComparableVersion,
// which Connect uses for plugin versions, in a simplified form: items split
// at '.', '-' and digit/letter changes; numbers compare as numbers and
// rank above qualifiers; the qualifiers alpha < beta < milestone < rc <
// snapshot < "" (= ga, final, release) < sp < any other (alphabetical);
// missing items count as 0 or "".
func compareVersions(a, b string) int {
	x, y := versionItems(a), versionItems(b)
	for i := 0; i < len(x) || i < len(y); i++ {
		var p, q string
		if i < len(x) {
			p = x[i]
		}
		if i < len(y) {
			q = y[i]
		}
		if c := compareItem(p, q); c != 0 {
			return c
		}
	}
	return 0
}

// versionItems splits a version into Maven-style items.
func versionItems(v string) []string {
	var items []string
	cur := strings.Builder{}
	flush := func() {
		items = append(items, cur.String())
		cur.Reset()
	}
	prevDigit := false
	for i, r := range strings.ToLower(strings.TrimSpace(v)) {
		isDigit := r >= '0' && r <= '9'
		switch {
		case r == '.' || r == '-' || r == '_':
			flush()
		case i > 0 && cur.Len() > 0 && isDigit != prevDigit:
			flush()
			cur.WriteRune(r)
		default:
			cur.WriteRune(r)
		}
		prevDigit = isDigit
	}
	flush()
	return items
}

// compareItem compares two version items ("" stands for a missing one).
func compareItem(p, q string) int {
	pn, pErr := strconv.ParseUint(p, 10, 64)
	qn, qErr := strconv.ParseUint(q, 10, 64)
	switch {
	case pErr == nil && qErr == nil:
		return cmpUint(pn, qn)
	case pErr == nil:
		if pn == 0 && isRelease(q) {
			return 0
		}
		return 1
	case qErr == nil:
		if qn == 0 && isRelease(p) {
			return 0
		}
		return -1
	}
	pr, qr := qualifierRank(p), qualifierRank(q)
	if pr != qr {
		return cmpUint(uint64(pr), uint64(qr))
	}
	if pr != qualifierRank("unknown") {
		return 0 // aliases of one qualifier: a = alpha, cr = rc, ga = final = ""
	}
	return strings.Compare(p, q)
}

// isRelease reports the qualifiers that mean "the release itself".
func isRelease(q string) bool { return qualifierRank(q) == 6 }

// qualifierRank orders Maven's known qualifiers; unknown ones rank last.
func qualifierRank(q string) int {
	switch q {
	case "alpha", "a":
		return 1
	case "beta", "b":
		return 2
	case "milestone", "m":
		return 3
	case "rc", "cr":
		return 4
	case "snapshot":
		return 5
	case "", "ga", "final", "release":
		return 6
	case "sp":
		return 7
	}
	return 8
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
