package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// slowPost sends a POST's headers and then its body one byte every
// interval, and returns how the connection ended: the status line the
// server answered with (or "" if it only closed), and how many body bytes
// were sent by then.
func slowPost(t *testing.T, base, path, contentType string, interval time.Duration) (status string, sent int) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const length = 1000
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", path, u.Host, contentType, length)
	done := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		_, _ = io.Copy(io.Discard, c) // until the server closes
		done <- strings.TrimSpace(line)
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	giveUp := time.After(20 * time.Second)
	for {
		select {
		case status := <-done:
			return status, sent
		case <-tick.C:
			if sent < length {
				if _, err := c.Write([]byte("x")); err == nil {
					sent++
				}
			}
		case <-giveUp:
			t.Fatalf("POST %s: the connection is still open after 20 s at one byte per %v (%d bytes sent)", path, interval, sent)
		}
	}
}

// TestSlowBodiesAreCutOff: a body trickling in (one byte per 200 ms
// against a 1 s read timeout) is cut off on both listeners, the MCP one and
// the review one; before, such a connection stayed open for minutes.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	m := start(t, "--data-dir", t.TempDir(), "--review-addr", "127.0.0.1:0", "--http-read-timeout", "1s")
	mcpBase := strings.TrimSuffix(m.MCPURL, "/mcp")
	s := agent(t, m.MCPURL)
	created := call(t, s, "elicit_approval", map[string]any{"message": "Ship?", "context": 1})
	review := strings.TrimPrefix(created["reviewUrl"].(string), m.ReviewBase)
	for _, tc := range []struct{ base, path, contentType string }{
		{mcpBase, "/mcp", "application/json"},
		{m.ReviewBase, review, "application/x-www-form-urlencoded"},
	} {
		status, sent := slowPost(t, tc.base, tc.path, tc.contentType, 200*time.Millisecond)
		if sent >= 1000 {
			t.Errorf("%s%s: the whole slow body was accepted", tc.base, tc.path)
		}
		t.Logf("%s: ended with %q after %d bytes", tc.path, status, sent)
	}
	// A long wait is not cut off by the read timeout once its body is in.
	got := call(t, s, "elicit_await", map[string]any{"elicitationId": created["elicitationId"], "waitSeconds": 2})
	if got["status"] != "pending" {
		t.Errorf("a 2 s await under a 1 s read timeout: %v", got)
	}
}

// TestBodyLimitOnEveryRoute: a body beyond --max-body gets 413 on /mcp and
// on the review routes, whichever listener serves them.
func TestBodyLimitOnEveryRoute(t *testing.T) {
	m := start(t, "--data-dir", t.TempDir(), "--review-addr", "127.0.0.1:0", "--max-body", "400000")
	big := strings.Repeat("x", 500000)
	created := call(t, agent(t, m.MCPURL), "elicit_approval", map[string]any{"message": "Ship?", "context": 1})
	for _, tc := range []struct{ u, contentType string }{{m.MCPURL, "application/json"}, {created["reviewUrl"].(string), "application/x-www-form-urlencoded"}} {
		u := tc.u
		for _, chunked := range []bool{false, true} {
			var body io.Reader = strings.NewReader(big)
			if chunked {
				body = io.MultiReader(strings.NewReader(big)) // no length: sent chunked
			}
			req, _ := http.NewRequest("POST", u, body)
			req.Header.Set("Content-Type", tc.contentType)
			req.Header.Set("Accept", "application/json, text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("POST %s (chunked %v): %v", u, chunked, err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("POST %s with %d bytes (chunked %v): %d, want 413", u, len(big), chunked, res.StatusCode)
			}
		}
	}
}
