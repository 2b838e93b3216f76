package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// Offsets is a connector's offsets as Connect's REST API lists and takes
// them (KIP-875, Kafka >= 3.6: GET and PATCH /connectors/<name>/offsets):
// per partition, a map that names it (a sink's kafka_topic and
// kafka_partition, a source's own keys) and the offset (a sink's
// kafka_offset, a source's own keys; null erases it).
type Offsets struct {
	Offsets []PartitionOffset `json:"offsets"`
}

// PartitionOffset is one partition's offset.
type PartitionOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// offsetsSince is the first Kafka release with the offsets endpoints.
const offsetsMajor, offsetsMinor = 3, 6

// offsetsPoll is the pause between two status reads while a connector
// stops.
const offsetsPoll = 250 * time.Millisecond

// ParseOffsets reads an offsets document: Connect's own {"offsets": [...]}
// (what GET .../offsets answers and offsets export writes) or the bare
// list. Every entry needs a partition object; numbers keep their text.
func ParseOffsets(data []byte) (*Offsets, error) {
	t := bytes.TrimSpace(data)
	var o Offsets
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var err error
	if len(t) > 0 && t[0] == '[' {
		err = dec.Decode(&o.Offsets)
	} else {
		err = dec.Decode(&o)
	}
	if err != nil {
		return nil, fmt.Errorf("not an offsets document ({\"offsets\": [{\"partition\": {...}, \"offset\": {...}}]}): %w", err)
	}
	for i, p := range o.Offsets {
		if len(p.Partition) == 0 {
			return nil, fmt.Errorf("entry %d of \"offsets\" has no \"partition\"", i+1)
		}
	}
	if o.Offsets == nil {
		o.Offsets = []PartitionOffset{}
	}
	return &o, nil
}

// canon is a value's JSON with sorted keys, for comparing offsets.
func canon(v any) string {
	b, _ := json.Marshal(v)
	var x any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	_ = d.Decode(&x)
	b, _ = json.Marshal(x)
	return string(b)
}

// Holds reports whether have already has every offset want gives (a null
// offset: no offset for that partition), so that applying want writes
// nothing: offsets as code are idempotent by comparing with what Connect
// reports.
func Holds(have, want *Offsets) bool {
	got := map[string]string{}
	for _, p := range have.Offsets {
		if p.Offset != nil {
			got[canon(p.Partition)] = canon(p.Offset)
		}
	}
	for _, p := range want.Offsets {
		v, ok := got[canon(p.Partition)]
		if p.Offset == nil {
			if ok {
				return false
			}
			continue
		}
		if !ok || v != canon(p.Offset) {
			return false
		}
	}
	return true
}

// OffsetsSupported says why the worker cannot list or alter offsets ("":
// it can).
func (a *API) OffsetsSupported(ctx context.Context) string {
	v, err := a.Version(ctx)
	if err != nil {
		return "the worker's version cannot be read: " + err.Error()
	}
	if !AtLeast(v, offsetsMajor, offsetsMinor) {
		return fmt.Sprintf("the worker runs Kafka %s; Connect lists and alters a connector's offsets from Kafka 3.6 on (KIP-875)", v)
	}
	return ""
}

// GetOffsets reads GET /connectors/<name>/offsets.
func (a *API) GetOffsets(ctx context.Context, name string) (*Offsets, error) {
	req := "GET /connectors/" + name + "/offsets"
	resp, err := a.REST.GetLarge(ctx, a.Target, "connectors/"+url.PathEscape(name)+"/offsets")
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	if resp.Status != http.StatusOK {
		return nil, httpError(req, resp)
	}
	o, err := ParseOffsets(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	return o, nil
}

// alterOffsets sends PATCH (want) or DELETE (want nil) to
// /connectors/<name>/offsets, repeated through rebalances until until. A
// 400 that says the connector is not stopped yet (its tasks still shut
// down, or a sink's consumer group still has members) is repeated too.
func (a *API) alterOffsets(ctx context.Context, name string, want *Offsets, until time.Time) error {
	method, body := http.MethodDelete, []byte(nil)
	if want != nil {
		method = http.MethodPatch
		body, _ = json.Marshal(want)
	}
	clk := clock.Or(a.Clock)
	for {
		_, err := a.write(ctx, restclient.Write{Method: method, Path: "connectors/" + url.PathEscape(name) + "/offsets", Body: body, Until: until}, http.StatusOK)
		var he *HTTPError
		if err == nil || !errors.As(err, &he) || !notStoppedYet(he) || !clk.Now().Before(until) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-clk.After(offsetsPoll):
		}
	}
}

