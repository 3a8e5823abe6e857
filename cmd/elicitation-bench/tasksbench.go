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
	"flag"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
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
	addr, pid, stop, err := startServer(dir, "", "--max-pending-per-principal", "0")
	if err != nil {
		return err
	}
	defer stop()
	h := newTaskHost("http://" + addr + "/mcp")
	if err := taskLatencies(h, *calls); err != nil {
		return err
	}
	return waitingTasks(h, pid, *n, *workers, *sweepers)
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

// waitingTasks creates n tasks, holds them while sweepers poll them, and
// decides each on the review page, reporting memory and how soon each
// decision is seen.
func waitingTasks(h *taskHost, pid, n, workers, sweepers int) error {
	rss0, _ := rss(pid)
	stopRSS := peakRSS(pid, 100*time.Millisecond)
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
// POST per request), and on a 2025-11-25 session (core).
type taskHost struct {
	*session

	once sync.Once
	core *session
	err  error
}

// newTaskHost is a 2026-07-28 host of the MCP endpoint url.
func newTaskHost(url string) *taskHost {
	return &taskHost{session: &session{url: url, protocol: "2026-07-28", hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}}
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
	if err := h.call("tools/call", "elicit_approval", map[string]any{"name": "elicit_approval", "arguments": benchArgs, "_meta": meta}, &res); err != nil {
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
	err := h.call("tasks/get", id, map[string]any{"taskId": id, "_meta": benchMeta}, &res)
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
		h.once.Do(func() { h.core, h.err = openSession(h.hc, h.url, "2025-11-25") })
		if h.err != nil {
			return h.err
		}
		var res struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		body := map[string]any{"name": "elicit_approval", "arguments": benchArgs, "task": map[string]any{"ttl": 600000}}
		if err := h.core.call("tools/call", "elicit_approval", body, &res); err != nil {
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
	res, err := h.hc.Get(link)
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
	c := *h.hc
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
