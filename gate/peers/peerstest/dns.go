// Package peerstest gives tests of REST name resolution their own host
// names without touching /etc/hosts: a tiny authoritative DNS server on
// 127.0.0.1 and a *net.Resolver that asks only it. It works wherever a test
// can bind a UDP port on loopback (no root, no network namespaces), which
// is why connect-init's real-host tests use it.
package peerstest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
)

// DNS answers A and AAAA queries over UDP from a table the test controls.
// Names in the table answer with their addresses of the queried family
// (NOERROR with no answer when there are none); other names answer
// NXDOMAIN. Answers carry TTL 0 and Go's resolver does not cache, so a
// change made with Set is seen by the next lookup: tests use it to imitate
// overlay DNS that lags behind container start.
type DNS struct {
	// Addr is the server's address (127.0.0.1:<port>).
	Addr string

	conn    *net.UDPConn
	mu      sync.Mutex
	records map[string][]net.IP
	queries atomic.Int64
	done    chan struct{}
}

// StartDNS starts a server on a free UDP port of 127.0.0.1. Close stops it.
func StartDNS() (*DNS, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, fmt.Errorf("peerstest: listen for DNS: %w", err)
	}
	d := &DNS{Addr: conn.LocalAddr().String(), conn: conn, records: map[string][]net.IP{}, done: make(chan struct{})}
	go d.serve()
	return d, nil
}

func canonical(name string) string { return strings.TrimSuffix(strings.ToLower(name), ".") }

// Set makes name resolve to ips (IPv4 or IPv6 literals), replacing what it
// resolved to before; no ips makes the name exist without addresses. It
// panics on an invalid literal, which is a bug in the test.
func (d *DNS) Set(name string, ips ...string) {
	var parsed []net.IP
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil {
			panic("peerstest: not an IP address: " + s)
		}
		parsed = append(parsed, ip)
	}
	d.mu.Lock()
	d.records[canonical(name)] = parsed
	d.mu.Unlock()
}

// Delete makes name unknown (NXDOMAIN).
func (d *DNS) Delete(name string) {
	d.mu.Lock()
	delete(d.records, canonical(name))
	d.mu.Unlock()
}

// Queries is the number of queries answered so far.
func (d *DNS) Queries() int64 { return d.queries.Load() }

// Resolver returns a pure-Go resolver that sends every query to d. Like
// any Go resolver it still reads /etc/hosts first, so use names that are
// not there (e.g. under .test).
func (d *DNS) Resolver() *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dialer net.Dialer
			return dialer.DialContext(ctx, "udp", d.Addr)
		},
	}
}

// Close stops the server.
func (d *DNS) Close() error {
	err := d.conn.Close()
	<-d.done
	return err
}

func (d *DNS) serve() {
	defer close(d.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if resp := d.answer(buf[:n]); resp != nil {
			d.queries.Add(1)
			d.conn.WriteToUDP(resp, from)
		}
	}
}

// DNS constants (RFC 1035, RFC 3596).
const (
	typeA      = 1
	typeAAAA   = 28
	classIN    = 1
	rcodeOK    = 0
	rcodeFmt   = 1
	rcodeNX    = 3
	rcodeNoImp = 4
)

// answer builds the response to one query message, nil to drop it.
func (d *DNS) answer(q []byte) []byte {
	if len(q) < 12 || q[2]&0x80 != 0 { // too short, or a response
		return nil
	}
	// Question: one name of labels, then type and class.
	off := 12
	var labels []string
	for {
		if off >= len(q) {
			return nil
		}
		l := int(q[off])
		off++
		if l == 0 {
			break
		}
		if l&0xC0 != 0 || off+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[off:off+l]))
		off += l
	}
	if off+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[off:])
	qclass := binary.BigEndian.Uint16(q[off+2:])
	question := q[12 : off+4]

	opcode := (q[2] >> 3) & 0x0F
	rcode := byte(rcodeOK)
	var answers []net.IP
	switch {
	case opcode != 0:
		rcode = rcodeNoImp
	case binary.BigEndian.Uint16(q[4:]) != 1:
		rcode = rcodeFmt
	default:
		d.mu.Lock()
		ips, ok := d.records[canonical(strings.Join(labels, "."))]
		d.mu.Unlock()
		if !ok {
			rcode = rcodeNX
			break
		}
		for _, ip := range ips {
			if qclass != classIN {
				continue
			}
			if ip4 := ip.To4(); ip4 != nil && qtype == typeA {
				answers = append(answers, ip4)
			} else if ip4 == nil && qtype == typeAAAA {
				answers = append(answers, ip.To16())
			}
		}
	}

	resp := make([]byte, 12, 12+len(question)+len(answers)*28)
	copy(resp[0:2], q[0:2])                       // ID
	resp[2] = 0x80 | opcode<<3 | 0x04 | q[2]&0x01 // QR, opcode, AA, RD
	resp[3] = 0x80 | rcode                        // RA, RCODE
	binary.BigEndian.PutUint16(resp[4:], 1)
	binary.BigEndian.PutUint16(resp[6:], uint16(len(answers)))
	resp = append(resp, question...)
	for _, ip := range answers {
		typ := uint16(typeA)
		if len(ip) == net.IPv6len {
			typ = typeAAAA
		}
		resp = append(resp, 0xC0, 12) // pointer to the question's name
		resp = binary.BigEndian.AppendUint16(resp, typ)
		resp = binary.BigEndian.AppendUint16(resp, classIN)
		resp = binary.BigEndian.AppendUint32(resp, 0) // TTL
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(ip)))
		resp = append(resp, ip...)
	}
	return resp
}
