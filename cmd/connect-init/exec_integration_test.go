//go:build integration

package main

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestExecHandsOverSamePIDAndFilteredEnv: after the gates, the command
// after -- replaces connect-init: it runs under the same PID, gets its
// arguments, keeps the environment and loses CONNECT_INIT_* variables.
func TestExecHandsOverSamePIDAndFilteredEnv(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, _ := prepareEnv(t, "exec", "CONNECT_INIT_LOCK=false", "CONNECT_INIT_LOCK_TOPIC=exec-marker-lock", "KEEP_ME=kept")
	logPath := filepath.Join(workDir, fmt.Sprintf("exec-%d.log", time.Now().UnixNano()))
	script := `echo "pid=$$ args=$1,$2"; env | grep -E '^(CONNECT_INIT_|KEEP_ME=|CONNECT_GROUP_ID=)' | sed 's/^/env:/'`
	p, err := testbed.StartProcess("exec", []string{binary, "run", "--", "/bin/sh", "-c", script, "sh", "a b", "c"}, env, workDir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	code, err := p.ExitCode(ctx)
	if err != nil || code != 0 {
		t.Fatalf("exit %d %v:\n%s", code, err, p.Log())
	}
	out := p.Log()
	if !strings.Contains(out, "pid="+strconv.Itoa(p.Pid())+" args=a b,c") {
		t.Fatalf("the command did not run as PID %d with its arguments:\n%s", p.Pid(), out)
	}
	if strings.Contains(out, "env:CONNECT_INIT_") {
		t.Fatalf("CONNECT_INIT_* variables reached the worker:\n%s", out)
	}
	if !strings.Contains(out, "env:KEEP_ME=kept") || !strings.Contains(out, "env:CONNECT_GROUP_ID=") {
		t.Fatalf("the worker lost its environment:\n%s", out)
	}
}

// TestSignalsBeforeExec: SIGTERM or SIGINT while the gates wait ends
// connect-init with 128+signal, and the command never runs.
func TestSignalsBeforeExec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	closed, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		marker := filepath.Join(workDir, fmt.Sprintf("ran-%d", time.Now().UnixNano()))
		env := append(baseEnv(), envFromProps(map[string]string{
			"bootstrap.servers": fmt.Sprintf("127.0.0.1:%d", closed), "group.id": "sig",
			"config.storage.topic": "sig-c", "offset.storage.topic": "sig-o", "status.storage.topic": "sig-s",
			"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		})...)
		logPath := filepath.Join(workDir, fmt.Sprintf("signal-%d.log", time.Now().UnixNano()))
		p, err := testbed.StartProcess("signal", []string{binary, "run", "--", "/bin/touch", marker}, env, workDir, logPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WaitForLog(ctx, "brokers up"); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(p.Pid(), sig); err != nil {
			t.Fatal(err)
		}
		code, err := p.ExitCode(ctx)
		if err != nil || code != 128+int(sig) {
			t.Fatalf("%v: exit %d %v, want %d:\n%s", sig, code, err, 128+int(sig), p.Log())
		}
		if !strings.Contains(p.Log(), "stopped before the worker started") {
			t.Errorf("%v: no log line says the worker was not started:\n%s", sig, p.Log())
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%v: the command ran after the signal", sig)
		}
	}
}

// TestVersionStampAndStaticBinary: the version given at build time with
// -ldflags "-X main.version=..." is what `connect-init version` prints, and
// the binary built with CGO_ENABLED=0 needs no dynamic loader.
func TestVersionStampAndStaticBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, out, err := testbed.Run(ctx, binary, []string{"version"}, baseEnv())
	if err != nil || code != 0 {
		t.Fatalf("version: exit %d %v", code, err)
	}
	// The stamp, then what the build information adds (the revision and
	// its time when the build recorded them).
	if f := strings.Fields(out); len(f) < 2 || f[0] != "connect-init" || f[1] != testVersionStamp || (len(f) > 2 && f[2] != "revision") {
		t.Fatalf("version printed %q, want the stamp %q", out, testVersionStamp)
	}
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the binary is dynamically linked (program header %v)", p.Type)
		}
	}
}
