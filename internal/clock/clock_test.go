package clock

import (
	"testing"
	"time"
)

type fixed struct{ ch chan time.Time }

func (f fixed) Now() time.Time                       { return time.Unix(42, 0) }
func (f fixed) After(time.Duration) <-chan time.Time { return f.ch }

func TestOr(t *testing.T) {
	if _, ok := Or(nil).(System); !ok {
		t.Fatalf("Or(nil) = %T, want System", Or(nil))
	}
	f := fixed{ch: make(chan time.Time)}
	if got := Or(f).Now(); !got.Equal(time.Unix(42, 0)) {
		t.Fatalf("Or(f).Now() = %v, want f's time", got)
	}
}

func TestSleep(t *testing.T) {
	f := fixed{ch: make(chan time.Time, 1)}
	f.ch <- time.Unix(43, 0)
	if !Sleep(f, nil, time.Hour) {
		t.Fatal("Sleep returned false although the clock fired")
	}
	done := make(chan struct{})
	close(done)
	if Sleep(fixed{ch: make(chan time.Time)}, done, time.Hour) {
		t.Fatal("Sleep returned true although done was closed and the clock never fired")
	}
}

func TestStepping(t *testing.T) {
	c := NewStepping(time.Unix(0, 0))
	<-c.After(3 * time.Second)
	<-c.After(2 * time.Second)
	if got := c.Now(); !got.Equal(time.Unix(5, 0)) {
		t.Fatalf("Now = %v, want 5s after the start", got)
	}
	if c.Waited() != 5*time.Second {
		t.Fatalf("Waited = %v", c.Waited())
	}
}
