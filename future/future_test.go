package future

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestWaitGivesEveryCallerTheSameOutcome(t *testing.T) {
	release := make(chan struct{})
	calls := 0
	f := Go(context.Background(), func(context.Context) (int, error) {
		calls++
		<-release
		return 7, errors.New("seven")
	})
	var wg sync.WaitGroup
	got := make([]int, 3)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := f.Wait()
			if err == nil || err.Error() != "seven" {
				t.Errorf("waiter %d: error %v, want seven", i, err)
			}
			got[i] = v
		}()
	}
	close(release)
	wg.Wait()
	if v, _ := f.Wait(); v != 7 || calls != 1 {
		t.Errorf("late Wait = %d after %d reads, want 7 after 1", v, calls)
	}
	for i, v := range got {
		if v != 7 {
			t.Errorf("waiter %d got %d, want 7", i, v)
		}
	}
}

func TestStopCancelsTheReadAndWaitsForIt(t *testing.T) {
	started := make(chan struct{})
	ended := false
	f := Go(context.Background(), func(ctx context.Context) (struct{}, error) {
		close(started)
		<-ctx.Done()
		ended = true
		return struct{}{}, ctx.Err()
	})
	<-started
	f.Stop()
	if !ended {
		t.Fatal("Stop returned before the read did")
	}
	if _, err := f.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after Stop: %v, want context.Canceled", err)
	}
}

func TestTheReadsContextEndsWithTheRead(t *testing.T) {
	var rctx context.Context
	f := Go(context.Background(), func(ctx context.Context) (int, error) { rctx = ctx; return 1, nil })
	f.Wait()
	if rctx.Err() == nil {
		t.Error("the read's context is still live after the read returned (a leak)")
	}
}

func TestNilStopAndDone(t *testing.T) {
	var f *Future[int]
	f.Stop() // must not panic
	d := Done(3, nil)
	d.Stop()
	if v, err := d.Wait(); v != 3 || err != nil {
		t.Errorf("Done(3) = %d, %v", v, err)
	}
}

func TestWaitContextEndsWithTheContextNotTheRead(t *testing.T) {
	release := make(chan struct{})
	f := Go(context.Background(), func(context.Context) (int, error) { <-release; return 1, nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.WaitContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitContext on an ended context: %v, want context.Canceled", err)
	}
	close(release)
	if v, err := f.WaitContext(context.Background()); v != 1 || err != nil {
		t.Errorf("WaitContext once the read ended = %d, %v; want 1", v, err)
	}
	if v, err := f.WaitContext(ctx); v != 1 || err != nil {
		t.Errorf("an ended read's outcome wins over an ended context: got %d, %v", v, err)
	}
}
