package peerstest

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"
)

func TestDNS(t *testing.T) {
	d, err := StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Set("Worker-1.Connect-Init.test.", "127.0.0.1", "::1")
	d.Set("tasks.connect.connect-init.test", "10.0.9.1", "10.0.9.2")
	d.Set("empty.connect-init.test")
	r := d.Resolver()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	lookup := func(name string) ([]string, error) {
		addrs, err := r.LookupIPAddr(ctx, name)
		var out []string
		for _, a := range addrs {
			out = append(out, a.IP.String())
		}
		slices.Sort(out)
		return out, err
	}
	if got, err := lookup("worker-1.connect-init.test"); err != nil || !slices.Equal(got, []string{"127.0.0.1", "::1"}) {
		t.Errorf("worker-1: %v %v", got, err)
	}
	if got, err := lookup("tasks.connect.connect-init.test"); err != nil || !slices.Equal(got, []string{"10.0.9.1", "10.0.9.2"}) {
		t.Errorf("tasks: %v %v", got, err)
	}
	for _, name := range []string{"missing.connect-init.test", "empty.connect-init.test"} {
		_, err := lookup(name)
		var de *net.DNSError
		if !errors.As(err, &de) || !de.IsNotFound {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if hosts, err := r.LookupHost(ctx, "worker-1.connect-init.test"); err != nil || len(hosts) != 2 {
		t.Errorf("LookupHost: %v %v", hosts, err)
	}
	// Changes are seen at once (TTL 0, no cache).
	d.Set("worker-1.connect-init.test", "10.1.1.1")
	if got, _ := lookup("worker-1.connect-init.test"); !slices.Equal(got, []string{"10.1.1.1"}) {
		t.Errorf("after Set: %v", got)
	}
	d.Delete("worker-1.connect-init.test")
	if _, err := lookup("worker-1.connect-init.test"); err == nil {
		t.Error("after Delete: still resolves")
	}
	if d.Queries() == 0 {
		t.Error("no query reached the server")
	}
}

func TestDNSIgnoresGarbage(t *testing.T) {
	d, err := StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, q := range [][]byte{nil, {1, 2, 3}, make([]byte, 12), append(make([]byte, 12), 0xC0, 0x0C, 0, 1, 0, 1), append(make([]byte, 12), 5, 'a')} {
		_ = d.answer(q) // must not panic
	}
}
