package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/buildinfo"
	"github.com/connect-init/connect-init/metrics"
)

// The watchers' connect_init_build_info serves the version `connect-init
// version` prints, the -ldflags stamp when there is one, not the module
// version the toolchain recorded (issue 51): one source for both.
func TestBuildInfoMetricIsTheVersionCommand(t *testing.T) {
	saved := version
	defer func() { version = stampBuild(saved) }()
	version = stampBuild("v9.8.7-stamp")

	var stdout bytes.Buffer
	if code := newCLI(nil, &stdout, io.Discard).run(context.Background(), []string{"version"}); code != 0 {
		t.Fatalf("version exited %d", code)
	}
	fields := strings.Fields(stdout.String())
	if len(fields) < 2 || fields[1] != "v9.8.7-stamp" {
		t.Fatalf("connect-init version printed %q, want the stamp v9.8.7-stamp", stdout.String())
	}
	mfs, err := metrics.NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, mf := range mfs {
		if mf.GetName() != "connect_init_build_info" {
			continue
		}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
	}
	if labels["version"] != fields[1] {
		t.Errorf("connect_init_build_info{version=%q}, but connect-init version prints %q", labels["version"], fields[1])
	}
	if want := buildinfo.Read("").Revision; labels["revision"] != want {
		t.Errorf("connect_init_build_info{revision=%q}, want %q", labels["revision"], want)
	}
}
