package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/connect-init/connect-init/internal/containerbed"
)

// The set-up the container rows share (restart in Swarm and in Compose's
// layout, swarm's bring-up): the bed, a worker group's settings, the
// /health poll from inside the network, and the restarts' record. Each
// was written once per row, and the copies had begun to differ.

// containerBed starts the container test bed (internal/containerbed)
// within 10 minutes. On an error it has removed what the failed start
// left; otherwise the caller closes the bed.
func containerBed(ctx context.Context) (*containerbed.Bed, error) {
	progress("starting the container test bed (dockerd, swarm, image, 3 brokers as services)")
	sctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cb, err := containerbed.Start(sctx)
	if err != nil {
		if cb != nil { // Start returns no bed when it failed before creating anything
			cb.Close()
		}
		return nil, err
	}
	return cb, nil
}

// groupEnv is the settings every worker of a bench group gets: the bed's
// brokers, group as its group.id and in its internal topics' names (each
// topic replicated on the 3 brokers), JSON converters, and the expected
// brokers. The rows add their own (plugin path, peers, advertised host).
func groupEnv(cb *containerbed.Bed, group string) []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=" + cb.Brokers.Bootstrap,
		"CONNECT_GROUP_ID=" + group,
		"CONNECT_CONFIG_STORAGE_TOPIC=_" + group + "-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=_" + group + "-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=_" + group + "-status",
		"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_OFFSET_STORAGE_PARTITIONS=3",
		"CONNECT_STATUS_STORAGE_PARTITIONS=2",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_INIT_EXPECTED_BROKERS=3",
	}
}

// envArgs is env as docker's --env arguments.
func envArgs(env []string) []string {
	var args []string
	for _, e := range env {
		args = append(args, "--env", e)
	}
	return args
}

// healthPoll is a shell loop that asks host's /health every 100 ms until
// it answers 200, for one docker exec in a worker beside it: the exec's
// own cost is paid once, before the restarted worker can answer.
func healthPoll(host string) string {
	return fmt.Sprintf(`while :; do case "$(bedctl http GET http://%s:8083/health 2>/dev/null)" in 200*) exit 0;; esac; sleep 0.1; done`, host)
}

// startAtOnce runs start(0) to start(n-1), each in a goroutine of its
// own, all released at one instant (the returned t0), so that the
// processes they start contend as workers started together do; it
// returns when every start has returned, with the first error by index.
func startAtOnce(n int, start func(i int) error) (t0 time.Time, err error) {
	var wg sync.WaitGroup
	gate := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			errs[i] = start(i)
		}()
	}
	t0 = time.Now()
	close(gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return t0, err
		}
	}
	return t0, nil
}

// restartTimes is what the rounds of a restart row measured, per
// variant: each restart's time, and the start-up profile lines of the
// restarted worker's log.
type restartTimes struct {
	took  map[string][]float64
	profs map[string]profiles
}

func newRestartTimes() *restartTimes {
	return &restartTimes{took: map[string][]float64{}, profs: map[string]profiles{}}
}

// add records one restart of variant id.
func (t *restartTimes) add(id string, d time.Duration, logs string) {
	t.took[id] = append(t.took[id], d.Seconds())
	if t.profs[id] == nil {
		t.profs[id] = profiles{}
	}
	t.profs[id].add(logs)
}
