package gate

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/restclient"
)

// A member's REST worker that accepts connections and never answers (its
// herder stuck, a GC pause that does not end) costs the plugin look two
// bounded attempts, not a hang: the member is reported as not answering,
// with why, and the look goes on (issue 48's "a REST worker that hangs";
// doctor's plugin parity look and the plugins step both ask through
// PluginPeers).
func TestPluginPeersAgainstAHangingWorker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	url := "http://" + ln.Addr().String() + "/"
	done := make(chan struct{})
	var failed []PluginPeerError
	go func() {
		defer close(done)
		_, failed = PluginPeers(context.Background(), &restclient.Client{Timeout: 300 * time.Millisecond}, []string{url})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("PluginPeers waits on a worker that never answers (a hang, not a bounded look)")
	}
	if len(failed) != 1 || failed[0].URL != url || !strings.Contains(failed[0].Error, "GET /connector-plugins") {
		t.Fatalf("failed = %+v, want the hanging member named with its GET", failed)
	}
	if n := accepted.Load(); n < 2 {
		t.Errorf("%d connection(s) accepted, want 2 attempts (a busy member may drop one connection)", n)
	}
	t.Logf("hanging member reported: %s", failed[0].Error)
}
