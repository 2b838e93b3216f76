package containerbed

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Event is one log event of connect-init, its attributes by key (time,
// level, msg, component and the event's own).
type Event map[string]string

// ParseEvent reads one line of connect-init's log, in slog's text or JSON
// form, and reports whether it is one of connect-init's events (component
// connect-init). The container judges read events by key rather than by a
// regular expression over the line: an expression that assumed the
// attributes' order (msg, then url) never matched a real line, which
// carries component=connect-init in between, so a worker started with its
// proof was judged started without one (issue 41).
func ParseEvent(line string) (Event, bool) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		var raw map[string]any
		if json.Unmarshal([]byte(line), &raw) != nil {
			return nil, false
		}
		e := Event{}
		for k, v := range raw {
			switch v := v.(type) {
			case string:
				e[k] = v
			default:
				b, _ := json.Marshal(v)
				e[k] = string(b)
			}
		}
		return e, e["component"] == "connect-init"
	}
	e := Event{}
	for rest := line; rest != ""; {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.ContainsAny(rest[:eq], " \"") {
			return nil, false
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				sp = len(rest)
			}
			val, rest = rest[:sp], rest[sp:]
		}
		e[key] = val
	}
	return e, e["component"] == "connect-init"
}

// joinPoint reports whether e is the event after which the worker joins
// its group, given the startup lock's mode logged before it: the exec
// ("starting the worker"), or, with the in-worker lock (mode=worker), the
// lock's child letting the worker join ("the worker joins its group now"):
// that child runs the lock and peers steps after the exec.
func joinPoint(e Event, mode string) bool {
	return e["msg"] == "the worker joins its group now" || (e["msg"] == "starting the worker" && mode != "worker")
}

// ConnectInitPart is connect-init's own part of a container's log: every
// line of connect-init's up to and including the join point (joinPoint),
// the whole of what decided the start, without the worker's output (a
// failed judge printed the tail of Jetty's request log, which shows
// nothing of why the worker started).
func ConnectInitPart(logs string) string {
	var b strings.Builder
	mode := ""
	for _, l := range strings.Split(logs, "\n") {
		e, ok := ParseEvent(l)
		if !ok {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
		if e["msg"] == "startup lock mode" {
			mode = e["mode"]
		}
		if joinPoint(e, mode) {
			break
		}
	}
	return b.String()
}

// Started reports whether connect-init exec'd the worker in this log.
func Started(logs string) bool {
	for _, l := range strings.Split(logs, "\n") {
		if e, ok := ParseEvent(l); ok && e["msg"] == "starting the worker" {
			return true
		}
	}
	return false
}

// ownPass is the self-probe's pass (the "REST peer ok" event of source
// own, status self) before the join point, if any.
func ownPass(logs string) (Event, bool) {
	mode := ""
	for _, l := range strings.Split(logs, "\n") {
		e, isOurs := ParseEvent(l)
		if !isOurs {
			continue
		}
		if e["msg"] == "startup lock mode" {
			mode = e["mode"]
		}
		if e["msg"] == "REST peer ok" && e["source"] == "own" && e["status"] == "self" {
			return e, true
		}
		if joinPoint(e, mode) {
			return nil, false
		}
	}
	return nil, false
}

// OwnProof returns the addresses the advertised name resolved to when the
// self-probe passed, and whether there was such a pass before the exec.
func OwnProof(logs string) (resolved string, ok bool) {
	e, ok := ownPass(logs)
	return e["resolved"], ok
}

// ProvenAlone reports whether the worker of logs was started only after
// its self-probe proved that its advertised name, a Swarm service's, led
// to it alone: a pass with exactly one address resolved, held for the
// settle window (the "settled" attribute).
func ProvenAlone(logs string) (resolved string, proven bool) {
	e, ok := ownPass(logs)
	r := e["resolved"]
	return r, ok && r != "" && !strings.Contains(r, ",") && e["settled"] != ""
}
