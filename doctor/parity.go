package doctor

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/gate"
)

// parityWorker is a live member of the group as the registry knows it.
type parityWorker struct {
	URL      string
	Settings parity.Fingerprint
}

// parityWorkers are the live members of g registered for its config
// topic, by URL; nil when the registry was not read.
func parityWorkers(g *gate.GroupReport) []parityWorker {
	if g == nil || g.Identity == nil || g.Identity.Registry == nil {
		return nil
	}
	var out []parityWorker
	seen := map[string]bool{}
	for _, m := range g.Members {
		if m.URL == "" || seen[m.URL] {
			continue
		}
		seen[m.URL] = true
		w := g.Identity.Registry.WorkerByURL(m.URL)
		if w == nil || w.ConfigTopic != g.ConfigTopic {
			continue
		}
		out = append(out, parityWorker{URL: m.URL, Settings: w.Settings})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// parity adds the settings parity findings of the group (the same rules
// the group step refuses on, connect/parity): each live worker judged
// against the others, one finding per setting and rule.
func (d *diag) parity() {
	d.eos()
	if d.s.Group == nil {
		return
	}
	d.results(parityFindings(d.s.Group.GroupID, parityWorkers(d.s.Group)))
}

// eos takes the exactly-once readiness look, the group step's
// (gate.EOSLook), without the config topic's offsets: doctor's own
// config-topic-open-transaction finding judges an open transaction.
func (l *looks) eos() {
	rs, err := gate.EOSLook(l.ctx, l.cfg, l.clients, nil, l.opts.Clock)
	if err != nil {
		l.s.EOSErr = err.Error()
		return
	}
	l.s.EOS = rs
}

// eos renders the exactly-once readiness look.
func (d *diag) eos() {
	d.results(d.s.EOS)
	if d.s.EOSErr != "" {
		d.add(IDCheckFailed, checks.Warning, "exactly-once readiness", "exactly-once readiness was not checked", d.s.EOSErr,
			"let the admin client describe __transaction_state, the brokers' configs and the ACLs, or check by hand: docs/settings-parity.md#exactly-once-readiness")
	}
}

// parityFindings judges each worker against the others and keeps the
// first finding of each setting and rule.
func parityFindings(group string, ws []parityWorker) []checks.Result {
	var out []checks.Result
	seen := map[string]bool{}
	for i, w := range ws {
		if w.Settings == nil {
			continue
		}
		s := parity.Subject{GroupID: group, URL: w.URL, Settings: w.Settings}
		for j, p := range ws {
			if j != i {
				s.Peers = append(s.Peers, parity.Peer{URL: p.URL, Settings: p.Settings})
			}
		}
		for _, r := range parity.Results(s) {
			if k := r.ID + "\x00" + r.Subject; !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// printParity prints the group's settings side by side: one row per
// setting on which the live workers differ, one column per worker
// ("unknown" for a worker whose connect-init publishes no settings).
func printParity(p *printer, g *gate.GroupReport) {
	ws := parityWorkers(g)
	known := 0
	for _, w := range ws {
		if w.Settings != nil {
			known++
		}
	}
	if known < 2 {
		return
	}
	var keys []string
	union := parity.Fingerprint{}
	for _, w := range ws {
		for k := range w.Settings {
			union[k] = ""
		}
	}
	for _, k := range union.Keys() {
		var vals []string
		for _, w := range ws {
			if v, ok := w.Settings[k]; ok && w.Settings != nil {
				vals = append(vals, v)
			}
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				keys = append(keys, k)
				break
			}
		}
	}
	if len(keys) == 0 {
		p.f("Settings     the %d registered live workers agree on every setting of the parity table\n", known)
		return
	}
	p.f("Settings     the live workers differ on %d setting(s):\n", len(keys))
	tw := tabwriter.NewWriter(p, 2, 4, 2, ' ', 0)
	head := []string{"  setting"}
	for _, w := range ws {
		head = append(head, w.URL)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, k := range keys {
		row := []string{"  " + k}
		for _, w := range ws {
			v, ok := w.Settings[k]
			switch {
			case w.Settings == nil:
				v = "unknown"
			case !ok:
				v = "-"
			case v == "":
				v = "(unset)"
			}
			row = append(row, v)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}
