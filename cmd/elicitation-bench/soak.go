package main

// The soak (docs/benchmarks.md, issue #10): the real local server
// ("elicitation serve", built from this checkout, with its default limits)
// on loopback, flooded with abandoned MCP sessions (an initialize each,
// never used or closed) and held by slow connections (headers or bodies
// trickling in a byte every two seconds, reconnecting when cut off), while
// one agent keeps calling elicit_status on its own session. It reports the
// server's memory (RSS) before, at its peak and after, the flood's
// outcome, and the status latency quiet and under the load.
//
//	go run ./cmd/elicitation-bench soak                      # 20,000 sessions, 1,000 slow connections
//	go run ./cmd/elicitation-bench soak -server-flags=--mcp-max-sessions=0   # the same without the session cap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
)

func soak(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench soak", flag.ExitOnError)
	sessions := fs.Int("sessions", 20000, "abandoned MCP sessions to open (an initialize each)")
	slow := fs.Int("slow", 1000, "slow connections to hold open during the flood (half trickle headers, half bodies)")
	rate := fs.Int("rate", 1000, "initializes per second")
	quiet := fs.Int("quiet-calls", 2000, "elicit_status calls measured before the flood")
	serverFlags := fs.String("server-flags", "", "extra flags for elicitation serve, space-separated")
	hold := fs.Duration("hold", 40*time.Second, "keep the slow connections and the agent going at least this long from the flood's start (past the server's 10 s header and 30 s body timeouts)")
	limit := fs.Duration("max-duration", 3*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	if *slow > 0 {
		fmt.Fprintln(os.Stderr, "(each slow connection is one file descriptor here and one in the server: ulimit -n must exceed", *slow+200, ")")
	}

	dir, err := os.MkdirTemp("", "elicitation-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "elicitation")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/elicitation").CombinedOutput(); err != nil {
		return fmt.Errorf("build ./cmd/elicitation (run this from the repository root): %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	sargs := []string{"serve", "--addr", addr, "--data-dir", dir, "--log-level", "error", "--cleanup-interval", "0"}
	if *serverFlags != "" {
		sargs = append(sargs, strings.Fields(*serverFlags)...)
	}
	cmd := exec.Command(bin, sargs...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	base := "http://" + addr
	if err := waitHealthy(base, 10*time.Second); err != nil {
		return fmt.Errorf("%w\n%s", err, stderr.String())
	}
	url := base + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), *limit)
	defer cancel()

	agent, err := newSession(url)
	if err != nil {
		return err
	}
	defer agent.close()
	id, err := createOne(url)
	if err != nil {
		return err
	}
	status := &target{tool: mcptools.ToolStatus, args: map[string]any{"elicitationId": id}}
	if _, err := load(status, []*session{agent}, 500); err != nil { // warm-up
		return err
	}
	quietLat, err := load(status, []*session{agent}, *quiet)
	if err != nil {
		return err
	}
	pid := cmd.Process.Pid
	rssBefore, _ := rss(pid)

	// Memory sampler.
	var peak atomic.Int64
	peak.Store(rssBefore)
	stopSampling := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				if r, err := rss(pid); err == nil && r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	})

	// Slow connections, held until the flood is over.
	slowCtx, stopSlow := context.WithCancel(ctx)
	var slowWG sync.WaitGroup
	var cut, dialed atomic.Int64
	for i := range *slow {
		slowWG.Go(func() { holdSlow(slowCtx, addr, i%2 == 0, &cut, &dialed) })
	}

	// The agent keeps calling elicit_status during the flood.
	var busyLat []float64
	var busyErr error
	agentDone := make(chan struct{})
	floodDone := make(chan struct{})
	go func() {
		defer close(agentDone)
		for {
			select {
			case <-floodDone:
				return
			default:
			}
			l, err := load(status, []*session{agent}, 20)
			busyLat = append(busyLat, l...)
			if err != nil {
				busyErr = err
				return
			}
		}
	}()

	// The flood: initialize, read the answer, never come back.
	start := time.Now()
	var accepted, refused, other atomic.Int64
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}
	tick := time.NewTicker(time.Second / time.Duration(max(*rate, 1)))
	var flood sync.WaitGroup
	sem := make(chan struct{}, 16)
	for n := 0; n < *sessions && ctx.Err() == nil; n++ {
		<-tick.C
		sem <- struct{}{}
		flood.Go(func() {
			defer func() { <-sem }()
			switch code := initializeOnly(ctx, hc, url); code {
			case http.StatusOK:
				accepted.Add(1)
			case http.StatusServiceUnavailable:
				refused.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	flood.Wait()
	tick.Stop()
	floodTime := time.Since(start)
	select {
	case <-time.After(time.Until(start.Add(*hold))):
	case <-ctx.Done():
	}
	close(floodDone)
	<-agentDone
	stopSlow()
	slowWG.Wait()
	close(stopSampling)
	sampling.Wait()
	hc.CloseIdleConnections()
	rssAfter, _ := rss(pid)
	if busyErr != nil {
		return fmt.Errorf("the agent's elicit_status failed during the flood: %w", busyErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("gave up after %v", *limit)
	}
	if len(busyLat) == 0 {
		return errors.New("no elicit_status call during the flood")
	}

	flags := "defaults"
	if *serverFlags != "" {
		flags = *serverFlags
	}
	fmt.Printf("# soak on loopback: elicitation serve (%s), %d abandoned sessions at %d/s over %.1f s, %d slow connections held %v\n", flags, *sessions, *rate, floodTime.Seconds(), *slow, max(*hold, floodTime).Round(time.Second))
	fmt.Printf("initialize: %d accepted, %d refused (503), %d other\n", accepted.Load(), refused.Load(), other.Load())
	fmt.Printf("slow connections: %d dialed, %d cut off by the server\n", dialed.Load(), cut.Load())
	fmt.Printf("server RSS: before %.0f MB, peak %.0f MB, after %.0f MB\n", mb(rssBefore), mb(peak.Load()), mb(rssAfter))
	qp50, qp99 := percentile(quietLat, 50), percentile(quietLat, 99)
	bp50, bp99 := percentile(busyLat, 50), percentile(busyLat, 99)
	fmt.Printf("elicit_status quiet:      p50 %.3f ms  p99 %.3f ms  (%d calls)\n", qp50, qp99, len(quietLat))
	fmt.Printf("elicit_status under load: p50 %.3f ms  p99 %.3f ms  (%d calls)  p99 x%.1f of quiet (target <= 10)\n", bp50, bp99, len(busyLat), bp99/qp99)
	return nil
}

func waitHealthy(base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server did not answer /healthz within %v", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// initializeOnly opens a session and abandons it: no initialized
// notification, no call, no DELETE.
func initializeOnly(ctx context.Context, hc *http.Client, url string) int {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": protocol, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "soak", "version": "1"},
	}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := hc.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// holdSlow keeps one slow connection open until ctx ends: a request whose
// headers (or, if body, whose body) arrive a byte every two seconds. When
// the server cuts it off it counts that and dials again.
func holdSlow(ctx context.Context, addr string, body bool, cut, dialed *atomic.Int64) {
	var d net.Dialer
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		dialed.Add(1)
		head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
		trickle := head
		if body {
			if _, err := io.WriteString(c, head); err != nil {
				c.Close()
				continue
			}
			trickle = strings.Repeat("x", 100000)
		}
		closed := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, c); close(closed) }()
		t := time.NewTicker(2 * time.Second)
	trickling:
		for i := 0; i < len(trickle); i++ {
			select {
			case <-ctx.Done():
				break trickling
			case <-closed:
				cut.Add(1)
				break trickling
			case <-t.C:
				if _, err := c.Write([]byte{trickle[i]}); err != nil {
					cut.Add(1)
					break trickling
				}
			}
		}
		t.Stop()
		c.Close()
	}
}

// rss is a process's resident memory in bytes, from /proc.
func rss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
