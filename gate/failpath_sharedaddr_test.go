package gate

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
)

// Two brokers advertising one address (a copied advertised.listeners):
// the look ends without waiting for the deadline, both brokers are named
// with the shared address, and the fix says to give each broker its own
// advertised.listeners, not to open a firewall. Before issue 48's fix the
// second broker's ping waited on the bootstrap reply the first had taken,
// so the look took the whole deadline and the fix blamed reachability.
func TestProbeTwoBrokersOneAddress(t *testing.T) {
	b1 := probeBroker(t, 1)
	// MockMetadataResponse keys its brokers by address: answer with both.
	md := &sarama.MetadataResponse{Version: 7, ControllerID: 1}
	md.AddBroker(b1.Addr(), 1)
	md.AddBroker(b1.Addr(), 2)
	b1.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 7},  // Metadata
			{ApiKey: 18, MinVersion: 0, MaxVersion: 3}, // ApiVersions
		}),
		"MetadataRequest": sarama.NewMockWrapper(md),
	})
	g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b1.Addr()}, Expected: 2, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0))}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rep := g.Probe(ctx)
	if ctx.Err() != nil {
		t.Fatalf("the look lasted until its deadline: %+v", rep)
	}
	if rep.Ready {
		t.Fatalf("probe %+v ready, want two brokers behind one address refused", rep)
	}
	if ids := rep.SharedAddrs[b1.Addr()]; len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("shared addresses %v, want brokers 1 and 2 at %s", rep.SharedAddrs, b1.Addr())
	}
	for _, st := range rep.Brokers {
		if st.Up || !strings.Contains(st.Err, "brokers 1, 2 all advertise "+b1.Addr()) {
			t.Errorf("broker %d: %+v, want not up, naming the shared address", st.ID, st)
		}
	}
	fix := g.fix(rep)
	if !strings.Contains(fix, "brokers 1, 2 all advertise "+b1.Addr()) || !strings.Contains(fix, "advertised.listeners") ||
		strings.Contains(fix, "reachable from this container") {
		t.Errorf("fix %q, want the shared address named and advertised.listeners of each broker", fix)
	}
}
