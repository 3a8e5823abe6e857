package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// startHTTP runs the proxy in-process on --http 127.0.0.1:0 in front of a
// go-sdk upstream over HTTP, with limits.
func startHTTP(t *testing.T, limits compose.Settings) *Main {
	t.Helper()
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	up.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
	})
	us := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(us.Close)
	cfg, err := config.ParseWith([]byte("upstream:\n  url: "+us.URL+"\n"), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), Options{Config: cfg, HTTP: "127.0.0.1:0", Limits: limits, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func initialize(url string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return http.DefaultClient.Do(req)
}

// TestHTTPSessionFloodStaysBounded: a flood of initialize requests to the
// proxy's --http listener leaves at most --mcp-max-sessions sessions open
// (before, every one stayed, 5,000 of them took the proxy from 22 to
// 226 MB), and every initialize is answered.
func TestHTTPSessionFloodStaysBounded(t *testing.T) {
	t.Parallel()
	limits := compose.Defaults()
	limits.MaxSessions = 20
	m := startHTTP(t, limits)
	url := m.URL + "/mcp"
	var wg sync.WaitGroup
	statuses := make(chan int, 200)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := initialize(url)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	t.Logf("responses by status: %v", counts)
	if counts[http.StatusOK] == 0 || counts[http.StatusOK]+counts[http.StatusServiceUnavailable]+counts[http.StatusTooManyRequests] != 200 {
		t.Errorf("200 initializes under a cap of %d: %v, want some sessions and a refusal for the rest", limits.MaxSessions, counts)
	}
	// Sessions an evicting cap has closed may be listed until their
	// closing ends.
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		for range m.Proxy.Server().Sessions() {
			n++
		}
		if n <= limits.MaxSessions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions open after 200 initializes, want at most %d", n, limits.MaxSessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPSlowBodyIsCutOff: a body sent at one byte a second is cut off
// by the read timeout (a short one here), and a kept-alive connection
// that sends nothing is closed after the idle timeout: the connection
// ends in both cases, where before it stayed open indefinitely.
func TestHTTPSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	limits := compose.Defaults()
	limits.ReadTimeout = 300 * time.Millisecond
	limits.IdleTimeout = 300 * time.Millisecond
	m := startHTTP(t, limits)
	host := strings.TrimPrefix(m.URL, "http://")

	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{", host)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte a second, until the server hangs up
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net, far past the timeout
	if ended := endOf(conn); ended != nil {
		t.Errorf("a body at one byte a second against a 300 ms read timeout: %v", ended)
	}

	// Idle: one request, then nothing.
	idle, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /nothing HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	_ = idle.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(idle)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("a kept-alive connection idle past a 300 ms idle timeout: %v, want it closed", err)
	}
}

// endOf reads what the server sends on conn until it closes the
// connection: nil then; the read's error if the connection did not end.
func endOf(conn net.Conn) error {
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.New("still open after a minute")
	}
	return nil
}

// TestHTTPBodyLimit: a body past --max-body is refused with 413 on the
// proxy's listener, in both eras.
func TestHTTPBodyLimit(t *testing.T) {
	t.Parallel()
	limits := compose.Defaults()
	limits.MaxBody = 400 << 10
	m := startHTTP(t, limits)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		req, _ := http.NewRequest(http.MethodPost, m.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("x", 500<<10)+`"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", version)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: 500 KiB past a 400 KiB limit: %d, want 413", version, res.StatusCode)
		}
	}
}

// TestHTTPLimitFlags: the listener's flags are the service's settings of
// the same names, with their checks; the write timeout defaults to 10m.
func TestHTTPLimitFlags(t *testing.T) {
	f, done, err := parseFlags([]string{"--mcp-max-sessions", "5", "--mcp-sessions-per-principal", "2", "--http-read-timeout", "2s", "--max-body", "400000"}, io.Discard, io.Discard)
	if err != nil || done {
		t.Fatal(done, err)
	}
	if l := f.limits; l.MaxSessions != 5 || l.SessionShare != 2 || l.ReadTimeout != 2*time.Second || l.MaxBody != 400000 || l.WriteTimeout != 10*time.Minute || l.IdleTimeout != 2*time.Minute {
		t.Errorf("limits %+v", l)
	}
	for _, args := range [][]string{{"--http-read-timeout", "0s"}, {"--max-body", "10"}, {"--mcp-max-sessions", "-1"}} {
		var stderr strings.Builder
		if code := run(append([]string{"--config", "unused.yaml"}, args...), func(string) string { return "" }, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the flag", args, code, stderr.String())
		}
	}
}
