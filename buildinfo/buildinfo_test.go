package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestFrom: the stamp wins over the module version, the VCS settings are
// read, and a binary without build information still names itself.
func TestFrom(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8",
		Main: debug.Module{Path: "github.com/connect-init/connect-init", Version: "v0.0.0-20261203075556-1e12b24d6843"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "1e12b24d6843366c28a7fea9a3c69e5e9d908b54"},
			{Key: "vcs.time", Value: "2026-12-03T07:55:56Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tc := range []struct {
		stamp string
		bi    *debug.BuildInfo
		want  Info
		line  string
	}{
		{"dev", bi, Info{Version: "v0.0.0-20261203075556-1e12b24d6843", Module: "github.com/connect-init/connect-init", Revision: "1e12b24d6843366c28a7fea9a3c69e5e9d908b54",
			Time: "2026-12-03T07:55:56Z", Modified: true, GoVersion: "go1.26.8"},
			"v0.0.0-20261203075556-1e12b24d6843 revision 1e12b24d6843366c28a7fea9a3c69e5e9d908b54 2026-12-03T07:55:56Z modified"},
		{"v1.2.3", bi, Info{Version: "v1.2.3", Module: "github.com/connect-init/connect-init", Revision: "1e12b24d6843366c28a7fea9a3c69e5e9d908b54",
			Time: "2026-12-03T07:55:56Z", Modified: true, GoVersion: "go1.26.8"},
			"v1.2.3 revision 1e12b24d6843366c28a7fea9a3c69e5e9d908b54 2026-12-03T07:55:56Z modified"},
		{"", nil, Info{Version: "(devel)"}, "(devel)"},
		{"v2.0.0", nil, Info{Version: "v2.0.0"}, "v2.0.0"},
	} {
		got := From(tc.bi, tc.stamp)
		if got != tc.want {
			t.Errorf("From(%v, %q) = %+v, want %+v", tc.bi != nil, tc.stamp, got, tc.want)
		}
		if got.String() != tc.line {
			t.Errorf("From(%v, %q).String() = %q, want %q", tc.bi != nil, tc.stamp, got.String(), tc.line)
		}
	}
}
