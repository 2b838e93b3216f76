//go:build integration && long

package containerbed

import (
	"context"
	"testing"
)

// TestComposeExampleV1 is TestComposeExample under Compose v1 (Debian's
// docker-compose 1.29), kept for users still on it and out of CI's run for
// time (make long runs it). `make deps` (.ci/install-docker) installs it: a
// missing v1 is a failure, never a skip that passes.
func TestComposeExampleV1(t *testing.T) {
	c, err := ComposeV1(context.Background())
	if err != nil {
		t.Fatalf("%v (install it with make deps)", err)
	}
	composeExample(t, c, bed.Image+"-apache")
}
