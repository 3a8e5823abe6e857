package main

// The waiters run (docs/benchmarks.md, issue #24.1): how much one server
// process holds for many elicit_await calls waiting at once, and how soon
// each returns once its request is decided. In one run, for each era
// (2026-07-28, one POST a call; 2025-11-25, a session a waiter):
//
//   - ours: the real local server ("elicitation serve", built from this
//     checkout, embedded store, the await caps and the session caps off,
//     --max-wait long enough to hold them all), with -waiters pending
//     requests each awaited by one call, then decided on the review page;
//   - the bare go-sdk anchor ("elicitation-bench serve -bare -block"), a
//     tool that blocks until POST /release?key= releases it;
//   - plain net/http ("elicitation-bench serve -plain"), a POST that
//     blocks the same way (once, for the first era: it has no eras).
//
// The waiting calls come from this process over raw TCP connections (one
// goroutine and a 512-byte reader each), so that the load generator stays
// cheap; the server's resident set is read from /proc at the plateau
// (every call sent and the RSS steady) and at its peak while they are
// released. Wake latency: from the decision's (or release's) response to
// the waiting call's response read whole.
//
//	ulimit -n 65536 (or the hard limit); go run ./cmd/elicitation-bench waiters
//	go run ./cmd/elicitation-bench waiters -waiters 2000 -eras 2026-07-28   # a quicker look

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

func waitersBench(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench waiters", flag.ExitOnError)
	n := fs.Int("waiters", 10000, "elicit_await calls (or anchor calls) waiting at once")
	eras := fs.String("eras", "2026-07-28,2025-11-25", "protocol eras to run, comma-separated")
	workers := fs.Int("workers", 16, "concurrent creators, openers and deciders")
	targets := fs.String("targets", "ours,bare,plain", "targets to run, comma-separated")
	fs.DurationVar(&waitersSettle, "settle", 0, "after the plateau, hold the calls this much longer and report the RSS then (settled); the runtime's periodic GC runs every 2 minutes")
	fs.IntVar(&waitersRate, "rate", 0, "open at most this many waiting calls a second (0: as fast as the workers dial, a burst)")
	fs.StringVar(&waitersServerLog, "server-log", "", "append our server's standard error here (with GODEBUG=gctrace=1 in the environment: its GC trace)")
	_ = fs.Parse(args)
	if err := raiseFileLimit(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "elicitation-waiters-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	want := strings.Split(*targets, ",")
	pace := "as fast as they dial (a burst)"
	if waitersRate > 0 {
		pace = fmt.Sprintf("at %d a second", waitersRate)
	}
	fmt.Printf("# %d waiting calls per target, opened %s, %d workers; RSS of the server process\n", *n, pace, *workers)
	fmt.Printf("%-44s %9s %11s %11s %9s %9s %9s %9s\n", "era / target", "idle MB", "plateau MB", "settled MB", "peak MB", "p50 ms", "p99 ms", "max ms")
	for i, era := range strings.Split(*eras, ",") {
		for _, name := range want {
			if name == "plain" && i > 0 {
				continue
			}
			t, err := startWaiterTarget(name, era, dir)
			if err != nil {
				return err
			}
			r, err := holdAndRelease(t, *n, *workers)
			t.stop()
			if err != nil {
				return fmt.Errorf("%s %s: %w", era, name, err)
			}
			label := era + " / " + t.name
			if name == "plain" {
				label = "any era / " + t.name
			}
			fmt.Printf("%-44s %9.1f %11.1f %11.1f %9.1f %9.3f %9.3f %9.3f\n", label, mb(r.idle), mb(r.plateau), mb(r.settled), mb(r.peak), r.p50, r.p99, r.max)
		}
	}
	return nil
}

// raiseFileLimit lifts this process's open-file limit to its hard limit
// (the servers it starts inherit it): each waiting call is a connection on
// both sides.
func raiseFileLimit() error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	l.Cur = l.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}

// waiterTarget is one server under the waiters run.
type waiterTarget struct {
	name string
	addr string // host:port
	pid  int
	stop func()
	// prepare readies waiter i (a pending request, a session) and returns
	// the bytes of its waiting HTTP request.
	prepare func(i int) ([]byte, error)
	// release decides (or releases) waiter i's call.
	release func(i int) error
	// check reads the waiting call's response body.
	check func(body []byte) error
}

