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
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// soakOptions are the soak's flags.
type soakOptions struct {
	sessions, slow, rate, quiet int
	serverFlags                 string
	hold, limit                 time.Duration
}

func soak(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench soak", flag.ExitOnError)
	var o soakOptions
	fs.IntVar(&o.sessions, "sessions", 20000, "abandoned MCP sessions to open (an initialize each)")
	fs.IntVar(&o.slow, "slow", 1000, "slow connections to hold open during the flood (half trickle headers, half bodies)")
	fs.IntVar(&o.rate, "rate", 1000, "initializes per second")
	fs.IntVar(&o.quiet, "quiet-calls", 2000, "elicit_status calls measured before the flood")
	fs.StringVar(&o.serverFlags, "server-flags", "", "extra flags for elicitation serve, space-separated")
	fs.DurationVar(&o.hold, "hold", 40*time.Second, "keep the slow connections and the agent going at least this long from the flood's start (past the server's 10 s header and 30 s body timeouts)")
	fs.DurationVar(&o.limit, "max-duration", 3*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	if o.slow > 0 {
		fmt.Fprintln(os.Stderr, "(each slow connection is one file descriptor here and one in the server: ulimit -n must exceed", o.slow+200, ")")
	}

	dir, err := os.MkdirTemp("", "elicitation-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, pid, stop, err := startServer(dir, "", strings.Fields(o.serverFlags)...)
	if err != nil {
		return err
	}
	defer stop()
	url := "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), o.limit)
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
	quietLat, err := load(status, []*session{agent}, o.quiet)
	if err != nil {
		return err
	}
	rssBefore, _ := rss(pid)
	mem := peakRSS(pid, 200*time.Millisecond)

	// Slow connections, held until the flood is over.
	slowCtx, stopSlow := context.WithCancel(ctx)
	var slowWG sync.WaitGroup
	var cut, dialed atomic.Int64
	for i := range o.slow {
		slowWG.Go(func() { holdSlow(slowCtx, addr, i%2 == 0, &cut, &dialed) })
	}

	// The agent keeps calling elicit_status during the flood.
	floodDone := make(chan struct{})
	busy := callDuring(status, agent, floodDone)

	start := time.Now()
	f := flood(ctx, url, o.sessions, o.rate)
	select {
	case <-time.After(time.Until(start.Add(o.hold))):
	case <-ctx.Done():
	}
	close(floodDone)
	busyLat, busyErr := busy()
	stopSlow()
	slowWG.Wait()
	peak := mem()
	rssAfter, _ := rss(pid)
	if busyErr != nil {
		return fmt.Errorf("the agent's elicit_status failed during the flood: %w", busyErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("gave up after %v", o.limit)
	}
	if len(busyLat) == 0 {
		return errors.New("no elicit_status call during the flood")
	}

	flags := "defaults"
	if o.serverFlags != "" {
		flags = o.serverFlags
	}
	fmt.Printf("# soak on loopback: elicitation serve (%s), %d abandoned sessions at %d/s over %.1f s, %d slow connections held %v\n", flags, o.sessions, o.rate, f.took.Seconds(), o.slow, max(o.hold, f.took).Round(time.Second))
	fmt.Printf("initialize: %d accepted, %d refused (503), %d other\n", f.accepted, f.refused, f.other)
	fmt.Printf("slow connections: %d dialed, %d cut off by the server\n", dialed.Load(), cut.Load())
	fmt.Printf("server RSS: before %.0f MB, peak %.0f MB, after %.0f MB\n", mb(rssBefore), mb(peak), mb(rssAfter))
	qp50, qp99 := percentile.Of(quietLat, 50), percentile.Of(quietLat, 99)
	bp50, bp99 := percentile.Of(busyLat, 50), percentile.Of(busyLat, 99)
	fmt.Printf("elicit_status quiet:      p50 %.3f ms  p99 %.3f ms  (%d calls)\n", qp50, qp99, len(quietLat))
	fmt.Printf("elicit_status under load: p50 %.3f ms  p99 %.3f ms  (%d calls)  p99 x%.1f of quiet (target <= 10)\n", bp50, bp99, len(busyLat), bp99/qp99)
	return nil
}

// startServer builds ./cmd/elicitation into dir and starts "elicitation
// serve" on a free loopback port with its data in dir and flags, once it
// answers /healthz; its standard error goes to the file logPath (appended)
// if given. It returns the server's address, its process id and what stops
// it.
func startServer(dir, logPath string, flags ...string) (addr string, pid int, stop func(), err error) {
	bin := filepath.Join(dir, "elicitation")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/elicitation").CombinedOutput(); err != nil {
		return "", 0, nil, fmt.Errorf("build ./cmd/elicitation (run this from the repository root): %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, nil, err
	}
	addr = ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr, "--data-dir", dir, "--log-level", "error", "--cleanup-interval", "0"}, flags...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return "", 0, nil, err
		}
		defer f.Close() // the child has its own descriptor
		cmd.Stderr = f
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	if err := waitHealthy("http://"+addr, 10*time.Second); err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return addr, cmd.Process.Pid, stop, nil
}

// peakRSS samples pid's resident set every interval from now on; the
// function it returns stops the sampling and gives the peak (at least the
// RSS when it started).
func peakRSS(pid int, every time.Duration) func() int64 {
	var peak atomic.Int64
	r0, _ := rss(pid)
	peak.Store(r0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if r, err := rss(pid); err == nil && r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	})
	return func() int64 {
		close(stop)
		wg.Wait()
		return peak.Load()
	}
}

// callDuring calls status on the agent's session, 20 calls at a time,
// until done is closed; the function it returns waits for the last batch
// and gives the latencies and the first error.
func callDuring(status *target, agent *session, done <-chan struct{}) func() ([]float64, error) {
	var lat []float64
	var err error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			default:
			}
			l, lerr := load(status, []*session{agent}, 20)
			lat = append(lat, l...)
			if lerr != nil {
				err = lerr
				return
			}
		}
	}()
	return func() ([]float64, error) {
		<-finished
		return lat, err
	}
}

// floodResult counts the flood's initializes by answer.
type floodResult struct {
	accepted, refused, other int64
	took                     time.Duration
}

// flood opens n sessions at rate per second, 16 at a time: initialize, read
// the answer, never come back.
func flood(ctx context.Context, url string, n, rate int) floodResult {
	start := time.Now()
	var accepted, refused, other atomic.Int64
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	tick := time.NewTicker(time.Second / time.Duration(max(rate, 1)))
	defer tick.Stop()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		<-tick.C
		sem <- struct{}{}
		wg.Go(func() {
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
	wg.Wait()
	return floodResult{accepted: accepted.Load(), refused: refused.Load(), other: other.Load(), took: time.Since(start)}
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
