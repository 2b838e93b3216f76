// Command bedctl is the container test bed's HTTP client inside its images
// (busybox's wget cannot resolve names when statically linked):
//
//	bedctl http METHOD URL [BODY]
//
// prints the status code on the first line and the body after it, and
// exits 0 whenever the server answered, 1 when it did not.
//
//	bedctl poll INTERVAL HOST PORT PATH
//
// is the rolling-update test's observer (internal/containerbed, make
// rolling): every INTERVAL it resolves HOST (tasks.<service>: every task's
// address), asks the addresses in turn for http://ADDR:PORT/PATH until one
// answers 200, and prints one line: the time in Unix milliseconds, the
// address that answered ("-" when none did) and the body on one line. It
// runs until it is stopped.
//
//	bedctl tcp-ready SECONDS HOST:PORT[,HOST:PORT...]
//
// waits at most SECONDS until one of the addresses accepts a TCP
// connection (the stand-in of Confluent's `cub kafka-ready`), exit 0 when
// one did, 1 when none did in time.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) == 6 && os.Args[1] == "poll" {
		os.Exit(poll(os.Args[2], os.Args[3], os.Args[4], os.Args[5]))
	}
	if len(os.Args) == 4 && os.Args[1] == "tcp-ready" {
		os.Exit(tcpReady(os.Args[2], os.Args[3]))
	}
	if len(os.Args) < 4 || os.Args[1] != "http" {
		fmt.Fprintln(os.Stderr, "usage: bedctl http METHOD URL [BODY] | bedctl poll INTERVAL HOST PORT PATH | bedctl tcp-ready SECONDS HOST:PORT[,...]")
		os.Exit(2)
	}
	var body io.Reader
	if len(os.Args) > 4 {
		body = strings.NewReader(os.Args[4])
	}
	req, err := http.NewRequest(os.Args[2], os.Args[3], body)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d\n%s\n", resp.StatusCode, b)
}

// poll is `bedctl poll`. A worker that is stopping or still starting
// refuses or answers late, so each request is short and the next address
// is tried; a round in which no worker answered is printed too, so that
// the observer's own gaps show in the record.
func poll(interval, host, port, path string) int {
	every, err := time.ParseDuration(interval)
	if err != nil || every <= 0 {
		fmt.Fprintln(os.Stderr, "bedctl poll: INTERVAL must be a positive duration such as 250ms")
		return 2
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for next := time.Now(); ; next = next.Add(every) {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		} else {
			next = time.Now()
		}
		at := time.Now().UnixMilli()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		addrs, _ := net.DefaultResolver.LookupHost(ctx, host)
		cancel()
		answered := false
		for _, a := range addrs {
			resp, err := client.Get("http://" + net.JoinHostPort(a, port) + path)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				continue
			}
			fmt.Printf("%d %s %s\n", at, a, bytes.ReplaceAll(bytes.TrimSpace(b), []byte("\n"), nil))
			answered = true
			break
		}
		if !answered {
			fmt.Printf("%d - \n", at)
		}
	}
}

// tcpReady is `bedctl tcp-ready`: the exit code.
func tcpReady(seconds, servers string) int {
	n, err := strconv.Atoi(seconds)
	if err != nil || servers == "" {
		fmt.Fprintln(os.Stderr, "usage: bedctl tcp-ready SECONDS HOST:PORT[,...]")
		return 2
	}
	deadline := time.Now().Add(time.Duration(n) * time.Second)
	for {
		for _, s := range strings.Split(servers, ",") {
			// A listener may carry a security-protocol prefix (SSL://h:p).
			if i := strings.Index(s, "://"); i >= 0 {
				s = s[i+3:]
			}
			if c, err := net.DialTimeout("tcp", strings.TrimSpace(s), 2*time.Second); err == nil {
				c.Close()
				fmt.Println("kafka-ready: " + s + " accepts connections")
				return 0
			}
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "kafka-ready: none of %s accepted a connection within %s s\n", servers, seconds)
			return 1
		}
		time.Sleep(time.Second)
	}
}
