package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// instruction is one Dockerfile instruction with its continuation lines
// joined.
type instruction struct {
	line  int               // first line
	cmd   string            // upper case: FROM, RUN, ...
	flags map[string]string // leading --name=value options
	args  string            // the rest, after the flags
	exec  []string          // args in JSON (exec) form, nil for shell form
}

// stage is one FROM ... [AS name] and its instructions.
type stage struct {
	name, from string
	instrs     []instruction
}

// dockerfile is a parsed Dockerfile: the ARGs before the first FROM (with
// their defaults) and the stages in order.
type dockerfile struct {
	globalArgs map[string]string
	stages     []*stage
}

// parseDockerfile understands what this repository's Dockerfile uses: comments
// and parser directives, backslash continuations, --flags, JSON and shell
// forms, FROM ... AS, global ARG defaults. No heredocs, no escape directive.
func parseDockerfile(src string) (*dockerfile, error) {
	df := &dockerfile{globalArgs: map[string]string{}}
	var logical []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(strings.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		cur.WriteString(line)
		logical = append(logical, instruction{line: start, args: cur.String()})
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation at end of file", start)
	}
	for _, in := range logical {
		kw, rest, _ := strings.Cut(in.args, " ")
		in.cmd = strings.ToUpper(kw)
		in.flags = map[string]string{}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			var flag string
			flag, rest, _ = strings.Cut(rest, " ")
			rest = strings.TrimSpace(rest)
			k, v, _ := strings.Cut(strings.TrimPrefix(flag, "--"), "=")
			in.flags[k] = v
		}
		in.args = rest
		if strings.HasPrefix(rest, "[") {
			var argv []string
			if err := json.Unmarshal([]byte(rest), &argv); err == nil {
				in.exec = argv
			}
		}
		switch in.cmd {
		case "FROM":
			f := strings.Fields(rest)
			st := &stage{from: expandArgs(f[0], df.globalArgs)}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				return nil, fmt.Errorf("line %d: cannot parse FROM %s", in.line, rest)
			}
			df.stages = append(df.stages, st)
			continue
		case "ARG":
			if len(df.stages) == 0 {
				k, v, _ := strings.Cut(rest, "=")
				df.globalArgs[k] = v
				continue
			}
		}
		if len(df.stages) == 0 {
			return nil, fmt.Errorf("line %d: %s before the first FROM", in.line, in.cmd)
		}
		st := df.stages[len(df.stages)-1]
		st.instrs = append(st.instrs, in)
	}
	return df, nil
}

var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// expandArgs replaces the global ARGs' defaults in s, again while they
// name other ARGs (ARG CP_BASE=...:${CP_VERSION}).
func expandArgs(s string, args map[string]string) string {
	for range 5 {
		next := argRef.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := args[argRef.FindStringSubmatch(m)[1]]; ok {
				return v
			}
			return m
		})
		if next == s {
			break
		}
		s = next
	}
	return s
}

func (df *dockerfile) stage(name string) *stage {
	for _, st := range df.stages {
		if st.name == name {
			return st
		}
	}
	return nil
}

// last returns the stage's last instruction of a kind (ENTRYPOINT, CMD,
// USER... take effect from their last occurrence).
func (st *stage) last(cmd string) *instruction {
	for i := len(st.instrs) - 1; i >= 0; i-- {
		if st.instrs[i].cmd == cmd {
			return &st.instrs[i]
		}
	}
	return nil
}

// env returns the stage's ENV settings (both the k=v and the legacy "k v"
// form).
func (st *stage) env() map[string]string {
	env := map[string]string{}
	for _, in := range st.instrs {
		if in.cmd != "ENV" {
			continue
		}
		if !strings.Contains(strings.Fields(in.args)[0], "=") {
			k, v, _ := strings.Cut(in.args, " ")
			env[k] = strings.TrimSpace(v)
			continue
		}
		for _, kv := range strings.Fields(in.args) {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = strings.Trim(v, `"`)
		}
	}
	return env
}

// healthcheck splits HEALTHCHECK [options] CMD <command> into its options
// and command.
func healthcheck(in *instruction) (map[string]string, []string, error) {
	rest, ok := strings.CutPrefix(in.args, "CMD ")
	if !ok {
		return nil, nil, fmt.Errorf("line %d: HEALTHCHECK %s: want HEALTHCHECK [options] CMD [...]", in.line, in.args)
	}
	rest = strings.TrimSpace(rest)
	var argv []string
	if err := json.Unmarshal([]byte(rest), &argv); err != nil {
		return nil, nil, fmt.Errorf("line %d: HEALTHCHECK CMD %s: use the JSON form (no shell needed): %v", in.line, rest, err)
	}
	return in.flags, argv, nil
}