func startWaiterTarget(name, era, dir string) (*waiterTarget, error) {
	switch name {
	case "ours":
		return startOursWaiting(era, dir)
	case "bare", "plain":
		return startAnchorWaiting(name, era)
	}
	return nil, fmt.Errorf("unknown target %q (ours, bare, plain)", name)
}

var (
	waitersServerLog string
	waitersRate      int
	waitersSettle    time.Duration
)

var waitersFlags = "--max-pending-per-principal 0 --max-waits 0 --max-waits-per-principal 0 --mcp-max-sessions 0 --mcp-sessions-per-principal 1000000 --max-wait 10m"

func startOursWaiting(era, dir string) (*waiterTarget, error) {
	sub, err := os.MkdirTemp(dir, "ours-")
	if err != nil {
		return nil, err
	}
	addr, pid, stop, err := startServer(sub, waitersServerLog, strings.Fields(waitersFlags)...)
	if err != nil {
		return nil, err
	}
	url := "http://" + addr + "/mcp"
	h := newTaskHost(url)
	var mu sync.Mutex
	links := map[int]string{}
	t := &waiterTarget{
		name: "ours (elicitation serve)", addr: addr, pid: pid, stop: stop}
	t.prepare = func(i int) ([]byte, error) {
		var res struct {
			StructuredContent struct {
				ElicitationID string `json:"elicitationId"`
				ReviewURL     string `json:"reviewUrl"`
			} `json:"structuredContent"`
		}
		if err := h.call("tools/call", "elicit_approval", map[string]any{"name": "elicit_approval", "arguments": benchArgs, "_meta": plainMeta}, &res); err != nil {
			return nil, err
		}
		mu.Lock()
		links[i] = res.StructuredContent.ReviewURL
		mu.Unlock()
		return waitingCall(h, era, i, "elicit_await", map[string]any{"elicitationId": res.StructuredContent.ElicitationID})
	}
	t.release = func(i int) error {
		mu.Lock()
		link := links[i]
		mu.Unlock()
		return h.decide(link)
	}
	t.check = func(body []byte) error {
		var msg struct {
			Result struct {
				StructuredContent struct {
					Status string `json:"status"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &msg); err != nil || msg.Result.StructuredContent.Status != "submitted" {
			return fmt.Errorf("elicit_await answered %q", body)
		}
		return nil
	}
	return t, nil
}

func startAnchorWaiting(name, era string) (*waiterTarget, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "-plain"}
	label := "plain net/http"
	if name == "bare" {
		args, label = []string{"serve", "-bare", "-block"}, "go-sdk bare (blocking tool)"
		if era >= "2026-07-28" {
			args = append(args, "-stateless")
		}
	}
	cmd, url, stop, err := startChild(exe, args, "the "+name+" anchor")
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(url, "/mcp")
	h := newTaskHost(url)
	t := &waiterTarget{name: label, addr: strings.TrimPrefix(base, "http://"), pid: cmd.Process.Pid, stop: stop}
	t.release = func(i int) error {
		res, err := h.hc.Post(base+"/release?key="+strconv.Itoa(i), "text/plain", nil)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		return res.Body.Close()
	}
	answer := `"text":"released"`
	t.prepare = func(i int) ([]byte, error) {
		return waitingCall(h, era, i, "wait", map[string]any{"key": strconv.Itoa(i)})
	}
	if name == "plain" {
		answer = `"released":true`
		t.prepare = func(i int) ([]byte, error) {
			return rawRequest(t.addr, "/mcp?key="+strconv.Itoa(i), nil, []byte(`{}`)), nil
		}
	}
	t.check = func(body []byte) error {
		if !bytes.Contains(body, []byte(answer)) {
			return fmt.Errorf("answered %q", body)
		}
		return nil
	}
	return t, nil
}

// waitingCall is the raw HTTP request of waiter i's tools/call of tool:
// one POST on 2026-07-28; on a session era, a session of its own first.
func waitingCall(h *taskHost, era string, i int, tool string, args map[string]any) ([]byte, error) {
	params := map[string]any{"name": tool, "arguments": args}
	hdr := map[string]string{"Mcp-Protocol-Version": era}
	if era >= "2026-07-28" {
		params["_meta"] = plainMeta
		hdr["Mcp-Method"], hdr["Mcp-Name"] = "tools/call", tool
	} else {
		s, err := openSession(h.hc, h.url, era)
		if err != nil {
			return nil, err
		}
		if s.id == "" {
			return nil, fmt.Errorf("initialize at %s: no session id", era)
		}
		hdr["Mcp-Session-Id"] = s.id
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params})
	return rawRequest(strings.TrimPrefix(strings.TrimSuffix(h.url, "/mcp"), "http://"), "/mcp", hdr, body), nil
}

func rawRequest(addr, path string, hdr map[string]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", path, addr, len(body))
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

type waitersResult struct {
	idle, plateau, peak int64
	settled             int64 // after -settle more (the plateau without it)
	p50, p99, max       float64
}

// holdAndRelease prepares n waiters, sends every waiting call, reads the
// RSS once it is steady, then releases them all and measures the wakes.
func holdAndRelease(t *waiterTarget, n, workers int) (waitersResult, error) {
	var r waitersResult
	reqs := make([][]byte, n)
	if err := parallel(workers, n, func(i int) (err error) {
		reqs[i], err = t.prepare(i)
		return err
	}); err != nil {
		return r, fmt.Errorf("prepare: %w", err)
	}
	r.idle, _ = rss(t.pid)
	stopPeak := peakRSS(t.pid, 100*time.Millisecond)
	releasedAt := make([]atomic.Int64, n)
	returnedAt := make([]atomic.Int64, n)
	var returned, early atomic.Int64
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := time.Now()
	if err := parallel(workers, n, func(i int) error {
		if waitersRate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(waitersRate))))
		}
		c, err := net.Dial("tcp", t.addr)
		if err != nil {
			return err
		}
		if _, err := c.Write(reqs[i]); err != nil {
			c.Close()
			return err
		}
		reqs[i] = nil
		wg.Go(func() {
			defer c.Close()
			body, err := readResponse(c)
			returnedAt[i].Store(time.Now().UnixNano())
			returned.Add(1)
			if releasedAt[i].Load() == 0 {
				early.Add(1)
			}
			if err == nil {
				err = t.check(body)
			}
			if err != nil {
				errs <- err
			}
		})
		return nil
	}); err != nil {
		return r, fmt.Errorf("open: %w", err)
	}
	r.plateau = steadyRSS(t.pid)
	r.settled = r.plateau
	if waitersSettle > 0 {
		time.Sleep(waitersSettle)
		r.settled, _ = rss(t.pid)
	}
	if e := early.Load(); e > 0 {
		return r, fmt.Errorf("%d calls returned before their release (first: %v)", e, <-errs)
	}
	err := parallel(workers, n, func(i int) error {
		if err := t.release(i); err != nil {
			return err
		}
		releasedAt[i].CompareAndSwap(0, time.Now().UnixNano())
		return nil
	})
	wg.Wait()
	r.peak = stopPeak()
	close(errs)
	if err != nil {
		return r, fmt.Errorf("release: %w", err)
	}
	for e := range errs {
		return r, e
	}
	lat := make([]float64, n)
	for i := range lat {
		lat[i] = max(float64(returnedAt[i].Load()-releasedAt[i].Load())/1e6, 0)
	}
	r.p50, r.p99, r.max = percentile.Of(lat, 50), percentile.Of(lat, 99), percentile.Of(lat, 100)
	return r, nil
}

// readResponse reads one HTTP response and returns its body, or an event
// stream's last data line.
func readResponse(c net.Conn) ([]byte, error) {
	res, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %q", res.StatusCode, body)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		body = sseData(body)
	}
	return body, nil
}

// steadyRSS waits until pid's RSS changes by less than 1% over a second
// (at most 60 s) and returns it.
func steadyRSS(pid int) int64 {
	last, _ := rss(pid)
	for range 60 {
		time.Sleep(time.Second)
		now, err := rss(pid)
		if err != nil {
			return last
		}
		if d := now - last; d < last/100 && -d < last/100 {
			return now
		}
		last = now
	}
	return last
}
