//go:build integration

package containerbed

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// groupRefusedRe is the group step's refusal, in text or JSON logs.
var groupRefusedRe = regexp.MustCompile(`msg="gate failed"[^\n]*? gate=group[^\n]*|"msg":"gate failed"[^\n]*?"gate":"group"[^\n]*`)

// mustRefuseDrift (issue 50) deploys one more worker of group through
// connect-init, as its own service, whose settings drifted from the
// running workers' (env: the drifted workerEnv), and waits for its group
// step to refuse it before the exec, naming each want; the running
// workers (services) stay one stable group of want workers.
func mustRefuseDrift(t *testing.T, group string, s svc, want int, services []string, wants ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	s.create(t, ctx)
	var logs, refusal string
	for refusal == "" {
		cs, _ := AllContainers(ctx, s.name)
		for _, c := range cs {
			logs = ContainerLogs(ctx, c)
			if Started(logs) {
				t.Fatalf("%s: the drifted worker was started:\n%s", s.name, ConnectInitPart(logs))
			}
			refusal = groupRefusedRe.FindString(logs)
		}
		if refusal != "" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: no refusal by the group step: %v; log:\n%s", s.name, ctx.Err(), tail(logs, 3000))
		case <-time.After(time.Second): // polling docker's logs, not a guess at readiness
		}
	}
	t.Logf("%s refused %s after its service was created: %s", s.name, time.Since(start).Round(time.Second), refusal)
	for _, w := range wants {
		if !strings.Contains(refusal, w) {
			t.Errorf("the refusal does not say %q", w)
		}
	}
	Docker(ctx, "service", "rm", s.name) //nolint:errcheck
	ids, gen, _ := stableGroup(t, ctx, want, services...)
	t.Logf("after the refusal: %d workers in generation %d", len(ids), gen)
}

// driftedEnv is workerEnv(group) with each of set in place of the
// variable of the same name.
func driftedEnv(group string, set ...string) []string {
	var env []string
	for _, e := range workerEnv(group) {
		keep := true
		for _, s := range set {
			if name, _, _ := strings.Cut(s, "="); strings.HasPrefix(e, name+"=") {
				keep = false
			}
		}
		if keep {
			env = append(env, e)
		}
	}
	return append(env, set...)
}
