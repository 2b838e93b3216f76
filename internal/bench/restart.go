package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/containerbed"
)

// restartVariant is one worker service of the restart row: the example's
// per-task entrypoint, with connect-init (a lock mode) or bare.
type restartVariant struct {
	id   string // row suffix and service name part
	what string
	env  []string
	bare bool
}

var restartVariants = []restartVariant{
	{id: "bare", what: "bare (the image's entrypoint without connect-init)", bare: true},
	{id: "inworker", what: "connect-init, in-worker lock (the default)"},
	{id: "exec", what: "connect-init, CONNECT_INIT_LOCK_MODE=exec", env: []string{"CONNECT_INIT_LOCK_MODE=exec"}},
}

// defaultRestartRounds is how many restarts each variant gets
// (-restart-rounds); the variants alternate round by round. A restart's
// time has a sawtooth of Connect's own: the surviving worker sees the new
// one's join at its next heartbeat (heartbeat.interval.ms, 3 s), so a
// round lands on one tick or the next, 3 s apart, and three rounds gave
// medians that moved by 2-3 s from one run to the next (docs/benchmarks.md).
const defaultRestartRounds = 7

// benchRestart is the restart row: in a real single-node Docker Swarm
// (internal/containerbed), one running 2-worker group per variant (a
// service with replicas: 2, endpoint_mode dnsrr and the per-task address
// of examples/swarm/stack.yml, restart_policy condition any), then rounds
// of: stop one worker's container as Swarm stops a task (docker stop:
// SIGTERM, then the grace period), and time from the stop to the new
// task's container answering GET /health 200, asked from the surviving
// worker's container (inside the overlay network). The variants
// alternate round by round; each restart's start-up profile line is kept
// for the breakdown.
func benchRestart(ctx context.Context, _ *bed, o options, rep *report) error {
	cb, err := containerBed(ctx)
	if err != nil {
		return err
	}
	defer cb.Close()
	script, err := restartScript()
	if err != nil {
		return err
	}
	for _, v := range restartVariants {
		if err := restartService(ctx, cb, v, script); err != nil {
			return fmt.Errorf("%s: %w", v.id, err)
		}
	}
	for _, v := range restartVariants {
		wctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
		_, err := restartReady(wctx, restartName(v))
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", v.id, err)
		}
	}
	times, err := restartRounds(o.restartRounds, "swarm", func(v restartVariant) (time.Duration, string, error) {
		return restartOnce(ctx, restartName(v))
	})
	if err != nil {
		return err
	}
	restartRows(rep, "swarm", "Swarm (per-task address, replicas 2), one worker stopped (SIGTERM) and restarted by the restart policy", times)
	return benchRestartCompose(ctx, cb, o.restartRounds, rep)
}

// restartRows adds one row per variant (bare first) and the connect-init
// variants' profile rows.
func restartRows(rep *report, layout, what string, times *restartTimes) {
	took, profs := times.took, times.profs
	bare := median(took["bare"])
	for _, v := range restartVariants {
		note := ""
		if !v.bare {
			note = fmt.Sprintf("median %+.1f s against bare's in the same run", median(took[v.id])-bare)
		}
		rep.add("restart-"+layout+"-"+v.id, what+": stop → /health 200, "+v.what, "s", took[v.id], note)
		if !v.bare && profs[v.id] != nil {
			profs[v.id].addRows(rep, "restart-"+layout+"-"+v.id, layout+" restart, "+v.what)
		}
	}
}

// benchRestartCompose is the restart row in Compose's layout
// (examples/compose: one service per worker, its name as hostname and
// advertised host name, the image's own entrypoint): two containers per
// variant on the bed's network, each restarted as `docker compose restart
// connect-1` restarts it (docker restart: SIGTERM, then start the same
// container again), timed from the restart to its /health 200 asked from
// the other worker. The variants alternate round by round.
func benchRestartCompose(ctx context.Context, cb *containerbed.Bed, rounds int, rep *report) error {
	names := func(v restartVariant) [2]string {
		p := containerbed.StackPrefix + "-rc-" + v.id
		return [2]string{p + "-1", p + "-2"}
	}
	for _, v := range restartVariants {
		for _, n := range names(v) {
			if err := composeWorker(ctx, cb, v, n, names(v)[0]); err != nil {
				return fmt.Errorf("compose %s: %w", v.id, err)
			}
		}
	}
	for _, v := range restartVariants {
		n := names(v)
		wctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
		for !healthOK(wctx, n[0], n[1]) || !healthOK(wctx, n[1], n[0]) {
			select {
			case <-wctx.Done():
				cancel()
				return fmt.Errorf("compose %s: the two workers never answered /health 200:\n%s", v.id, containerbed.ContainerLogs(context.Background(), n[1]))
			case <-time.After(time.Second):
			}
		}
		cancel()
	}
	times, err := restartRounds(rounds, "compose", func(v restartVariant) (time.Duration, string, error) {
		n := names(v)
		return composeRestartOnce(ctx, n[:])
	})
	if err != nil {
		return err
	}
	restartRows(rep, "compose", "Compose layout (one service per worker, its name advertised), one worker restarted (docker restart, as `docker compose restart`)", times)
	return nil
}

