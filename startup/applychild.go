package startup

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// startApplyChild is run's hook in the exec step: with
// CONNECT_INIT_CONNECTORS_DIR set it starts `connect-init apply
// --wait-local` beside the worker, just before the exec. The child gets
// run's whole environment (CONNECT_INIT_* included; the worker's own
// environment is filtered by entrypoint as always), logs to the same stderr
// with process=apply and "connect-init apply: " before each plan line, waits
// until this container's worker is a ready member of its group, applies
// once (never pruning: several workers may carry the directory) and exits;
// with CONNECT_INIT_APPLY_WATCH it stays as the watcher of the desired
// state (apply --watch), acting while its worker leads the group, so that
// one watcher per Connect cluster acts, and ends with its worker.
//
// The child is detached (its own session, stdin from /dev/null) and
// nothing waits for it. execve keeps connect-init's PID, so its parent is
// then the worker itself (PID 1 in a container). A JVM does not reap
// children it did not start, so once the child exits it stays a zombie, a
// single process-table entry without memory, until the container ends (an
// init such as `docker run --init` reaps it at once); there is never more
// than one. If the worker dies first, the child sees itself reparented and
// exits.
func startApplyChild(st *state, executable func() (string, error), log *slog.Logger) {
	s := st.settings
	if strings.TrimSpace(s.ConnectorsDir) == "" {
		return
	}
	self, err := executable()
	if err != nil {
		log.Warn("cannot start the connector apply beside the worker", "gate", step.Exec, "error", err.Error(), "fix", "run connect-init apply as a one-shot job instead")
		return
	}
	env, secrets, err := applyChildEnv(st.env)
	if err != nil {
		log.Warn("cannot start the connector apply beside the worker", "gate", step.Exec, "error", err.Error(),
			"fix", "give the REST credentials as CONNECT_INIT_REST_PASSWORD_FILE or CONNECT_INIT_REST_TOKEN_FILE, or run connect-init apply as a one-shot job instead")
		return
	}
	defer func() {
		for _, f := range secrets {
			f.Close()
		}
	}()
	child := exec.Command(self, applyChildArgs(s)...)
	child.Env = env
	child.ExtraFiles = secrets
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		log.Warn("cannot start the connector apply beside the worker", "gate", step.Exec, "error", err.Error(), "fix", "run connect-init apply as a one-shot job instead")
		return
	}
	log.Info("started the connector apply beside the worker", "gate", step.Exec, "pid", child.Process.Pid, "dir", s.ConnectorsDir)
	_ = child.Process.Release()
}

// applyChildEnv is env for the apply child: each secret setting of the
// table given as a value (CONNECT_INIT_REST_PASSWORD, _TOKEN) moves into a
// file that the child inherits open (files, fds 3, 4, ...) and that its
// _FILE form names as /proc/self/fd/<n>: the child reads it as a mounted
// secret, again at every request, and the file has no name on any file
// system: it is written into a hand-over (handover.go), opened, and the
// hand-over removed at once, so nothing is left behind whatever happens
// to the child or the worker. /proc/<pid>/environ of the child, which
// every process of the same user can read (connector code included), held
// the plain password before (issue 48). The caller closes files once the
// child has started.
func applyChildEnv(env []string) (out []string, files []*os.File, err error) {
	out = make([]string, 0, len(env))
	var h *handover
	defer func() {
		h.remove()
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			files = nil
		}
	}()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if r, ok := settings.Find(k); !ok || !r.Secret || v == "" {
			out = append(out, kv)
			continue
		}
		if h == nil {
			if h, err = newHandover("apply"); err != nil {
				return nil, nil, err
			}
		}
		path, err := h.write(strings.ToLower(k), []byte(v))
		if err != nil {
			return nil, nil, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the child's secret settings: %w", err)
		}
		files = append(files, f)
		out = append(out, fmt.Sprintf("%s_FILE=/proc/self/fd/%d", k, 2+len(files)))
	}
	return out, files, nil
}

// applyChildArgs is the command line of run's apply child: apply
// --wait-local with run's settings; with CONNECT_INIT_APPLY_WATCH it
// watches, serving metrics at CONNECT_INIT_APPLY_METRICS_ADDR when set.
func applyChildArgs(s settings.Settings) []string {
	args := []string{"apply", "--wait-local", "--dir", s.ConnectorsDir, "--timeout", s.Timeout.String(), "--log-format", s.LogFormat, "--log-level", s.LogLevel}
	if s.WorkerConfig != "" {
		args = append(args, "--worker-config", s.WorkerConfig)
	}
	if s.Image != "" {
		args = append(args, "--image", s.Image)
	}
	if s.ApplyWatch {
		args = append(args, "--watch")
		if s.ApplyMetricsAddr != "" {
			args = append(args, "--metrics-addr", s.ApplyMetricsAddr)
		}
	}
	return args
}
