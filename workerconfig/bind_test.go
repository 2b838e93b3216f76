package workerconfig

import "testing"

func TestAdvertisedListener(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string // scheme address
	}{
		{map[string]string{}, "http :8083"},
		{map[string]string{"listeners": "http://0.0.0.0:9000"}, "http 0.0.0.0:9000"},
		// An http listener wins even when an https one comes first, as
		// the advertised scheme does.
		{map[string]string{"listeners": "https://:8443,http://127.0.0.1:8083"}, "http 127.0.0.1:8083"},
		{map[string]string{"listeners": "https://worker-1:8443"}, "https worker-1:8443"},
		{map[string]string{"listeners": "http://[::1]:8083"}, "http [::1]:8083"},
		// rest.advertised.port says how others reach us; we bind the
		// listener's own port.
		{map[string]string{"listeners": "http://:8083", "rest.advertised.port": "18083"}, "http :8083"},
	} {
		l, err := AdvertisedListener(tc.props)
		if err != nil {
			t.Errorf("%v: %v", tc.props, err)
			continue
		}
		if got := l.Scheme + " " + l.Address(); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.props, got, tc.want)
		}
	}
	if _, err := AdvertisedListener(map[string]string{"listeners": "http://:0"}); err == nil {
		t.Error("port 0: no error")
	}
}
