package workerconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/magiconair/properties"
)

// javaQuote mirrors testdata/Dump.java's q(): UTF-16 units outside
// printable ASCII as \uXXXX.
func javaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u == '"' || u == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u < 0x20 || u > 0x7e:
			fmt.Fprintf(&b, "\\u%04x", u)
		default:
			b.WriteByte(byte(u))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestParseMatchesJava compares Parse with java.util.Properties.load of
// JDK 17 on the tricky corpus. testdata/java_expected.txt was produced by
// `java Dump.java tricky_*.properties` in testdata/.
func TestParseMatchesJava(t *testing.T) {
	files, _ := filepath.Glob("testdata/tricky_*.properties")
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	var got strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		p, err := Parse(data)
		if err != nil {
			fmt.Fprintf(&got, "%s ERROR IllegalArgumentException\n", name)
			continue
		}
		fmt.Fprintf(&got, "%s OK %d\n", name, len(p))
		// Java sorts by UTF-16 order; equal to byte order for this corpus.
		for _, k := range p.Keys() {
			fmt.Fprintf(&got, "%s %s\n", javaQuote(k), javaQuote(p[k]))
		}
	}
	want, err := os.ReadFile("testdata/java_expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("Parse differs from Java.\n--- got\n%s\n--- want\n%s", got.String(), want)
	}
}

func TestParseCases(t *testing.T) {
	cases := []struct {
		in   string
		want Properties
		err  bool
	}{
		{"a=b", Properties{"a": "b"}, false},
		{"a=1\na=2", Properties{"a": "2"}, false},
		{"\\\n#c=1\nx=2", Properties{"x": "2"}, false}, // JDK 17: comment after an empty continued line
		{"k=v\\", Properties{"k": "v"}, false},         // odd backslash at EOF dropped
		{"k=v\\\\", Properties{"k": "v\\"}, false},
		{"k=\\u004", nil, true},
		{"k=${file:/a:b}", Properties{"k": "${file:/a:b}"}, false},
		{"k=\\uDE00", Properties{"k": "\uFFFD"}, false}, // lone surrogate
		{"  # c\n\t! c\n", Properties{}, false},
		{"a\\\r\n b=c", Properties{"ab": "c"}, false},
	}
	for _, c := range cases {
		got, err := Parse([]byte(c.in))
		if (err != nil) != c.err {
			t.Errorf("Parse(%q) error = %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "w.properties")
	os.WriteFile(f, []byte("group.id = g\nbad=\\uZZZZ\n"), 0o600)
	if _, err := ReadFile(f); err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ReadFile error = %v, want file name and line", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestParseUTF8(t *testing.T) {
	p, err := parseUTF8([]byte("\xef\xbb\xbfk=\xc3\xa9"))
	if err != nil || p["\ufeffk"] != "é" {
		t.Errorf("parseUTF8 = %q, %v; Java's UTF-8 reader keeps the BOM and decodes é", p, err)
	}
	if _, err := parseUTF8([]byte("k=\xe9")); err == nil {
		t.Error("invalid UTF-8 accepted; FileConfigProvider's strict reader fails")
	}
}

// TestMagiconairDeviations records where github.com/magiconair/properties
// v1.18.13 differs from Java (the reason this package has its own reader).
// If the library is fixed, this test fails and the choice can be revisited.
func TestMagiconairDeviations(t *testing.T) {
	load := func(s string, expand bool) (map[string]string, error) {
		l := &properties.Loader{Encoding: properties.ISO_8859_1, DisableExpansion: !expand}
		p, err := l.LoadBytes([]byte(s))
		if err != nil {
			return nil, err
		}
		return p.Map(), nil
	}
	type dev struct {
		name, in string
		java     Properties
	}
	devs := []dev{
		{"key continuation kept as newline", "k\\\n  ey=v", Properties{"key": "v"}},
		{"\\r\\n continuation ends the value", "a=1\\\r\n  2", Properties{"a": "12"}},
		{"empty key rejected", "=v", Properties{"": "v"}},
		{"trailing backslash at EOF rejected", "a=b\\", Properties{"a": "b"}},
		{"surrogate pair broken", "a=\\uD83D\\uDE00", Properties{"a": "😀"}},
		{"comment after empty continued line", "\\\n#c=1", Properties{}},
	}
	for _, d := range devs {
		mine, err := Parse([]byte(d.in))
		if err != nil || fmt.Sprint(mine) != fmt.Sprint(d.java) {
			t.Errorf("%s: Parse = %q, %v; want Java's %q", d.name, mine, err, d.java)
		}
		lib, err := load(d.in, false)
		if err == nil && fmt.Sprint(Properties(lib)) == fmt.Sprint(d.java) {
			t.Errorf("%s: magiconair now agrees with Java (%q)", d.name, lib)
		}
	}
	// Default expansion would break ${file:...} references: Get resolves
	// them against other keys and the process environment.
	p, err := properties.Load([]byte("a=${file:/x:y}\nh=${HOME}"), properties.ISO_8859_1)
	if err != nil {
		t.Logf("magiconair rejects ${file:/x:y} with expansion on: %v", err)
	} else if v, _ := p.Get("a"); v == "${file:/x:y}" {
		t.Errorf("magiconair no longer expands ${...} by default (a=%q)", v)
	} else {
		t.Logf("magiconair expands a=${file:/x:y} to %q", v)
	}
}
