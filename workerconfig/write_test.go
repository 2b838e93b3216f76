package workerconfig

import "testing"

func TestEscapeValueRoundTrips(t *testing.T) {
	for _, v := range []string{"", "plain", ` leading`, `C:\dir\file`, "tab\tnew\nline\r", "ünïcödé 😀", "a=b:c#d!e", "trailing\\"} {
		got, err := Parse([]byte("k=" + EscapeValue(v) + "\n"))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if got["k"] != v {
			t.Errorf("escape(%q) reads back as %q", v, got["k"])
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	props := map[string]string{"b": " two", "a": "one\nline", "c=d": "x", "key with space": "v"}
	got, err := Parse(Format(props))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range props {
		if got[k] != v {
			t.Errorf("%q reads back as %q, want %q", k, got[k], v)
		}
	}
}
