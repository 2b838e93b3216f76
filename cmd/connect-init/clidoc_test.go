package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const cliDocPath = "../../docs/cli.md"

// TestCLIDoc holds docs/cli.md: every command's help as the binary prints
// it (-update rewrites it), so that the reference cannot drift.
func TestCLIDoc(t *testing.T) {
	want := cliReference(context.Background())
	if *update {
		if err := os.WriteFile(cliDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(cliDocPath)
	if err != nil || string(got) != want {
		t.Errorf("docs/cli.md is not the binary's help (%v): go test ./cmd/connect-init -run TestCLIDoc -update", err)
	}
}

// TestHelpTeaches: every command's help opens with what it does, shows
// examples and its exit codes, and names every placeholder by its type
// (no bare "value" or "list").
func TestHelpTeaches(t *testing.T) {
	for _, p := range helpPages {
		code, help, stderr := runIn(t, nil, append(append([]string{}, p...), "-h")...)
		name := strings.Join(p, " ")
		if code != 0 || stderr != "" {
			t.Errorf("%s -h: exit %d, stderr %q", name, code, stderr)
		}
		for _, want := range []string{"usage of connect-init " + name, "\nexamples:\n", "\nexit codes (docs/exit-codes.md):\n  0 "} {
			if !strings.Contains(help, want) {
				t.Errorf("%s -h lacks %q:\n%s", name, want, help)
			}
		}
		if d := commandDocs[p[0]]; len(d.what) < 40 || len(d.examples) == 0 || !strings.Contains(help, d.examples[0].line) {
			t.Errorf("%s -h: no description or example", name)
		}
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(l, "  --") && (strings.HasSuffix(l, " value") || strings.HasSuffix(l, " list")) {
				t.Errorf("%s -h: a placeholder that names no type: %q", name, l)
			}
		}
	}
}

// TestBashCompletion sources the bash completion script in bash and
// completes a command, a flag and a setting's name with it; the zsh and
// fish scripts are checked by their shells when installed.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		// CI runs .ci/run with bash: a machine without it cannot run CI,
		// so a missing bash is a failure, never a skipped test.
		t.Fatalf("no bash on the PATH: %v", err)
	}
	bin := builtBinary(t)
	script := `source <("$BIN" completion bash) || exit 9
complete -p connect-init >/dev/null || exit 8
c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _connect_init; echo "${COMPREPLY[*]}"; }
c connect-init ap
c connect-init apply --dry
c connect-init config --js
c connect-init CONNECT_INIT_TIMEO
c connect-init completion z
c connect-init lock acq`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "BIN="+bin)
	out, err := cmd.CombinedOutput()
	want := "apply\n--dry-run\n--json\nCONNECT_INIT_TIMEOUT=\nzsh\nacquire\n"
	if err != nil || string(out) != want {
		t.Errorf("bash completion: %v\n%s\nwant:\n%s", err, out, want)
	}
	for shell, check := range map[string][]string{"zsh": {"-n"}, "fish": {"--no-execute"}} {
		path, err := exec.LookPath(shell)
		if err != nil {
			continue
		}
		script, err := exec.Command(bin, "completion", shell).Output()
		if err != nil {
			t.Fatal(err)
		}
		f := t.TempDir() + "/c." + shell
		os.WriteFile(f, script, 0o644)
		if out, err := exec.Command(path, append(check, f)...).CombinedOutput(); err != nil {
			t.Errorf("%s rejects its completion script: %v\n%s", shell, err, out)
		}
	}
}
