package main

// The Tasks bench (docs/benchmarks.md, issue #23): the real local server
// ("elicitation serve", built from this checkout, embedded store) on
// loopback. It measures, in one run:
//
//   - the p50 of a task-augmented elicit_approval (2026-07-28 extension, one
//     POST each, one client, sequential) beside the plain call, and of the
//     2025-11-25 flavour (params.task) on a session;
//   - the server's RSS holding -tasks waiting tasks (created through the
//     task-augmented call, then polled with tasks/get by hosts sweeping
//     them), and how soon each is seen completed after its decision on the
//     review page: the decider's own tasks/get right after the decision,
//     and the sweepers' first poll that sees it;
//   - the invocations a host's polling costs (one tasks/get per poll),
//     which docs/benchmarks.md prices for AWS.
//
//	go run ./cmd/elicitation-bench tasks                 # 10,000 waiting tasks
//	go run ./cmd/elicitation-bench tasks -tasks 1000     # a quicker look

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

func tasksBench(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench tasks", flag.ExitOnError)
	n := fs.Int("tasks", 10000, "waiting tasks to create and hold")
	calls := fs.Int("latency-calls", 2000, "sequential calls per latency measurement")
	workers := fs.Int("workers", 8, "concurrent creators and deciders")
	sweepers := fs.Int("sweepers", 2, "hosts polling every waiting task with tasks/get, round robin")
	_ = fs.Parse(args)

	dir, err := os.MkdirTemp("", "elicitation-tasks-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	base, pid, stop, err := startLocalServer(dir)
	if err != nil {
		return err
	}
	defer stop()
	h := &taskHost{url: base + "/mcp", client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if err := taskLatencies(h, *calls); err != nil {
		return err
	}
	return waitingTasks(h, pid, *n, *workers, *sweepers)
}

// startLocalServer builds ./cmd/elicitation and runs "elicitation serve"
// on a free loopback port with its data in dir.
func startLocalServer(dir string) (base string, pid int, stop func(), err error) {
	bin := filepath.Join(dir, "elicitation")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/elicitation").CombinedOutput(); err != nil {
		return "", 0, nil, fmt.Errorf("build ./cmd/elicitation (run this from the repository root): %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", dir, "--log-level", "error", "--cleanup-interval", "0", "--max-pending-per-principal", "0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop = func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	base = "http://" + addr
	if err := waitHealthy(base, 10*time.Second); err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return base, cmd.Process.Pid, stop, nil
}

// taskLatencies measures sequential calls from one client.
func taskLatencies(h *taskHost, calls int) error {
	fmt.Printf("# latency: %d sequential calls each, 1 client, after %d warm-up calls\n", calls, calls/4)
	for _, m := range []struct {
		name string
		call func() error
	}{
		{"elicit_approval, plain (2026-07-28)", func() error { _, err := h.create(false); return err }},
		{"elicit_approval as a task (2026-07-28)", func() error { _, err := h.create(true); return err }},
		{"tasks/get of a waiting task (2026-07-28)", h.getOne()},
		{"elicit_approval as a task (2025-11-25, session)", h.coreCreate()},
	} {
		for range calls / 4 {
			if err := m.call(); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		lat := make([]float64, 0, calls)
		for range calls {
			t0 := time.Now()
			if err := m.call(); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		}
		fmt.Printf("%-50s p50 %6.3f ms   p99 %6.3f ms\n", m.name, percentile.Of(lat, 50), percentile.Of(lat, 99))
	}
	return nil
}

// peakRSS samples a process's RSS until stop is called, which returns the
// peak.
func peakRSS(pid int) (stop func() int64) {
	var peak atomic.Int64
	r0, _ := rss(pid)
	peak.Store(r0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r, err := rss(pid); err == nil && r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	})
	return func() int64 { close(done); wg.Wait(); return peak.Load() }
}

// waitingTasks creates n tasks, holds them while sweepers poll them, and
// decides each on the review page, reporting memory and how soon each
// decision is seen.
func waitingTasks(h *taskHost, pid, n, workers, sweepers int) error {
	rss0, _ := rss(pid)
	stopRSS := peakRSS(pid)
	tasks := make([]benchTask, n)
	t0 := time.Now()
	if err := parallel(workers, n, func(i int) error {
		var err error
		tasks[i], err = h.create(true)
		return err
	}); err != nil {
		return err
	}
	created := time.Since(t0)
	rssHeld, _ := rss(pid)
	fmt.Printf("\n# %d waiting tasks: created in %v (%d creators)\n", n, created.Round(time.Millisecond), workers)
	fmt.Printf("RSS before %.1f MB, holding %d waiting tasks %.1f MB\n", mb(rss0), n, mb(rssHeld))

	decidedAt := make([]atomic.Int64, n) // unix ns of the decision, 0: not yet
	seenAt := make([]atomic.Int64, n)
	polls, stopSweep := sweep(h, tasks, sweepers, decidedAt, seenAt)
	t0 = time.Now()
	err := parallel(workers, n, func(i int) error {
		if err := h.decide(tasks[i].link); err != nil {
			return err
		}
		decidedAt[i].Store(time.Now().UnixNano())
		st, err := h.status(tasks[i].id)
		if err != nil {
			return err
		}
		if st != "completed" {
			return fmt.Errorf("task %s: %s right after its decision", tasks[i].id, st)
		}
		seenAt[i].CompareAndSwap(0, time.Now().UnixNano())
		return nil
	})
	decided := time.Since(t0)
	stopSweep()
	peak := stopRSS()
	if err != nil {
		return err
	}
	lag := make([]float64, n)
	for i := range lag {
		lag[i] = float64(seenAt[i].Load()-decidedAt[i].Load()) / 1e6
	}
	fmt.Printf("decided %d on the review page in %v; every task read completed by the first tasks/get after its decision\n", n, decided.Round(time.Millisecond))
	fmt.Printf("decision -> completed seen: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", percentile.Of(lag, 50), percentile.Of(lag, 99), percentile.Of(lag, 100))
	fmt.Printf("RSS peak %.1f MB; %d tasks/get polls by %d sweepers meanwhile\n", mb(peak), polls.Load(), sweepers)
	return nil
}

// sweep starts hosts that poll every task not yet seen completed, round
// robin, marking when each first sees a decided task completed.
func sweep(h *taskHost, tasks []benchTask, sweepers int, decidedAt, seenAt []atomic.Int64) (*atomic.Int64, func()) {
	var polls atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	n := len(tasks)
	for w := range sweepers {
		wg.Go(func() {
			for i := w; ; i = (i + sweepers) % n {
				select {
				case <-done:
					return
				default:
				}
				if seenAt[i].Load() != 0 {
					continue
				}
				st, err := h.status(tasks[i].id)
				polls.Add(1)
				if err == nil && st == "completed" && decidedAt[i].Load() != 0 {
					seenAt[i].CompareAndSwap(0, time.Now().UnixNano())
				}
			}
		})
	}
	return &polls, func() { close(done); wg.Wait() }
}

// parallel runs f(0..n-1) on w workers and returns the first error.
func parallel(w, n int, f func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// taskHost speaks raw JSON-RPC over HTTP, as a 2026-07-28 host does (one
// POST per request), and on a 2025-11-25 session.
type taskHost struct {
	url    string
	client *http.Client
	seq    atomic.Int64

	once    sync.Once
	session string
	err     error
}

type benchTask struct{ id, link string }

var benchMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-bench", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
}

var plainMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-bench", "version": "1"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

var benchLink = regexp.MustCompile(`https?://\S+?/review/[A-Za-z0-9_-]+/[A-Za-z0-9_-]+`)

// post sends one JSON-RPC request and decodes its result.
func (h *taskHost) post(method, name, version, session string, params map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": h.seq.Add(1), "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, h.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if version >= "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		return err
	}
	if method == "initialize" {
		h.session = res.Header.Get("Mcp-Session-Id")
	}
	if out == nil {
		return nil
	}
	if !json.Valid(b) {
		b = sseData(b)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil {
		return fmt.Errorf("%s: HTTP %d %q", method, res.StatusCode, b)
	}
	if msg.Error != nil {
		return fmt.Errorf("%s: %d %s", method, msg.Error.Code, msg.Error.Message)
	}
	return json.Unmarshal(msg.Result, out)
}

// sseData is the last data line of an event stream.
func sseData(b []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(d)) > 0 {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

var benchArgs = map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}}

func (h *taskHost) create(asTask bool) (benchTask, error) {
	meta := plainMeta
	if asTask {
		meta = benchMeta
	}
	var res struct {
		ResultType string         `json:"resultType"`
		TaskID     string         `json:"taskId"`
		Meta       map[string]any `json:"_meta"`
	}
	if err := h.post("tools/call", "elicit_approval", "2026-07-28", "", map[string]any{"name": "elicit_approval", "arguments": benchArgs, "_meta": meta}, &res); err != nil {
		return benchTask{}, err
	}
	if !asTask {
		return benchTask{}, nil
	}
	msg, _ := res.Meta["io.modelcontextprotocol/model-immediate-response"].(string)
	link := benchLink.FindString(msg)
	if res.ResultType != "task" || res.TaskID == "" || link == "" {
		return benchTask{}, fmt.Errorf("not a task: %+v", res)
	}
	return benchTask{id: res.TaskID, link: link}, nil
}

func (h *taskHost) status(id string) (string, error) {
	var res struct {
		Status string `json:"status"`
	}
	err := h.post("tasks/get", id, "2026-07-28", "", map[string]any{"taskId": id, "_meta": benchMeta}, &res)
	return res.Status, err
}

func (h *taskHost) getOne() func() error {
	var t benchTask
	return func() error {
		if t.id == "" {
			var err error
			if t, err = h.create(true); err != nil {
				return err
			}
		}
		st, err := h.status(t.id)
		if err == nil && st != "working" {
			err = fmt.Errorf("status %s", st)
		}
		return err
	}
}

// coreCreate starts 2025-11-25 tasks on one session.
func (h *taskHost) coreCreate() func() error {
	return func() error {
		h.once.Do(func() {
			var init map[string]any
			h.err = h.post("initialize", "", "", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "tasks-bench", "version": "1"}}, &init)
			if h.err == nil {
				h.err = h.post("notifications/initialized", "", "2025-11-25", h.session, map[string]any{}, nil)
			}
		})
		if h.err != nil {
			return h.err
		}
		var res struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		body := map[string]any{"name": "elicit_approval", "arguments": benchArgs, "task": map[string]any{"ttl": 600000}}
		if err := h.post("tools/call", "", "2025-11-25", h.session, body, &res); err != nil {
			return err
		}
		if res.Task.TaskID == "" {
			return fmt.Errorf("no task")
		}
		return nil
	}
}

var benchToken = regexp.MustCompile(`name="token" value="([^"]+)"`)

// decide approves on the review page as a browser would.
func (h *taskHost) decide(link string) error {
	res, err := h.client.Get(link)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := benchToken.FindSubmatch(body)
	if m == nil {
		return fmt.Errorf("review page %d: no token", res.StatusCode)
	}
	form := url.Values{"token": {html.UnescapeString(string(m[1]))}, "decision": {"submitted"}}
	req, _ := http.NewRequest(http.MethodPost, link, bytes.NewBufferString(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c := *h.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err = c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("submit: %d", res.StatusCode)
	}
	return nil
}