// notStoppedYet is Connect's refusal of an offsets change while the
// connector is not (yet) STOPPED everywhere.
func notStoppedYet(he *HTTPError) bool {
	m := strings.ToLower(he.Message)
	return he.Status == http.StatusBadRequest && (strings.Contains(m, "stopped") || strings.Contains(m, "active members") || strings.Contains(m, "not empty"))
}

// waitState polls the connector's status until its state is want.
func (a *API) waitState(ctx context.Context, name, want string, until time.Time) error {
	clk := clock.Or(a.Clock)
	last := ""
	for {
		st, err := a.status(ctx, name)
		if err == nil && st.Connector.State == want {
			return nil
		}
		if err == nil {
			last = st.Connector.State
		} else {
			last = err.Error()
		}
		if !clk.Now().Before(until) {
			return fmt.Errorf("%s is not %s in time (last seen: %s)", name, want, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(offsetsPoll):
		}
	}
}

// status reads GET /connectors/<name>/status.
func (a *API) status(ctx context.Context, name string) (*Status, error) {
	req := "GET /connectors/" + name + "/status"
	resp, err := a.REST.Get(ctx, a.Target, "connectors/"+url.PathEscape(name)+"/status", nil)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	if resp.Status != http.StatusOK {
		return nil, httpError(req, resp)
	}
	var st Status
	if err := json.Unmarshal(resp.Body, &st); err != nil {
		return nil, fmt.Errorf("%s at %s: not Connect's answer: %w", req, a.Target.Raw, err)
	}
	return &st, nil
}

// OffsetsResult is what SetOffsets did.
type OffsetsResult struct {
	// Changed is false when Connect already held the offsets (nothing was
	// written, the connector was not stopped).
	Changed bool
	// Was is the connector's state before; it is put back.
	Was string
}

// SetOffsets makes a connector's offsets want (nil: reset them all, DELETE)
// the way Connect allows it: the connector STOPPED. It compares first and
// writes nothing when Connect already holds want (an idempotent apply);
// else it stops the connector (PUT .../stop), waits until it is STOPPED,
// PATCHes (or DELETEs) its offsets, reads them back to verify, and puts
// back the state it had (resume or pause). Refused, before anything is
// written, on workers before Kafka 3.6. until bounds the whole.
func (a *API) SetOffsets(ctx context.Context, name string, want *Offsets, until time.Time) (OffsetsResult, error) {
	var res OffsetsResult
	if why := a.OffsetsSupported(ctx); why != "" {
		return res, errors.New(why)
	}
	st, err := a.status(ctx, name)
	if err != nil {
		return res, err
	}
	res.Was = st.Connector.State
	have, err := a.GetOffsets(ctx, name)
	if err != nil {
		return res, err
	}
	if want != nil && Holds(have, want) || want == nil && len(have.Offsets) == 0 {
		return res, nil
	}
	res.Changed = true
	if res.Was != "STOPPED" {
		if err := a.SetState(ctx, name, "stop", until); err != nil {
			return res, err
		}
	}
	if err := a.waitState(ctx, name, "STOPPED", until); err != nil {
		return res, err
	}
	if err := a.alterOffsets(ctx, name, want, until); err != nil {
		return res, err
	}
	if err := a.verifyOffsets(ctx, name, want, until); err != nil {
		return res, err
	}
	switch res.Was {
	case "PAUSED":
		return res, a.SetState(ctx, name, "pause", until)
	case "STOPPED":
		return res, nil
	}
	return res, a.SetState(ctx, name, "resume", until)
}

// verifyOffsets reads the offsets back until they are want (a reset:
// none), as Connect shows an offsets write once its offset store has read
// it.
func (a *API) verifyOffsets(ctx context.Context, name string, want *Offsets, until time.Time) error {
	clk := clock.Or(a.Clock)
	for {
		have, err := a.GetOffsets(ctx, name)
		if err == nil && (want != nil && Holds(have, want) || want == nil && len(have.Offsets) == 0) {
			return nil
		}
		if !clk.Now().Before(until) {
			if err != nil {
				return fmt.Errorf("the offsets of %s cannot be read back: %w", name, err)
			}
			return fmt.Errorf("the offsets of %s read back differ from those written: %s", name, canon(have))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(offsetsPoll):
		}
	}
}
