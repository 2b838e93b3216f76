package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// API is the part of Connect's REST API apply uses, on one worker (which
// forwards writes to the group's leader itself).
type API struct {
	REST   *restclient.Client
	Target restclient.Target
	// Clock paces the waits; nil is the system clock. The writes' repeats
	// wait on REST's own Clock.
	Clock clock.Clock
	// version is the worker's version, read by Version.
	version string
	// unproven, set by Direct, says why this worker is not proven a
	// member of the directory's cluster: Run takes it as
	// Options.Unproven when that is empty, so that a dry run through
	// --url alone runs the prune's guard as the apply does (issue 48).
	unproven string
}

// TaskStatus is one task's runtime status.
type TaskStatus struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Trace    string `json:"trace"`
}

// Status is a connector's runtime status (GET /connectors/<name>/status).
type Status struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []TaskStatus `json:"tasks"`
}

// Listing is the cluster's connectors with configuration and status.
type Listing struct {
	Current map[string]Current
	Status  map[string]*Status
}

// connectError is Connect's error body.
type connectError struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// HTTPError is an answer Connect refused with; Message is Connect's own.
type HTTPError struct {
	Request string
	Status  int
	Message string
}

// Error names the request, the status and Connect's message.
func (e *HTTPError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s answered %d: %s", e.Request, e.Status, e.Message)
	}
	return fmt.Sprintf("%s answered %d", e.Request, e.Status)
}

func httpError(req string, resp restclient.Response) *HTTPError {
	var ce connectError
	msg := ""
	if json.Unmarshal(resp.Body, &ce) == nil && ce.Message != "" {
		msg = ce.Message
	} else if t := strings.TrimSpace(string(resp.Body)); len(t) < 300 && !strings.ContainsAny(t, "<\n") {
		msg = t
	}
	return &HTTPError{Request: req, Status: resp.Status, Message: msg}
}

// List reads GET /connectors?expand=info&expand=status.
func (a *API) List(ctx context.Context) (*Listing, error) {
	const req = "GET /connectors?expand=info&expand=status"
	resp, err := a.REST.GetLarge(ctx, a.Target, "connectors?expand=info&expand=status")
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	if resp.Status != http.StatusOK {
		return nil, httpError(req, resp)
	}
	var raw map[string]struct {
		Info *struct {
			Config map[string]string `json:"config"`
		} `json:"info"`
		Status *Status `json:"status"`
	}
	if err := json.Unmarshal(resp.Body, &raw); err != nil {
		return nil, fmt.Errorf("%s at %s: not Connect's answer: %w", req, a.Target.Raw, err)
	}
	l := &Listing{Current: map[string]Current{}, Status: map[string]*Status{}}
	for name, e := range raw {
		c := Current{Config: map[string]string{}}
		if e.Info != nil {
			c.Config = e.Info.Config
		}
		if e.Status != nil {
			c.State = e.Status.Connector.State
			l.Status[name] = e.Status
		}
		l.Current[name] = c
	}
	return l, nil
}

// FieldError is one config key Connect's validation refused.
type FieldError struct {
	Key      string
	Messages []string
}

// Validation is Connect's verdict on one configuration.
type Validation struct {
	// Errors are per key, sorted by key; a problem that is no key's (an
	// unknown connector class) is reported on connector.class.
	Errors []FieldError
	// Passwords are the keys Connect types as PASSWORD.
	Passwords []string
}

