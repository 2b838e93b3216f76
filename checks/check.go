// Package checks holds connect-init's rules as data. A Check has a stable
// id, a severity, a test over a subject (what a gate read from the
// cluster), the evidence it shows and the fix it proposes. The gates fail
// on error-severity results and log the others; doctor renders the same
// results as findings. Because both run the same list over the same
// subject, `connect-init run` and `connect-init doctor` cannot disagree
// about a rule.
//
// The package depends on nothing of connect-init: subjects are plain facts
// that their gate fills in (the topic gate, the coordinator gate; the group
// rules can adopt it with a subject of their own).
package checks

import "strings"

// Severity ranks a result. Error means `connect-init run` refuses to start
// the worker (or Connect cannot work); warning is a risk; info is context.
type Severity string

// Severities, from the most to the least severe.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities: 0 for error, 1 for warning, 2 for info.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Result is one broken rule for one subject. Its JSON form is doctor's
// finding (doctor/doc.go).
type Result struct {
	// ID is the check's stable id.
	ID string `json:"id"`
	// Severity is the check's severity for this subject.
	Severity Severity `json:"severity"`
	// Subject names the thing concerned: a topic, a partition, a group.
	Subject string `json:"subject"`
	// Summary says in one line what is wrong.
	Summary string `json:"summary"`
	// Evidence is what was seen, with the numbers.
	Evidence string `json:"evidence"`
	// Fix is what to do about it.
	Fix string `json:"fix"`
	// Transient marks a state that may heal by itself (a partition
	// between leaders): a gate that waits reads again until its deadline
	// before failing on it; doctor reports it as seen.
	Transient bool `json:"-"`
}

// String renders the result as one line for logs and gate errors:
// "summary (evidence); fix: fix".
func (r Result) String() string {
	s := r.Summary
	if r.Evidence != "" {
		s += " (" + r.Evidence + ")"
	}
	if r.Fix != "" {
		s += "; fix: " + r.Fix
	}
	return s
}

// Check is one rule over subjects of type T.
type Check[T any] struct {
	// ID is stable: scripts and alerting match on it, so it is never
	// renamed or reused for another condition. Two checks may share an id
	// when they are one condition at two severities.
	ID string
	// Severity is the result's severity when Escalate is nil or false.
	Severity Severity
	// Escalate, when set and true for the subject, makes the result an
	// error (CONNECT_INIT_STRICT, or a missing topic under running
	// workers).
	Escalate func(T) bool
	// Transient is copied to the results (see Result.Transient).
	Transient bool
	// Applies, when set, limits the check to the subjects it returns true
	// for (a missing topic has no layout to judge).
	Applies func(T) bool
	// Test reports whether the rule is broken for the subject.
	Test func(T) bool
	// Subject names the thing concerned.
	Subject func(T) string
	// Summary, Evidence and Fix describe a broken rule for the subject.
	Summary, Evidence, Fix func(T) string
}

// Run applies every check to subject, in list order, and returns the
// results of the broken ones.
func Run[T any](list []Check[T], subject T) []Result {
	var out []Result
	for _, c := range list {
		if c.Applies != nil && !c.Applies(subject) || !c.Test(subject) {
			continue
		}
		sev := c.Severity
		if c.Escalate != nil && c.Escalate(subject) {
			sev = Error
		}
		out = append(out, Result{ID: c.ID, Severity: sev, Subject: c.Subject(subject), Summary: c.Summary(subject),
			Evidence: call(c.Evidence, subject), Fix: call(c.Fix, subject), Transient: c.Transient})
	}
	return out
}

func call[T any](f func(T) string, v T) string {
	if f == nil {
		return ""
	}
	return f(v)
}

// Errors returns the error-severity results, the ones a gate fails on.
func Errors(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Severity == Error {
			out = append(out, r)
		}
	}
	return out
}

// OnlyTransient reports whether rs holds errors and all are transient.
func OnlyTransient(rs []Result) bool {
	errs := Errors(rs)
	for _, r := range errs {
		if !r.Transient {
			return false
		}
	}
	return len(errs) > 0
}

// Join renders results as one line each, joined by "; ".
func Join(rs []Result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}
