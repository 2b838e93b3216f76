package plugins

import (
	"fmt"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// CheckMode is CONNECT_INIT_PLUGIN_CHECK: what the startup step does with
// the verdict. A parity error means the worker would fail the connectors
// it is given, so the default refuses it.
type CheckMode string

// The check modes.
const (
	// CheckFail refuses the start on an error finding (exit 1).
	CheckFail CheckMode = "fail"
	// CheckWarn logs error findings as warnings and starts.
	CheckWarn CheckMode = "warn"
	// CheckOff skips the check.
	CheckOff CheckMode = "off"
)

// DefaultCheckMode is the mode when CONNECT_INIT_PLUGIN_CHECK is unset.
const DefaultCheckMode = CheckFail

// ParseCheckMode reads CONNECT_INIT_PLUGIN_CHECK (case-insensitive,
// blanks ignored; empty means DefaultCheckMode); any other value is a
// configuration error naming the accepted ones.
func ParseCheckMode(s string) (CheckMode, error) {
	switch v := CheckMode(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return DefaultCheckMode, nil
	case CheckFail, CheckWarn, CheckOff:
		return v, nil
	}
	return "", fmt.Errorf("plugins: invalid CONNECT_INIT_PLUGIN_CHECK %q: must be fail (the default: refuse a worker that lacks a plugin its peers load), warn (log it and start) or off (skip the check)", s)
}

// Apply returns the findings as the mode reports them and whether the
// start is refused: off reports nothing; warn turns errors into warnings;
// fail refuses when an error remains.
func (m CheckMode) Apply(findings []Finding) (refuse bool, out []Finding) {
	if m == CheckOff {
		return false, nil
	}
	out = make([]Finding, len(findings))
	copy(out, findings)
	for i := range out {
		if out[i].Severity != checks.Error {
			continue
		}
		if m == CheckWarn {
			out[i].Severity = checks.Warning
			continue
		}
		refuse = true
	}
	return refuse, out
}
