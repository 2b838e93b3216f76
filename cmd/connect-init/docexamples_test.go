package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A runnable example in docs/*.md is a fenced block whose info string is
// `console`: a line "$ COMMAND" runs COMMAND with sh (connect-init on the
// PATH, built from this tree, and no other environment), the lines after
// it are lines its output must contain (stdout and stderr together; "..."
// stands for any lines), and a line "[exit N]" is the exit code it must
// end with. Issue 52: the examples a newcomer copies are the binary's real
// answers, so a change of message or exit code that forgets the docs fails
// here.
type docExample struct {
	file    string
	line    int
	command string
	want    []string
	exit    int
}

var exitLine = regexp.MustCompile(`^\[exit (\d+)\]$`)

// docExamples reads every console block of docs/*.md.
func docExamples(t *testing.T) []docExample {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs (%v)", err)
	}
	var out []docExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in, n := false, 0
		var cur *docExample
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			n++
			l := sc.Text()
			switch {
			case !in && strings.TrimSpace(l) == "```console":
				in = true
			case in && strings.TrimSpace(l) == "```":
				in, cur = false, nil
			case in && strings.HasPrefix(l, "$ "):
				out = append(out, docExample{file: filepath.Base(f), line: n, command: strings.TrimPrefix(l, "$ "), exit: -1})
				cur = &out[len(out)-1]
			case in && cur != nil && exitLine.MatchString(l):
				cur.exit, _ = strconv.Atoi(exitLine.FindStringSubmatch(l)[1])
			case in && cur != nil && strings.TrimSpace(l) != "" && strings.TrimSpace(l) != "...":
				cur.want = append(cur.want, strings.TrimSpace(l))
			}
		}
	}
	return out
}

// TestDocExamplesRun runs every console example of docs/*.md against the
// binary: its exit code and the lines it shows.
func TestDocExamplesRun(t *testing.T) {
	examples := docExamples(t)
	if len(examples) < 5 {
		t.Fatalf("%d console examples in docs/*.md; the exit codes page alone has more", len(examples))
	}
	bin := builtBinary(t)
	for _, ex := range examples {
		if ex.exit < 0 {
			t.Errorf("%s:%d: %q shows no [exit N] line", ex.file, ex.line, ex.command)
			continue
		}
		cmd := exec.Command("sh", "-c", ex.command)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "HOME=" + cmd.Dir}
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s:%d: %v", ex.file, ex.line, err)
		}
		if code != ex.exit {
			t.Errorf("%s:%d: %q exited %d, the docs say %d; output:\n%s", ex.file, ex.line, ex.command, code, ex.exit, out)
		}
		for _, w := range ex.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s:%d: %q does not show %q; output:\n%s", ex.file, ex.line, ex.command, w, out)
			}
		}
	}
}
