package gate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka"
)

// The brokers that are not live, named for the report and its fix.

// sharedAddrs is, per address advertised by more than one of statuses,
// the ids of the brokers that advertise it, in order; nil when none is.
func sharedAddrs(statuses []BrokerStatus) map[string][]int32 {
	byAddr := map[string][]int32{}
	for _, st := range statuses {
		byAddr[st.Addr] = append(byAddr[st.Addr], st.ID)
	}
	var out map[string][]int32
	for addr, ids := range byAddr {
		if len(ids) > 1 {
			if out == nil {
				out = map[string][]int32{}
			}
			slices.Sort(ids)
			out[addr] = ids
		}
	}
	return out
}

// sharedAddrsFix names each address more than one broker advertises and
// what to change; "" when there is none.
func sharedAddrsFix(shared map[string][]int32) string {
	var parts []string
	for _, addr := range slices.Sorted(maps.Keys(shared)) {
		parts = append(parts, fmt.Sprintf("brokers %s all advertise %s", joinIDs(shared[addr]), addr))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": every broker must advertise an address of its own; set advertised.listeners " +
		"(KAFKA_ADVERTISED_LISTENERS) of each of them to its own host and port (a copied setting is the usual cause) and restart it"
}

// joinIDs is "1, 2".
func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ", ")
}

// absent records the registrations seen and returns the brokers that are
// not live: fenced or absent from the metadata, seen earlier and gone, and
// (when fewer are known than expected) bootstrap addresses no live broker
// advertises.
func (g *BrokerGate) absent(live []BrokerStatus, regs []kafka.Registration, fencedKnown bool) []AbsentBroker {
	if g.seen == nil {
		g.seen = map[int32]string{}
	}
	isLive := map[int32]bool{}
	addrs := map[string]bool{}
	for _, b := range live {
		isLive[b.ID] = true
		addrs[b.Addr] = true
		g.seen[b.ID] = b.Addr
	}
	registered := map[int32]bool{}
	var out []AbsentBroker
	for _, r := range regs {
		registered[r.ID] = true
		g.seen[r.ID] = r.Addr
		addrs[r.Addr] = true
		switch {
		case isLive[r.ID]:
		case r.Fenced:
			out = append(out, AbsentBroker{ID: r.ID, Addr: r.Addr, State: StateFenced})
		default:
			out = append(out, AbsentBroker{ID: r.ID, Addr: r.Addr, State: StateNotInMetadata})
		}
	}
	if live != nil {
		for id, addr := range g.seen {
			if !isLive[id] && !registered[id] {
				state := StateGone
				switch {
				case g.mode == kafka.ModeZooKeeper:
					state = StateZooKeeperGone
				case !fencedKnown:
					state = StateNotLive
				}
				out = append(out, AbsentBroker{ID: id, Addr: addr, State: state})
				addrs[addr] = true
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if live != nil && len(live)+len(out) < g.Expected {
		for _, a := range g.Bootstrap {
			if !addrs[a] {
				out = append(out, AbsentBroker{ID: -1, Addr: a, State: StateBootstrapOnly})
			}
		}
	}
	return out
}

// replicaAbsent adds to absent the brokers the metadata names as replicas
// of the internal topics but that are neither live nor listed: a broker
// that left the registrations before this run saw it (a controlled
// shutdown leaves ZooKeeper at once, an unregistered KRaft broker) is
// still a replica of the partitions it held, so it can be named by id. Its
// address is the one seen earlier in this run, or unknown.
func replicaAbsent(absent []AbsentBroker, live []BrokerStatus, md *sarama.MetadataResponse, seen map[int32]string) []AbsentBroker {
	known := map[int32]bool{}
	for _, b := range live {
		known[b.ID] = true
	}
	for _, a := range absent {
		known[a.ID] = true
	}
	var ids []int32
	for _, t := range md.Topics {
		for _, p := range t.Partitions {
			for _, id := range p.Replicas {
				if !known[id] {
					known[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		addr := seen[id]
		if addr == "" {
			addr = "unknown"
		}
		absent = append(absent, AbsentBroker{ID: id, Addr: addr, State: StateReplicaOnly})
	}
	return absent
}
