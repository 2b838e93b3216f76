package startup

import (
	"slices"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/settings"
)

// Run's watcher serves metrics where CONNECT_INIT_APPLY_METRICS_ADDR says;
// the one-shot apply (no CONNECT_INIT_APPLY_WATCH) never does.
func TestApplyChildArgsMetrics(t *testing.T) {
	s := settings.Read([]string{"CONNECT_INIT_CONNECTORS_DIR=/c", "CONNECT_INIT_APPLY_WATCH=true", "CONNECT_INIT_APPLY_METRICS_ADDR=:9464"})
	got := applyChildArgs(s)
	if i := slices.Index(got, "--metrics-addr"); i < 0 || got[i+1] != ":9464" || !slices.Contains(got, "--watch") {
		t.Errorf("watcher: %q", strings.Join(got, " "))
	}
	s.ApplyWatch = false
	if got := applyChildArgs(s); slices.Contains(got, "--metrics-addr") || slices.Contains(got, "--watch") {
		t.Errorf("one-shot: %q", strings.Join(got, " "))
	}
}