func TestParseDockerfile(t *testing.T) {
	df, err := parseDockerfile(`# syntax=docker/dockerfile:1
ARG V=1.2
FROM --platform=$BUILDPLATFORM golang:${V} AS build
RUN --mount=type=cache,target=/x \
    go build \
    ./cmd
FROM scratch
ENV A=1 B="2"
ENV C 3
USER nobody
ENTRYPOINT ["x", "run", "--"]
HEALTHCHECK --interval=5s CMD ["x", "healthcheck"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(df.stages) != 2 || df.stages[0].name != "build" || df.stages[0].from != "golang:1.2" || df.stages[1].from != "scratch" {
		t.Fatalf("stages: %+v %+v", df.stages[0], df.stages[1])
	}
	if run := df.stages[0].last("RUN"); run == nil || run.args != "go build ./cmd" || run.flags["mount"] != "type=cache,target=/x" || run.line != 4 {
		t.Errorf("RUN: %+v", run)
	}
	last := df.stages[1]
	if env := last.env(); env["A"] != "1" || env["B"] != "2" || env["C"] != "3" {
		t.Errorf("env: %v", env)
	}
	if ep := last.last("ENTRYPOINT"); ep == nil || strings.Join(ep.exec, " ") != "x run --" {
		t.Errorf("ENTRYPOINT: %+v", ep)
	}
	opts, argv, err := healthcheck(last.last("HEALTHCHECK"))
	if err != nil || opts["interval"] != "5s" || strings.Join(argv, " ") != "x healthcheck" {
		t.Errorf("HEALTHCHECK: %v %v %v", opts, argv, err)
	}
	if _, err := parseDockerfile("RUN x\n"); err == nil {
		t.Error("RUN before FROM: no error")
	}
}

func loadDockerfile(t *testing.T) *dockerfile {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df, err := parseDockerfile(string(b))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	return df
}

// target describes what each runtime stage must look like; the base images'
// users and start commands are taken from their own Dockerfiles
// (confluentinc/kafka-images kafka-connect-base, debezium/container-images
// connect-base, apache/kafka docker/jvm).
type target struct {
	name, fromPrefix, user string
	cmd                    func(st *stage, cmd []string) error
}

func exactCmd(want ...string) func(*stage, []string) error {
	return func(_ *stage, cmd []string) error {
		if strings.Join(cmd, "\x00") != strings.Join(want, "\x00") {
			return fmt.Errorf("CMD %q, want %q", cmd, want)
		}
		return nil
	}
}

var targets = []target{
	{"confluent", "confluentinc/cp-kafka-connect:", "appuser", exactCmd("/etc/confluent/docker/run")},
	{"debezium", "quay.io/debezium/connect:", "kafka", exactCmd("/docker-entrypoint.sh", "start")},
	{"apache", "apache/kafka:", "appuser", func(st *stage, cmd []string) error {
		// connect-distributed.sh reads only its properties file; connect-init
		// must read the same one.
		if len(cmd) != 2 || cmd[0] != "/opt/kafka/bin/connect-distributed.sh" {
			return fmt.Errorf("CMD %q, want [/opt/kafka/bin/connect-distributed.sh <worker.properties>]", cmd)
		}
		if wc := st.env()["CONNECT_INIT_WORKER_CONFIG"]; wc != cmd[1] {
			return fmt.Errorf("ENV CONNECT_INIT_WORKER_CONFIG=%q but the worker reads %q", wc, cmd[1])
		}
		return nil
	}},
}

const binaryPath = "/usr/local/bin/connect-init"

func TestDockerfile(t *testing.T) {
	df := loadDockerfile(t)
	cmds := subcommands(t)

	if v := df.globalArgs["CP_VERSION"]; !regexp.MustCompile(`^[78]\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("ARG CP_VERSION default %q: want a 7.x or 8.x release", v)
	}

	// The builder: static, reproducible, version stamped, Go new enough for go.mod.
	var build *stage
	for _, st := range df.stages {
		if run := st.last("RUN"); run != nil && strings.Contains(run.args, "go build") {
			build = st
		}
	}
	if build == nil {
		t.Fatal("no stage runs go build")
	}
	if !strings.HasPrefix(build.from, "golang:") {
		t.Errorf("builder FROM %s: want golang:<version>", build.from)
	}
	checkGoVersion(t, strings.TrimPrefix(build.from, "golang:"))
	run := build.last("RUN").args
	for _, want := range []string{"-trimpath", "-X main.version=", "./cmd/connect-init", "-o /out/connect-init"} {
		if !strings.Contains(run, want) {
			t.Errorf("builder RUN %q lacks %q", run, want)
		}
	}
	if build.env()["CGO_ENABLED"] != "0" && !strings.Contains(run, "CGO_ENABLED=0") {
		t.Error("builder does not set CGO_ENABLED=0: the binary must be static (UBI and Alpine bases)")
	}

	// The release image: FROM scratch, the builder's binary and the jar
	// only, for COPY --from=; the targets take both through the dist
	// stage, FROM ${RELEASE} (the release stage unless a prebuilt image is
	// given), which is where the container tests start building.
	relName := df.globalArgs["RELEASE"]
	rel := df.stage(relName)
	if rel == nil || relName != "release" {
		t.Fatalf("ARG RELEASE=%q: want the default to name the stage release", relName)
	}
	if rel.from != "scratch" {
		t.Errorf("stage release FROM %s, want scratch: only the binary and the jar", rel.from)
	}
	relFiles := map[string]string{}
	for _, in := range rel.instrs {
		if in.cmd != "COPY" || in.flags["from"] == "" {
			t.Errorf("stage release: %s %s: only COPY --from= of the builders belongs there", in.cmd, in.args)
			continue
		}
		f := strings.Fields(in.args)
		relFiles[f[len(f)-1]] = in.flags["from"]
	}
	if relFiles["/connect-init"] != build.name || relFiles["/connect-init-provider.jar"] == "" || len(relFiles) != 2 {
		t.Errorf("stage release copies %v: want /connect-init from %s and /connect-init-provider.jar, nothing else", relFiles, build.name)
	}
	dist := df.stage("dist")
	if dist == nil || dist.from != relName || len(dist.instrs) != 0 {
		t.Fatalf("no stage dist FROM ${RELEASE} without instructions: the targets' one source of the binary and the jar")
	}

	if last := df.stages[len(df.stages)-1]; last.name != "confluent" {
		t.Errorf("last stage is %q: the default target must be confluent", last.name)
	}
	wantTimeout := defaultTimeout(t)
	for _, tg := range targets {
		st := df.stage(tg.name)
		if st == nil {
			t.Errorf("no stage %q", tg.name)
			continue
		}
		where := "stage " + tg.name
		if !strings.HasPrefix(st.from, tg.fromPrefix) {
			t.Errorf("%s: FROM %s, want %s<tag>", where, st.from, tg.fromPrefix)
		}
		copied := false
		for _, in := range st.instrs {
			if in.cmd == "COPY" && in.flags["from"] == "dist" && in.args == "/connect-init "+binaryPath {
				copied = true
			}
		}
		if !copied {
			t.Errorf("%s: no COPY --from=dist /connect-init %s", where, binaryPath)
		}
		if u := st.last("USER"); u == nil {
			t.Errorf("%s: no USER: the base image's user is not restated", where)
		} else if user, _, _ := strings.Cut(u.args, ":"); user == "root" || user == "0" || user != tg.user {
			t.Errorf("%s: USER %s, want the image's non-root user %s", where, u.args, tg.user)
		}
		ep := st.last("ENTRYPOINT")
		if ep == nil || strings.Join(ep.exec, " ") != "connect-init run --" {
			t.Errorf("%s: ENTRYPOINT %v, want [\"connect-init\", \"run\", \"--\"] (exec form)", where, ep)
		} else {
			checkSubcommands(t, where+" ENTRYPOINT", ep.exec)
		}
		if c := st.last("CMD"); c == nil || c.exec == nil {
			t.Errorf("%s: no CMD in exec form", where)
		} else if err := tg.cmd(st, c.exec); err != nil {
			t.Errorf("%s: %v", where, err)
		}
		hc := st.last("HEALTHCHECK")
		if hc == nil {
			t.Errorf("%s: no HEALTHCHECK", where)
			continue
		}
		opts, argv, err := healthcheck(hc)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if len(argv) != 2 || argv[0] != "connect-init" || argv[1] != "healthcheck" || !cmds[argv[1]] {
			t.Errorf("%s: HEALTHCHECK CMD %q, want [\"connect-init\", \"healthcheck\"]", where, argv)
		}
		for _, k := range []string{"interval", "timeout", "start-period"} {
			if _, err := time.ParseDuration(opts[k]); err != nil {
				t.Errorf("%s: HEALTHCHECK --%s=%q: %v", where, k, opts[k], err)
			}
		}
		if n, err := strconv.Atoi(opts["retries"]); err != nil || n < 1 {
			t.Errorf("%s: HEALTHCHECK --retries=%q", where, opts["retries"])
		}
		if sp, _ := time.ParseDuration(opts["start-period"]); sp <= wantTimeout {
			t.Errorf("%s: HEALTHCHECK --start-period=%s does not cover the gates' default timeout %s", where, sp, wantTimeout)
		}
	}
}

