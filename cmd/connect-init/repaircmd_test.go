package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// Every bad repair flag exits 2 with one error naming the flag, before any
// connection: the bootstrap server (a counting listener) sees none.
func TestRepairBadFlags(t *testing.T) {
	addr, conns := countingListener(t)
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + addr, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_REST_ADVERTISED_HOST_NAME=w1"}
	for _, tc := range []struct {
		args []string
		flag string
		want string
	}{
		{[]string{"--topics=offsets,everything"}, "--topics", `unknown topic set`},
		{[]string{"--topics="}, "--topics", "is empty"},
		{[]string{"--replication-factor", "three"}, "--replication-factor", `not a whole number of replicas`},
		{[]string{"--replication-factor=0"}, "--replication-factor", "from 1 to 32767"},
		{[]string{"--replication-factor=-2"}, "--replication-factor", "from 1 to 32767"},
		{[]string{"--throttle=fast"}, "--throttle", `use a rate such as 50MB/s`},
		{[]string{"--throttle=-5MB/s"}, "--throttle", "not a rate"},
		{[]string{"--execute=maybe"}, "--execute", "cannot be parsed as bool"},
		{[]string{"--replication-factor"}, "--replication-factor", "needs a value"},
		{[]string{"--no-such-flag"}, "--no-such-flag", "is not a flag of connect-init repair"},
		{[]string{"extra"}, "command line", "takes no arguments"},
		{[]string{"--timeout=soon"}, "--timeout", "cannot be parsed as time.Duration"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"repair"}, tc.args...), env, &stdout, &stderr)
		out := stderr.String()
		if code != exitcode.Config || !strings.Contains(out, entryKind(tc.flag)+"="+quoteLogfmt(tc.flag)) || !strings.Contains(out, tc.want) || strings.Count(out, "\n") != 1 {
			t.Errorf("repair %v: want exit 2 with one error naming %s and %q, got %d:\n%s", tc.args, tc.flag, tc.want, code, out)
		}
		if stdout.Len() != 0 {
			t.Errorf("repair %v printed to stdout: %q", tc.args, stdout.String())
		}
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("bad flags opened %d connection(s) to the bootstrap server", n)
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{
		"50MB/s": 50_000_000, "10MiB/s": 10 << 20, "500KB": 500_000, "1000000": 1_000_000, "1.5GB/s": 1_500_000_000,
		"2kib/s": 2048, "none": 0, "0": 0, "off": 0, " 7 MB/s ": 7_000_000, "100B/s": 100,
	} {
		got, err := parseRate(in)
		if err != nil || got != want {
			t.Errorf("parseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "MB/s", "-1MB", "0.1B", "5TB", "1e20"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q): want an error", in)
		}
	}
}

func TestRepairHelpListsFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"repair", "-h"}, nil, &stdout, &stderr); code != exitcode.OK {
		t.Fatalf("repair -h: exit %d", code)
	}
	for _, f := range []string{"--topics offsets,internal", "--replication-factor count", "--execute", "--throttle rate"} {
		if !strings.Contains(stdout.String(), f) {
			t.Errorf("repair -h does not list %s on stdout:\n%s", f, stdout.String())
		}
	}
}

func quoteLogfmt(s string) string {
	if strings.ContainsAny(s, " \"=") {
		return `"` + s + `"`
	}
	return s
}

func TestRanges(t *testing.T) {
	for want, in := range map[string][]int32{"0-49": func() []int32 {
		var ids []int32
		for i := int32(49); i >= 0; i-- {
			ids = append(ids, i)
		}
		return ids
	}(), "0-3,5,7-9": {9, 8, 7, 5, 3, 2, 1, 0}, "4": {4}, "": nil} {
		if got := ranges(in); got != want {
			t.Errorf("ranges(%v) = %q, want %q", in, got, want)
		}
	}
}

// entryKind is the attribute an event names what with: a flag or the
// command line is a flag, anything else a setting.
func entryKind(what string) string {
	if strings.HasPrefix(what, "--") || what == "command line" {
		return "flag"
	}
	return "setting"
}
