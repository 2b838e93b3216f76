// Command bedctl is the container test bed's HTTP client inside its images
// (busybox's wget cannot resolve names when statically linked):
//
//	bedctl http METHOD URL [BODY]
//
// prints the status code on the first line and the body after it, and
// exits 0 whenever the server answered, 1 when it did not.
//
//	bedctl tcp-ready SECONDS HOST:PORT[,HOST:PORT...]
//
// waits at most SECONDS until one of the addresses accepts a TCP
// connection (the stand-in of Confluent's `cub kafka-ready`), exit 0 when
// one did, 1 when none did in time.
package main

import (
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
	if len(os.Args) == 4 && os.Args[1] == "tcp-ready" {
		os.Exit(tcpReady(os.Args[2], os.Args[3]))
	}
	if len(os.Args) < 4 || os.Args[1] != "http" {
		fmt.Fprintln(os.Stderr, "usage: bedctl http METHOD URL [BODY] | bedctl tcp-ready SECONDS HOST:PORT[,...]")
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
