package gate

import (
	"sync"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka"
)

// Handoff is what the brokers step read for the steps after it: one value,
// produced once by a look that passed (BrokerReport.Handoff) and given to
// each later step, which reads its part instead of asking the cluster again
// (each was a round of requests of every start, issue 39). A step that
// finds its part empty (nil Handoff, a look that did not read it) reads for
// itself, as it would without the brokers step.
//
// The parts that describe the cluster at the moment of the look (Live,
// Views, Settings) serve the first look of the step that takes them, and
// are gone after: a later look, after a creation or a wait, asks again.
// The cluster id is not here: it belongs to the clients, whose every group
// gate (group, lock, peers) reads it (kafka.Clients.ClusterID).
type Handoff struct {
	// Metadata is the look's metadata answer, which names the internal
	// topics: the topics step judges it when it shows every one of them.
	Metadata *sarama.MetadataResponse
	// Coordinator is the group's coordinator as FindCoordinator named it,
	// for the coordinator and group steps (nil: they ask).
	Coordinator *FoundCoordinator

	mu sync.Mutex
	// live are the brokers the look saw up, for the topics step's first
	// look at every broker's view of the topics.
	live []kafka.Registration
	// views are, by broker id, the live brokers' own metadata answers,
	// for the same look.
	views map[int32]*sarama.MetadataResponse
	// settings are the internal topics' settings, for the topics step's
	// first judgement.
	settings *TopicSettings
}

// NewHandoff is a hand-off of these parts; the brokers step makes it, and
// tests of later steps.
func NewHandoff(md *sarama.MetadataResponse, live []kafka.Registration, views map[int32]*sarama.MetadataResponse, settings *TopicSettings, coordinator *FoundCoordinator) *Handoff {
	return &Handoff{Metadata: md, Coordinator: coordinator, live: live, views: views, settings: settings}
}

// handoffTake returns a part of h and clears it; nil h has nothing.
func handoffTake[T any](h *Handoff, part func(*Handoff) *T) T {
	var zero T
	if h == nil {
		return zero
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := part(h)
	out := *p
	*p = zero
	return out
}

// takeLive, takeViews and takeSettings hand their part over once.
func (h *Handoff) takeLive() []kafka.Registration {
	return handoffTake(h, func(h *Handoff) *[]kafka.Registration { return &h.live })
}

func (h *Handoff) takeViews() map[int32]*sarama.MetadataResponse {
	return handoffTake(h, func(h *Handoff) *map[int32]*sarama.MetadataResponse { return &h.views })
}

func (h *Handoff) takeSettings() *TopicSettings {
	return handoffTake(h, func(h *Handoff) **TopicSettings { return &h.settings })
}

// metadata and coordinator read their part (nil h: none).
func (h *Handoff) metadata() *sarama.MetadataResponse {
	if h == nil {
		return nil
	}
	return h.Metadata
}

// KnownCoordinator is the coordinator the look found; nil when it did not
// (or h is nil).
func (h *Handoff) KnownCoordinator() *FoundCoordinator {
	if h == nil {
		return nil
	}
	return h.Coordinator
}

// HoldsSettings is true while the hand-off holds the topics' settings
// (read by the look, not taken yet): what a caller of the brokers step
// checks to know the topics step will not ask for them.
func (h *Handoff) HoldsSettings() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.settings != nil
}
