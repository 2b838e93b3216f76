package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/settings"
)

// TestSaramaLoggerSwitchIsRaceFree: a sarama goroutine left over from one
// command (an abandoned dial) logs while the next command sets its logger.
// Under -race this failed in CI when each command assigned sarama.Logger.
// It also checks that sarama's lines reach the current command's log at
// debug level and no other's.
func TestSaramaLoggerSwitchIsRaceFree(t *testing.T) {
	var first, second bytes.Buffer
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				sarama.Logger.Print("background refresh")
			}
		}
	}()
	debug := settings.Settings{LogFormat: "text", LogLevel: "debug"}
	(&cli{stderr: &first}).logger(debug)
	for range 50 {
		(&cli{stderr: &first}).logger(debug)
	}
	close(stop)
	wg.Wait()
	(&cli{stderr: &second}).logger(debug)
	sarama.Logger.Print("after the switch")
	setSaramaHandler(newLogger(&bytes.Buffer{}, debug).Handler())
	if !strings.Contains(second.String(), "after the switch") || strings.Contains(first.String(), "after the switch") {
		t.Fatalf("sarama's line went to the wrong logger:\nfirst: %q\nsecond: %q", first.String(), second.String())
	}
}