// restartRounds runs rounds of one restart of every variant (restart),
// the variants in an order that turns round by round, and records each.
func restartRounds(rounds int, layout string, restart func(restartVariant) (time.Duration, string, error)) (*restartTimes, error) {
	times := newRestartTimes()
	for r := 0; r < rounds; r++ {
		for i := range restartVariants {
			v := restartVariants[(r+i)%len(restartVariants)]
			d, logs, err := restart(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s, round %d: %w", layout, v.id, r+1, err)
			}
			progress("restart: %s %s round %d: /health 200 %s after the restart", layout, v.id, r+1, d.Round(time.Millisecond))
			times.add(v.id, d, logs)
		}
	}
	return times, nil
}

// composeRestartOnce restarts the one of the two workers that started
// first (oldestFirst) as `docker compose restart` does, and returns the
// time from the restart to its /health 200, asked from the other worker,
// and its log since the restart.
func composeRestartOnce(ctx context.Context, workers []string) (time.Duration, string, error) {
	victim, survivor := oldestFirst(ctx, workers)
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for !healthOK(rctx, victim, survivor) && rctx.Err() == nil {
		time.Sleep(500 * time.Millisecond) // the survivor of the last round is serving again
	}
	start := time.Now()
	if _, err := containerbed.Docker(rctx, "restart", "-t", "60", victim); err != nil {
		return 0, "", err
	}
	_, err := containerbed.Exec(rctx, survivor, "/bin/sh", "-c", healthPoll(victim))
	d := time.Since(start)
	if err != nil {
		return 0, "", fmt.Errorf("polling /health: %w", err)
	}
	out, _ := exec.CommandContext(rctx, "docker", "logs", "--since", start.Add(-time.Second).Format(time.RFC3339Nano), victim).CombinedOutput()
	return d, string(out), nil
}

// composeWorker starts one worker container of the Compose layout.
func composeWorker(ctx context.Context, cb *containerbed.Bed, v restartVariant, name, group string) error {
	args := []string{"run", "-d", "--name", name, "--hostname", name, "--network", containerbed.Network, "--label", containerbed.Label,
		"--restart", "unless-stopped", "--stop-timeout", "60"}
	args = append(args, envArgs(composeEnv(cb, v, name, group))...)
	if v.bare {
		args = append(args, "--entrypoint", "/etc/confluent/docker/run")
	}
	args = append(args, cb.Image)
	progress("restart: starting %s", name)
	_, err := containerbed.Docker(ctx, args...)
	return err
}

// composeEnv is the settings of worker name of a Compose-layout variant
// in group: the group's, the plugins, its name advertised, the variant's.
func composeEnv(cb *containerbed.Bed, v restartVariant, name, group string) []string {
	env := append(groupEnv(cb, group),
		"CONNECT_PLUGIN_PATH=/usr/share/filestream-connectors",
		"CONNECT_REST_ADVERTISED_HOST_NAME="+name)
	return append(env, v.env...)
}

// serviceEnv is the settings of a Swarm variant's service name, whose
// name is also its group's: the group's, the plugins, a rebalance delay
// that outlasts a restart, its tasks as peers, the variant's.
func serviceEnv(cb *containerbed.Bed, v restartVariant, name string) []string {
	env := append(groupEnv(cb, name),
		"CONNECT_PLUGIN_PATH=/usr/share/filestream-connectors",
		"CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS=60000",
		"CONNECT_INIT_PEERS=tasks."+name+":8083")
	return append(env, v.env...)
}

func restartName(v restartVariant) string { return containerbed.StackPrefix + "-restart-" + v.id }

// restartScript is the example stack's entrypoint script, unescaped as
// `docker stack deploy` unescapes it.
func restartScript() (string, error) {
	s, err := exampleEntrypoint()
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(s, "$$", "$"), nil
}

// restartService creates one variant's service: 2 replicas, restarted at
// once by Swarm whatever their exit (the example's delay of 10 s would
// add the same to every variant).
func restartService(ctx context.Context, cb *containerbed.Bed, v restartVariant, script string) error {
	name := restartName(v)
	if v.bare {
		script = strings.Replace(script, `exec connect-init run -- "$@"`, `exec "$@"`, 1)
		if !strings.Contains(script, `exec "$@"`) {
			return fmt.Errorf("the example's entrypoint no longer ends in exec connect-init run")
		}
	}
	args := containerbed.ServiceArgs(name)
	args = append(args, "--network", containerbed.Network, "--endpoint-mode", "dnsrr", "--replicas", "2",
		"--hostname", "connect-{{.Task.Slot}}", "--restart-condition", "any", "--restart-delay", "0s",
		"--stop-grace-period", "60s",
		// The image's HEALTHCHECK runs `connect-init healthcheck` in a
		// process of its own, which does not get the address the
		// entrypoint exported: it fails on its settings, the task is never
		// healthy, and tasks.<service> (CONNECT_INIT_PEERS) never resolves
		// (measured: the peers step then waits its 10 s for the
		// configured peer on every start). The example's timings, with
		// the address given to the check as the entrypoint finds it.
		"--health-cmd", healthWithAddress, "--health-interval", "10s", "--health-timeout", "10s", "--health-retries", "6", "--health-start-period", "6m")
	args = append(args, envArgs(serviceEnv(cb, v, name))...)
	args = append(args, "--entrypoint", "/bin/sh", cb.Image, "-c", script, "connect-worker", "/etc/confluent/docker/run")
	progress("restart: creating %s", name)
	_, err := containerbed.Docker(ctx, args...)
	return err
}

