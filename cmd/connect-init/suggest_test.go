package main

import (
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestDidYouMean: a slip in a command, a flag or a setting is answered
// with the right name, by one rule (settings.Suggest); a name that is
// merely another gets no guess (issue 52).
func TestDidYouMean(t *testing.T) {
	env, _ := interfaceEnv(t)
	dir := t.TempDir()
	for _, c := range []struct {
		env  []string
		args []string
		want string // "" : no suggestion
	}{
		{nil, []string{"aply"}, "did you mean connect-init apply?"},
		{nil, []string{"prepar"}, "did you mean connect-init prepare?"},
		{nil, []string{"docter"}, "did you mean connect-init doctor?"},
		{nil, []string{"help", "doctr"}, "did you mean connect-init doctor?"},
		{nil, []string{"xyzzy"}, ""},
		{nil, []string{"apply", "--dir", dir, "--dryrun"}, "did you mean --dry-run?"},
		{nil, []string{"config", "--jsn"}, "did you mean --json?"},
		{nil, []string{"apply", "--dir", dir, "--dry-run", "--jsno"}, "did you mean --json?"},
		{nil, []string{"doctor", "--wacth"}, "did you mean --watch?"},
		{nil, []string{"config", "--frobnicate"}, ""},
		{[]string{"CONNECT_INIT_TIMEUOT=5m"}, []string{"config"}, "did you mean CONNECT_INIT_TIMEOUT?"},
		{[]string{"CONNECT_INIT_FOO=1"}, []string{"config"}, ""},
		{[]string{"CONNECT_INIT_LOCKS=true"}, []string{"config"}, "did you mean CONNECT_INIT_LOCK?"},
	} {
		code, _, stderr := runIn(t, append(append([]string{}, env...), c.env...), c.args...)
		if code != exitcode.Config {
			t.Errorf("%v %q: exit %d, want 2:\n%s", c.env, c.args, code, stderr)
		}
		switch {
		case c.want == "" && strings.Contains(stderr, "did you mean"):
			t.Errorf("%v %q: a guess where nothing is close:\n%s", c.env, c.args, stderr)
		case c.want != "" && !strings.Contains(stderr, c.want):
			t.Errorf("%v %q: want %q:\n%s", c.env, c.args, c.want, stderr)
		}
	}
}
