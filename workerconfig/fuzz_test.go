package workerconfig

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
)

// refPropertyName is an independent statement of dub's rule for ASCII
// names: each run of underscores is kept as is at the ends, becomes "." when
// it is a single "_" between two other characters, and otherwise goes
// through "___" -> "-" and "__" -> "_".
func refPropertyName(raw string) string {
	raw = strings.ToLower(raw)
	var b strings.Builder
	for i := 0; i < len(raw); {
		if raw[i] != '_' {
			b.WriteByte(raw[i])
			i++
			continue
		}
		j := i
		for j < len(raw) && raw[j] == '_' {
			j++
		}
		run := raw[i:j]
		if len(run) == 1 && i > 0 && j < len(raw) {
			b.WriteByte('.')
		} else {
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(run, "___", "-"), "__", "_"))
		}
		i = j
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func FuzzPropertyName(f *testing.F) {
	for _, s := range []string{"CONNECT_X_Y_Z", "CONNECT_A____B", "CONNECT__", "CONNECT_INIT_X", "CONNECT_\u0130", "CONNECT_\xff_A", "X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, ok := PropertyName(name)
		wantOK := strings.HasPrefix(name, EnvPrefix) && !strings.HasPrefix(name, OwnEnvPrefix) &&
			name != "CONNECT_METRIC_REPORTERS" && len(name) > len(EnvPrefix)
		if ok != wantOK {
			t.Fatalf("PropertyName(%q) ok = %v, want %v", name, ok, wantOK)
		}
		if !ok {
			return
		}
		if isASCII(name) {
			if want := refPropertyName(name[len(EnvPrefix):]); got != want {
				t.Fatalf("PropertyName(%q) = %q, reference %q", name, got, want)
			}
		}
		if strings.Contains(got, "..") && !strings.Contains(name, "..") && !strings.Contains(name, "._") && !strings.Contains(name, "_.") {
			t.Fatalf("PropertyName(%q) = %q has an empty segment", name, got)
		}
	})
}

// storeJava writes p in .properties syntax (like Properties.store, every
// char outside printable ASCII as \uXXXX), for round trips.
func storeJava(p Properties) []byte {
	esc := func(s string) string {
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			switch u {
			case '\\', ' ', ':', '=', '#', '!':
				b.WriteByte('\\')
				b.WriteByte(byte(u))
			default:
				if u < 0x20 || u > 0x7e {
					fmt.Fprintf(&b, "\\u%04X", u)
				} else {
					b.WriteByte(byte(u))
				}
			}
		}
		return b.String()
	}
	var b strings.Builder
	for _, k := range p.Keys() {
		b.WriteString(esc(k) + "=" + esc(p[k]) + "\n")
	}
	return []byte(b.String())
}

func FuzzReadProperties(f *testing.F) {
	for _, s := range []string{"a=b\n", "k\\\n  ey = v\\\r\n w", "\\\n#c", "=x", "a=\\uD83D\\uDE00", "a=b\\", "\xef\xbb\xbfk=v", "x:\\u12"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if !strings.Contains(err.Error(), "malformed") {
				t.Fatalf("Parse: unexpected error kind %v", err)
			}
			return
		}
		again, err := Parse(storeJava(p))
		if err != nil {
			t.Fatalf("re-parse of stored form failed: %v", err)
		}
		if fmt.Sprint(again) != fmt.Sprint(p) {
			t.Fatalf("round trip changed properties:\n%q\n%q", p, again)
		}
	})
}

func FuzzResolveProviders(f *testing.F) {
	for _, s := range []string{"${env:SECRET}", "a${env:SECRET}b${env:SECRET}", "${env:/p:SECRET}", "${x:y}", "${env:NOPE}", "${env:${env:SECRET}}", "plain", "${:}"} {
		f.Add(s, "hunter2-xyz")
	}
	f.Fuzz(func(t *testing.T, value, secret string) {
		p := Properties{
			"config.providers":           "env",
			"config.providers.env.class": EnvVarConfigProviderClass,
			"ssl.key.password":           value,
		}
		out, err := ResolveProviders(p, []string{"SECRET=" + secret})
		if err != nil {
			if len(secret) >= 6 && !strings.Contains(value, secret) && strings.Contains(err.Error(), secret) {
				t.Fatalf("error leaks the resolved secret: %v", err)
			}
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error is %T, want *Error", err)
			}
			return
		}
		got := out["ssl.key.password"]
		if !providerRef.MatchString(value) && got != value {
			t.Fatalf("value without references changed: %q -> %q", value, got)
		}
		// Every reference resolved, each to SECRET's value: removing them
		// from the input and the secrets from the output must agree.
		want := providerRef.ReplaceAllLiteralString(value, secret)
		if got != want {
			t.Fatalf("resolved %q to %q, want %q", value, got, want)
		}
		if out["config.providers"] != "env" {
			t.Fatal("provider declaration changed")
		}
	})
}