// checkGoVersion: the builder image's Go must satisfy go.mod's go line.
func checkGoVersion(t *testing.T, image string) {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(string(b))
	im := regexp.MustCompile(`^(\d+)\.(\d+)`).FindStringSubmatch(image)
	if m == nil || im == nil {
		t.Errorf("cannot compare go.mod's go line with golang:%s", image)
		return
	}
	need := [2]int{atoi(m[1]), atoi(m[2])}
	have := [2]int{atoi(im[1]), atoi(im[2])}
	if have[0] < need[0] || (have[0] == need[0] && have[1] < need[1]) {
		t.Errorf("builder golang:%s is older than go.mod's go %s.%s", image, m[1], m[2])
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ignorePattern is one .dockerignore line.
type ignorePattern struct {
	re      *regexp.Regexp
	exclude bool // a "!" line: include again
}

// parseDockerignore follows Docker's rules closely enough for this
// repository: paths relative to the context root, * and ? within one path
// element, ** across elements, "!" re-includes, the last match wins, and a
// pattern that matches a directory matches everything below it.
func parseDockerignore(src string) ([]ignorePattern, error) {
	var pats []ignorePattern
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := ignorePattern{}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			p.exclude, line = true, strings.TrimSpace(rest)
		}
		line = strings.Trim(line, "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("(/.*)?$")
		var err error
		if p.re, err = regexp.Compile(re.String()); err != nil {
			return nil, fmt.Errorf("%q: %v", line, err)
		}
		pats = append(pats, p)
	}
	return pats, nil
}

func ignored(pats []ignorePattern, file string) bool {
	out := false
	for _, p := range pats {
		if p.re.MatchString(file) {
			out = !p.exclude
		}
	}
	return out
}

func TestParseDockerignore(t *testing.T) {
	pats, err := parseDockerignore(".git\n**/testdata\n**/*_test.go\n/bin\n*.md\n!README.md\n")
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]bool{
		".git/config":                    true,
		"lock/testdata/x.json":           true,
		"lock/lock_test.go":              true,
		"lock/lock.go":                   false,
		"bin/connect-init":               true,
		"cmd/bin/x.go":                   false,
		"NOTES.md":                       true,
		"README.md":                      false,
		"workerconfig/wc.go":             false,
		"gate/testdata_helper.go":        false,
		"examples/swarm/stack.yml":       false,
		"internal/a/testdata/deep/x.txt": true,
	} {
		if got := ignored(pats, file); got != want {
			t.Errorf("ignored(%s) = %v, want %v", file, got, want)
		}
	}
}

// TestDockerignoreKeepsSources: the build context must still hold every file
// `go build ./cmd/connect-init` reads (nothing here can run docker build).
func TestDockerignoreKeepsSources(t *testing.T) {
	b, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	pats, err := parseDockerignore(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{".git/HEAD", ".cache/x.jar"} {
		if !ignored(pats, must) {
			t.Errorf(".dockerignore keeps %s in the build context", must)
		}
	}
	list := exec.Command("go", "list", "-deps", "-f",
		`{{if and .Module .Module.Main}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}`,
		"../cmd/connect-init")
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	rootOut, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(string(rootOut)) + "/"
	files := []string{"go.mod", "go.sum"}
	for _, f := range strings.Fields(string(out)) {
		files = append(files, strings.TrimPrefix(f, root))
	}
	if len(files) < 3 {
		t.Fatalf("go list found no source files:\n%s", out)
	}
	for _, f := range files {
		if ignored(pats, f) {
			t.Errorf(".dockerignore excludes %s, which go build ./cmd/connect-init needs", f)
		}
	}
}