// Validate asks PUT /connector-plugins/<class>/config/validate, which
// writes nothing.
func (a *API) Validate(ctx context.Context, cfg map[string]string) (*Validation, error) {
	class := cfg["connector.class"]
	req := "PUT /connector-plugins/" + class + "/config/validate"
	body, _ := json.Marshal(cfg)
	resp, err := a.REST.Do(ctx, a.Target, http.MethodPut, "connector-plugins/"+url.PathEscape(class)+"/config/validate", body)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	if resp.Status != http.StatusOK {
		he := httpError(req, resp)
		// Connect answers an unknown class with an error for the whole
		// request (no per-field verdict): it belongs to connector.class.
		if resp.Status == http.StatusBadRequest || resp.Status == http.StatusInternalServerError && strings.Contains(he.Message, "Failed to find any class") {
			return &Validation{Errors: []FieldError{{Key: "connector.class", Messages: []string{he.Message}}}}, nil
		}
		return nil, he
	}
	var out struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Definition struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"definition"`
			Value struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("%s at %s: not Connect's answer: %w", req, a.Target.Raw, err)
	}
	v := &Validation{}
	for _, c := range out.Configs {
		if c.Definition.Type == "PASSWORD" {
			v.Passwords = append(v.Passwords, c.Definition.Name)
		}
		if len(c.Value.Errors) > 0 {
			key := c.Value.Name
			if key == "" {
				key = c.Definition.Name
			}
			v.Errors = append(v.Errors, FieldError{Key: key, Messages: c.Value.Errors})
		}
	}
	sort.Slice(v.Errors, func(i, j int) bool { return v.Errors[i].Key < v.Errors[j].Key })
	if out.ErrorCount > 0 && len(v.Errors) == 0 {
		v.Errors = append(v.Errors, FieldError{Key: "connector.class", Messages: []string{fmt.Sprintf("Connect counts %d errors but names no field", out.ErrorCount)}})
	}
	return v, nil
}

// write sends one write through restclient.Write: repeated through
// Connect's rebalances (409) and transient failures with backoff until
// until (on the client's clock) or ctx ends, and read back with landed
// after an ambiguous failure. ok are the statuses that mean done.
func (a *API) write(ctx context.Context, w restclient.Write, ok ...int) (restclient.WriteResult, error) {
	req := w.Method + " /" + w.Path
	res, err := a.REST.Write(ctx, a.Target, w)
	if err != nil {
		var ue *restclient.UnreachableError
		if errors.As(err, &ue) {
			return res, fmt.Errorf("%s: %w", req, err)
		}
		return res, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	}
	if res.Landed {
		return res, nil
	}
	for _, s := range ok {
		if res.Response.Status == s {
			return res, nil
		}
	}
	return res, httpError(req, res.Response)
}

// PutConfig writes a connector's configuration (creates it when absent),
// repeating it until until. PUT replaces the whole config, so a repeat
// writes the same; still, after an ambiguous failure the config is read
// back first, and a cluster that holds it already gets no second write.
func (a *API) PutConfig(ctx context.Context, name string, cfg map[string]string, until time.Time) (restclient.WriteResult, error) {
	body, _ := json.Marshal(cfg)
	path := "connectors/" + url.PathEscape(name) + "/config"
	landed := func(ctx context.Context) (bool, error) {
		got, found, err := a.Config(ctx, name)
		return found && len(diff(got, cfg)) == 0, err
	}
	return a.write(ctx, restclient.Write{Method: http.MethodPut, Path: path, Body: body, Landed: landed, Until: until}, http.StatusOK, http.StatusCreated)
}

// Create creates a connector in an initial state (RUNNING, PAUSED or
// STOPPED): POST /connectors {"name", "config", "initial_state"}, Kafka >=
// 3.7 (KIP-980; CreateConnectorRequest). It is repeated as PutConfig is,
// and after an ambiguous failure a cluster that holds the config counts as
// done. Connect answers 409 both during a rebalance and for a connector
// that exists; restclient.Write repeats either until until, so a
// concurrent create is kept out by the apply lease, not here.
func (a *API) Create(ctx context.Context, name string, cfg map[string]string, initial string, until time.Time) (restclient.WriteResult, error) {
	body, _ := json.Marshal(map[string]any{"name": name, "config": cfg, "initial_state": initial})
	landed := func(ctx context.Context) (bool, error) {
		got, found, err := a.Config(ctx, name)
		return found && len(diff(got, cfg)) == 0, err
	}
	return a.write(ctx, restclient.Write{Method: http.MethodPost, Path: "connectors", Body: body, Landed: landed, Until: until}, http.StatusCreated, http.StatusOK)
}

// Config reads GET /connectors/<name>/config; found is false on 404.
func (a *API) Config(ctx context.Context, name string) (cfg map[string]string, found bool, err error) {
	req := "GET /connectors/" + name + "/config"
	resp, err := a.REST.GetLarge(ctx, a.Target, "connectors/"+url.PathEscape(name)+"/config")
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("%s at %s: %w", req, a.Target.Raw, err)
	case resp.Status == http.StatusNotFound:
		return nil, false, nil
	case resp.Status != http.StatusOK:
		return nil, false, httpError(req, resp)
	}
	if err := json.Unmarshal(resp.Body, &cfg); err != nil {
		return nil, false, fmt.Errorf("%s at %s: not Connect's answer: %w", req, a.Target.Raw, err)
	}
	return cfg, true, nil
}

// SetState sends PUT /connectors/<name>/<call> (pause, stop or resume),
// repeated until until. It is not read back after an ambiguous failure:
// the status shows the new state only once the workers act on it, so a
// repeat (one more target-state record, no restart) is the honest choice.
func (a *API) SetState(ctx context.Context, name, call string, until time.Time) error {
	_, err := a.write(ctx, restclient.Write{Method: http.MethodPut, Path: "connectors/" + url.PathEscape(name) + "/" + call, Until: until},
		http.StatusOK, http.StatusAccepted, http.StatusNoContent)
	var he *HTTPError
	if call == "stop" && asHTTP(err, &he) && he.Status == http.StatusNotFound && !strings.Contains(he.Message, name) {
		return fmt.Errorf("%w (PUT /connectors/<name>/stop exists from Kafka 3.5 on; use state paused on older workers)", err)
	}
	return err
}

// Delete removes a connector, repeated until until; after an ambiguous
// failure a connector that is gone counts as deleted.
func (a *API) Delete(ctx context.Context, name string, until time.Time) error {
	landed := func(ctx context.Context) (bool, error) {
		_, found, err := a.Config(ctx, name)
		return err == nil && !found, err
	}
	_, err := a.write(ctx, restclient.Write{Method: http.MethodDelete, Path: "connectors/" + url.PathEscape(name), Landed: landed, Until: until},
		http.StatusOK, http.StatusNoContent)
	return err
}

func asHTTP(err error, he **HTTPError) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*HTTPError)
	if ok {
		*he = e
	}
	return ok
}
