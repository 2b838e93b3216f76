package restclient

import "testing"

func TestParsePeer(t *testing.T) {
	for in, want := range map[string]string{
		"connect-1":               "http://connect-1:8083/",
		" connect-1:9000 ":        "http://connect-1:9000/",
		"10.0.0.9":                "http://10.0.0.9:8083/",
		"fd00::9":                 "http://[fd00::9]:8083/",
		"::1":                     "http://[::1]:8083/",
		"[fd00::9]":               "http://[fd00::9]:8083/",
		"[fd00::9]:9000":          "http://[fd00::9]:9000/",
		"https://connect-1:9443/": "https://connect-1:9443/",
		"HTTPS://connect-1":       "https://connect-1:443/",
		"http://[::1]":            "http://[::1]:80/",
		"tasks.connect":           "http://tasks.connect:8083/",
	} {
		got, err := ParsePeer(in, "http", "8083")
		if err != nil || got.Raw != want || got.Base() != want {
			t.Errorf("%q: %+v, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "a b", "host:1:2", "ftp://x/", "http://", "c:0", "c:65536", "c:http", ":8083",
		"http://c:8083/x", "[::1", "[::1]x", "[a:b]:1", "a/b", "http://c:8083?x"} {
		if got, err := ParsePeer(in, "http", "8083"); err == nil {
			t.Errorf("%q: %+v, want an error", in, got)
		}
	}
}
