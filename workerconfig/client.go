package workerconfig

import (
	"strings"
	"time"
)

// ClientKind selects which of Connect's client settings apply, following
// Connect's precedence: top-level settings for the worker's group member
// and config-topic reader, top-level overlaid with admin.* for admin work.
// (A topic's role, by contrast, is config, offset or status.)
type ClientKind int

const (
	// ClientMember is the worker's group member and config consumer.
	ClientMember ClientKind = iota
	// ClientAdmin is topic creation and description.
	ClientAdmin
)

// ClientKinds are both kinds, in the order their settings are checked (a
// new slice at each call: no caller changes it for the others).
func ClientKinds() []ClientKind { return []ClientKind{ClientMember, ClientAdmin} }

// Prefix is the worker-property prefix of the kind's overrides ("admin."),
// so an error can name the setting the user wrote.
func (k ClientKind) Prefix() string {
	if k == ClientAdmin {
		return "admin."
	}
	return ""
}

// ClientProps returns the worker properties that apply to a client of kind.
func ClientProps(worker Properties, kind ClientKind) Properties {
	out := Properties{}
	for k, v := range worker {
		out[k] = v
	}
	if kind == ClientAdmin {
		for k, v := range worker.WithPrefix("admin.") {
			out[k] = v
		}
	}
	return out
}

// ClientID is the client.id connect-init's own clients send: the worker's
// with "-connect-init" appended, so broker logs and quotas tell our
// connections from the worker's. It refuses the characters the Kafka
// clients refuse in client.id.
func ClientID(props Properties) (string, error) {
	id := props.Get("client.id", "")
	if !validClientID(id) {
		return "", &Error{Property: "client.id", Problem: "contains characters Kafka does not allow in a client id", Value: id, Fix: "use letters, digits, '.', '_' and '-'"}
	}
	if id == "" {
		return "connect-init", nil
	}
	return id + "-connect-init", nil
}

// RequestTimeout is the client's request.timeout.ms (Kafka's default 40 s),
// which bounds each of our requests the way it bounds the worker's.
func RequestTimeout(props Properties) (time.Duration, error) {
	n, err := props.Int("request.timeout.ms", 40000)
	if err != nil || n <= 0 {
		return 0, &Error{Property: "request.timeout.ms", Problem: "must be a positive number of milliseconds", Value: props.Get("request.timeout.ms", ""), Fix: "use e.g. 40000"}
	}
	return time.Duration(n) * time.Millisecond, nil
}

// validClientID is the check the Kafka clients' config applies to client.id.
func validClientID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._- ", r)) {
			return false
		}
	}
	return true
}
