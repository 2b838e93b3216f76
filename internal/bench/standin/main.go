// Command standin is a tiny stand-in for a Kafka Connect worker, used by
// the lock-scale benchmark: `connect-init run -- standin -listen ADDR`
// execs it once the startup lock is acquired, and it answers GET /health
// with 200 on the worker's advertised REST port straight away, so a holder
// is ready as soon as it has exec'd.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8083", "address to serve /health on")
	maxLife := flag.Duration("max-life", 15*time.Minute, "exit after this long even if nobody stops us")
	readyAfter := flag.Duration("ready-after", 0, "wait this long before serving /health, as a worker that takes time to join (the fault harness)")
	readyFile := flag.String("ready-file", "", "and wait until this file exists (the fault harness decides when the worker is ready)")
	flag.Parse()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"healthy","message":"stand-in worker"}`)
	})
	go func() {
		time.Sleep(*maxLife)
		os.Exit(0)
	}()
	time.Sleep(*readyAfter)
	for *readyFile != "" {
		if _, err := os.Stat(*readyFile); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
	// The fault harness reads this line as the moment the worker became
	// ready: the port is bound, so /health answers from now on.
	fmt.Fprintf(os.Stderr, "{\"time\":%q,\"msg\":\"standin ready\"}\n", time.Now().Format(time.RFC3339Nano))
	if err := http.Serve(l, mux); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}