// healthWithAddress is `connect-init healthcheck` with the task's overlay
// address as its advertised host name, found as the example's entrypoint
// finds it (the /etc/hosts line of $HOSTNAME).
const healthWithAddress = `CONNECT_REST_ADVERTISED_HOST_NAME=$(awk -v h="$HOSTNAME" '$2==h{print $1; exit}' /etc/hosts) exec connect-init healthcheck`

// restartReady waits until the service runs 2 containers that both answer
// /health 200, and returns their ids.
func restartReady(ctx context.Context, service string) ([]string, error) {
	for {
		ids, _ := containerbed.Containers(ctx, service)
		if len(ids) == 2 {
			ok := 0
			for i, id := range ids {
				ip := containerIP(ctx, id)
				if ip != "" && healthOK(ctx, ids[1-i], ip) {
					ok++
				}
			}
			if ok == 2 {
				return ids, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no 2 workers answering /health 200: %w\n%s", service, ctx.Err(), containerbed.TaskStates(context.Background(), service))
		case <-time.After(time.Second):
		}
	}
}

// restartOnce stops the one of the service's two workers that started
// first (oldestFirst) and returns the time from the stop to its replacement's /health
// 200 and the replacement's log.
func restartOnce(ctx context.Context, service string) (time.Duration, string, error) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ids, err := restartReady(rctx, service)
	if err != nil {
		return 0, "", err
	}
	victim, survivor := oldestFirst(rctx, ids)
	start := time.Now()
	stop := exec.CommandContext(rctx, "docker", "stop", "-t", "60", victim)
	if err := stop.Start(); err != nil {
		return 0, "", err
	}
	defer stop.Wait() //nolint:errcheck
	var fresh, ip string
	for fresh == "" || ip == "" {
		cur, _ := containerbed.Containers(rctx, service)
		for _, c := range cur {
			if c != victim && c != survivor {
				fresh = c
			}
		}
		if fresh != "" {
			ip = containerIP(rctx, fresh)
		}
		if fresh == "" || ip == "" {
			select {
			case <-rctx.Done():
				return 0, "", fmt.Errorf("no replacement task started: %w\n%s", rctx.Err(), containerbed.TaskStates(context.Background(), service))
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if _, err := containerbed.Exec(rctx, survivor, "/bin/sh", "-c", healthPoll(ip)); err != nil {
		return 0, "", fmt.Errorf("polling %s's /health: %w\n%s", ip, err, containerbed.ContainerLogs(context.Background(), fresh))
	}
	took := time.Since(start)
	return took, containerbed.ContainerLogs(ctx, fresh), nil
}

// acquiredRe is connect-init's line for taking the startup lock, with its
// time.
var acquiredRe = regexp.MustCompile(`time=(\S+) level=INFO msg="acquired startup lock"`)

// oldestFirst returns the worker that took the startup lock first (or
// started first), then the other.
// The startup lock's last holder stays "held" until a later waiter finds
// it ready (lock/ready.go), so in a running group the worker that started
// last still holds the lock; stopping it makes its replacement wait for
// its hold lease (3 min), which the restart rows do not measure (it is
// reported on its own in docs/benchmarks.md). The one that started first
// was released by the next one's start.
func oldestFirst(ctx context.Context, ids []string) (string, string) {
	started := func(id string) time.Time {
		// The last acquisition of the lock when there is one (workers
		// started together take it one after the other), else the start.
		if m := acquiredRe.FindAllStringSubmatch(containerbed.ContainerLogs(ctx, id), -1); len(m) > 0 {
			if t, err := time.Parse(time.RFC3339Nano, m[len(m)-1][1]); err == nil {
				return t
			}
		}
		out, _ := containerbed.Docker(ctx, "inspect", "-f", "{{.State.StartedAt}}", id)
		t, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(out))
		return t
	}
	if started(ids[1]).Before(started(ids[0])) {
		return ids[1], ids[0]
	}
	return ids[0], ids[1]
}

// healthOK asks ip's /health once from container from.
func healthOK(ctx context.Context, from, ip string) bool {
	out, err := containerbed.Exec(ctx, from, "bedctl", "http", "GET", "http://"+ip+":8083/health")
	return err == nil && strings.HasPrefix(out, "200")
}

// containerIP is a container's address on the bed's network.
func containerIP(ctx context.Context, id string) string {
	out, err := containerbed.Docker(ctx, "inspect", "-f", `{{with index .NetworkSettings.Networks "`+containerbed.Network+`"}}{{.IPAddress}}{{end}}`, id)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}
