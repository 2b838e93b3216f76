// Command bedctl is the container test bed's HTTP client inside its images
// (busybox's wget cannot resolve names when statically linked):
//
//	bedctl http METHOD URL [BODY]
//
// prints the status code on the first line and the body after it, and
// exits 0 whenever the server answered, 1 when it did not.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 4 || os.Args[1] != "http" {
		fmt.Fprintln(os.Stderr, "usage: bedctl http METHOD URL [BODY]")
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
