package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The shared registry lints clean and is served at /metrics; a second
// Serve on the same address fails at once.
func TestServeRegistry(t *testing.T) {
	reg := NewRegistry()
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %+v", err, problems)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"process_resident_memory_bytes", "go_goroutines", "connect_init_build_info{goversion=\"go"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if _, err := Serve(ctx, addr.String(), reg); err == nil {
		t.Error("a second Serve on an address in use succeeded")
	}
}
