// Package buildinfo tells which build of connect-init is running: the
// module version and the commit it was built from, read from the build
// information the Go toolchain embeds in every binary. A user who reports a
// problem, or checks a release against its checksums and SBOM, needs the
// revision, not only a version name: a plain `go build` or `go install`
// records both, so no -ldflags stamp is needed for them to be known.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is one build's identity.
type Info struct {
	// Version is the release name: the -ldflags stamp when there is one,
	// else the module version the toolchain recorded (a tag such as v1.2.3
	// for `go install ...@v1.2.3`, a pseudo-version derived from the VCS
	// for `go build` in a checkout), else "(devel)".
	Version string `json:"version"`
	// Module is the main module's path.
	Module string `json:"module,omitempty"`
	// Revision is the VCS commit (vcs.revision), empty when the build
	// recorded none (-buildvcs=false, or no checkout).
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time (vcs.time, RFC 3339), not the build's:
	// two builds of one commit say the same.
	Time string `json:"time,omitempty"`
	// Modified is true when the checkout had uncommitted changes: such a
	// binary is not the commit's.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version,omitempty"`
}

// Read is this binary's Info. stamp is the -ldflags -X value of the
// caller's version variable; it overrides the module version when set
// (anything but "" and "dev"), so release builds keep their name.
func Read(stamp string) Info {
	bi, _ := debug.ReadBuildInfo()
	return From(bi, stamp)
}

// From is Read on given build information (nil when the binary has none),
// for tests.
func From(bi *debug.BuildInfo, stamp string) Info {
	var info Info
	if bi != nil {
		info.Module = bi.Main.Path
		info.Version = bi.Main.Version
		info.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.time":
				info.Time = s.Value
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if stamp != "" && stamp != "dev" {
		info.Version = stamp
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	return info
}

// String is the one line `connect-init version` prints after the name:
// the version, then the revision and its time when known, and "modified"
// for a build from a changed checkout.
func (i Info) String() string {
	parts := []string{i.Version}
	if i.Revision != "" {
		parts = append(parts, "revision "+i.Revision)
	}
	if i.Time != "" {
		parts = append(parts, i.Time)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	return strings.Join(parts, " ")
}
