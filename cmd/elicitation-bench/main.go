// Command elicitation-bench measures the MCP endpoint against the Node
// reference server with one load generator (SPEC §7): the p50 latency of
// elicit_status (one client, sequential calls) and the server CPU per call
// (several concurrent clients), beside the `echo` tool of
// @modelcontextprotocol/server-everything, and beside a bare go-sdk server
// with one echo tool (bare.go), in the same run.
//
// Run from the repository root (it starts node_modules/.bin/mcp-server-everything):
//
//	go run ./cmd/elicitation-bench -rounds 3
//
// "go run ./cmd/elicitation-bench soak" is the soak under abuse instead
// (soak.go); "go run ./cmd/elicitation-bench notify" measures notification
// targets' isolation (notifybench.go); "go run ./cmd/elicitation-bench
// tasks" measures MCP Tasks (tasksbench.go); "go run
// ./cmd/elicitation-bench waiters" measures many waiting elicit_await
// calls (waitersbench.go).
//
// Both servers run as child processes (this binary re-executed with
// "serve" for ours), so that the CPU each spends is read from
// /proc/<pid>/stat and the load generator's own CPU counts for neither.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// benches are the subcommands; without one, the comparison of run.
var benches = map[string]func([]string) error{
	"serve": serve, "soak": soak, "tasks": tasksBench, "waiters": waitersBench, "notify": notifyBench,
}

func main() {
	name, bench, args := "elicitation-bench", run, os.Args[1:]
	if len(args) > 0 && benches[args[0]] != nil {
		name, bench, args = name+" "+args[0], benches[args[0]], args[1:]
	}
	if err := bench(args); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// mode is what a bench server serves: ours (stateless or with sessions),
// the bare go-sdk anchor, or the plain net/http one; block adds the
// waiting anchors' release endpoint; resumable gives the bare anchor's
// sessions an event store, as ours have.
type mode struct{ stateless, bare, resumable, block, plain bool }

// benchHandler builds the handler a bench server serves for m, ours on a
// fresh embedded store in a temporary directory, and what closes the
// store and removes the directory.
func benchHandler(m mode) (http.Handler, func(), error) {
	dir, err := os.MkdirTemp("", "elicitation-bench-")
	if err != nil {
		return nil, nil, err
	}
	st, err := boltstore.Open(filepath.Join(dir, "store.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	closeStore := func() { st.Close(); os.RemoveAll(dir) }
	srv := mcptools.New(mcptools.Options{Service: elicitation.NewService(elicitation.Config{Store: st, MaxPending: -1}), Stateless: m.stateless, ReviewURL: func(r *http.Request, id, key string) string { return compose.ReviewURL("", r, id, key) }, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	handler := srv.Handler()
	var gate *releaseGate
	if m.block || m.plain {
		gate = &releaseGate{}
	}
	switch {
	case m.plain:
		handler = plainHandler(gate)
	case m.bare:
		handler = bareHandler(m.stateless, m.resumable, gate)
	}
	if gate != nil {
		mux := http.NewServeMux()
		mux.Handle("/mcp", handler)
		mux.Handle("/release", gate)
		handler = mux
	}
	return handler, closeStore, nil
}

// serve runs our MCP handler on a free loopback port and prints its URL.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	stateless := fs.Bool("stateless", false, "serve statelessly with JSON responses (the Lambda path)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile here until interrupted")
	gogc := fs.Int("gogc", 0, "set the GC percentage (0: leave GOGC as the environment says)")
	bare := fs.Bool("bare", false, "serve the bare go-sdk anchor (one echo tool) instead of ours")
	resumable := fs.Bool("resumable", false, "with -bare: give the sessions an event store (resumable streams, a priming event on each POST's stream), as ours have")
	block := fs.Bool("block", false, "with -bare: add the waiting anchor's tool \"wait\" and POST /release?key= (waitersbench.go)")
	plain := fs.Bool("plain", false, "serve the plain net/http waiting anchor instead of ours (/mcp?key= waits for POST /release?key=)")
	_ = fs.Parse(args)
	if *gogc != 0 {
		debug.SetGCPercent(*gogc)
	}
	handler, closeStore, err := benchHandler(mode{stateless: *stateless, bare: *bare, resumable: *resumable, block: *block, plain: *plain})
	if err != nil {
		return err
	}
	defer closeStore()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return hs.Shutdown(ctx)
}

type target struct {
	name string
	url  string
	pid  int
	tool string
	args map[string]any
	stop func()
}

func run(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench", flag.ExitOnError)
	rounds := fs.Int("rounds", 3, "alternating rounds over the targets")
	latencyCalls := fs.Int("latency-calls", 2000, "sequential calls per latency measurement")
	cpuCalls := fs.Int("cpu-calls", 6000, "calls per CPU measurement")
	clients := fs.Int("clients", 4, "concurrent clients for the CPU measurement")
	warmup := fs.Int("warmup", 1000, "warm-up calls per target per round")
	nodePort := fs.Int("node-port", 0, "port for the Node reference server (0: pick one)")
	profile1 := fs.String("cpuprofile", "", "write a CPU profile of our stateless server here")
	profileDir := fs.String("profile-dir", "", "write a CPU profile of every Go server, every round, here (MODE-rROUND.pprof; compare two with go tool pprof -diff_base)")
	only := fs.String("only", "", "comma-separated substrings: run only the servers whose names contain one (\"stateful\" runs ours and the bare one with sessions)")
	_ = fs.Parse(args)
	// A kind is one server of the run: ours or an anchor in one mode
	// (startOurs) with its GC setting, or the Node reference.
	type kind struct {
		name, mode string
		gogc       int
	}
	kinds := []kind{
		{"go mcptools stateless", "stateless", 0},
		{"go mcptools stateless GOGC=400", "stateless", 400},
		{"go mcptools stateful", "stateful", 0},
		{"go mcptools stateful GOGC=400", "stateful", 400},
		{"go-sdk bare stateless", "bare-stateless", 0},
		{"go-sdk bare stateful", "bare-stateful", 0},
		{"go-sdk bare stateful GOGC=400", "bare-stateful", 400},
		{"go-sdk bare stateful resumable", "bare-stateful-resumable", 0},
		{"node server-everything", "node", 0},
	}
	nodeName := kinds[len(kinds)-1].name
	start := func(k kind, round int) (*target, error) {
		if k.mode == "node" {
			return startNode(*nodePort)
		}
		profile := ""
		switch {
		case *profileDir != "" && k.gogc != 0:
			profile = filepath.Join(*profileDir, fmt.Sprintf("%s-gogc%d-r%d.pprof", k.mode, k.gogc, round))
		case *profileDir != "":
			profile = filepath.Join(*profileDir, fmt.Sprintf("%s-r%d.pprof", k.mode, round))
		case k.name == "go mcptools stateless":
			profile = *profile1
		}
		return startOurs(k.mode, profile, k.gogc)
	}
	if *only != "" {
		kinds = slices.DeleteFunc(kinds, func(k kind) bool {
			for sub := range strings.SplitSeq(*only, ",") {
				if strings.Contains(k.name, sub) {
					return false
				}
			}
			return true
		})
	}
	fmt.Printf("# %d rounds; latency: %d sequential calls, 1 client; CPU: %d calls over %d clients; warm-up %d\n",
		*rounds, *latencyCalls, *cpuCalls, *clients, *warmup)
	fmt.Printf("%-8s %-44s %9s %9s %14s %10s\n", "round", "server/tool", "p50 ms", "p99 ms", "CPU ms/call", "calls/s")
	type agg struct{ p50, cpu []float64 }
	all := map[string]*agg{}
	for r := 1; r <= *rounds; r++ {
		// Every round starts every server afresh (the Node reference keeps
		// every event it ever sent in memory and slows down over a long
		// run), with its own sessions: one for the latency run, -clients
		// for the CPU run.
		for _, k := range kinds {
			t, err := start(k, r)
			if err != nil {
				return err
			}
			t.name = k.name
			p50, p99, cpu, rate, err := measure(t, *clients, *warmup, *latencyCalls, *cpuCalls)
			t.stop()
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			fmt.Printf("%-8d %-44s %9.3f %9.3f %14.3f %10.0f\n", r, t.name+"/"+t.tool, p50, p99, cpu, rate)
			a := all[t.name]
			if a == nil {
				a = &agg{}
				all[t.name] = a
			}
			a.p50, a.cpu = append(a.p50, p50), append(a.cpu, cpu)
		}
	}
	if node := all[nodeName]; node != nil {
		fmt.Printf("\n# medians over rounds, and ratio to %s/echo (target: <= 0.50)\n", nodeName)
		for _, k := range kinds {
			a := all[k.name]
			p50, cpu := median(a.p50), median(a.cpu)
			fmt.Printf("%-44s p50 %.3f ms (x%.2f)   CPU %.3f ms/call (x%.2f)\n", k.name, p50, p50/median(node.p50), cpu, cpu/median(node.cpu))
		}
	}
	fmt.Printf("\n# CPU per call against the bare go-sdk server of the same mode (#24.4 target: <= 1.1)\n")
	for _, pair := range [][2]string{{"go mcptools stateless", "go-sdk bare stateless"}, {"go mcptools stateful", "go-sdk bare stateful"}, {"go mcptools stateful", "go-sdk bare stateful resumable"}, {"go mcptools stateful GOGC=400", "go-sdk bare stateful GOGC=400"}} {
		if all[pair[0]] == nil || all[pair[1]] == nil {
			continue
		}
		ours, bare := median(all[pair[0]].cpu), median(all[pair[1]].cpu)
		fmt.Printf("%-44s CPU %.3f ms/call, %s %.3f (x%.2f)\n", pair[0], ours, strings.TrimPrefix(pair[1], "go-sdk "), bare, ours/bare)
	}
	return nil
}

// measure warms t up, then measures the latency of sequential calls on one
// session and the server CPU per call over several concurrent sessions.
func measure(t *target, clients, warmup, latencyCalls, cpuCalls int) (p50, p99, cpu, rate float64, err error) {
	var sessions []*session
	for range 1 + clients {
		s, err := newSession(t.url)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		defer s.close()
		sessions = append(sessions, s)
	}
	if t.tool == mcptools.ToolStatus {
		id, err := createOne(t.url)
		if err != nil {
			return 0, 0, 0, 0, fmt.Errorf("create: %w", err)
		}
		t.args = map[string]any{"elicitationId": id}
	}
	one, many := sessions[:1], sessions[1:]
	if _, err := load(t, many, warmup); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("warm-up: %w", err)
	}
	lat, err := load(t, one, latencyCalls)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("latency: %w", err)
	}
	c0, err := cpuTicks(t.pid)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	start := time.Now()
	if _, err := load(t, many, cpuCalls); err != nil {
		return 0, 0, 0, 0, fmt.Errorf("cpu: %w", err)
	}
	elapsed := time.Since(start)
	c1, err := cpuTicks(t.pid)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	cpu = float64(c1-c0) * 10 / float64(cpuCalls) // 100 ticks per second
	return percentile.Of(lat, 50), percentile.Of(lat, 99), cpu, float64(cpuCalls) / elapsed.Seconds(), nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func startOurs(mode, profile string, gogc int) (*target, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"serve"}
	tool, toolArgs := mcptools.ToolStatus, map[string]any(nil)
	switch mode {
	case "stateless":
		args = append(args, "-stateless")
	case "bare-stateless":
		args = append(args, "-bare", "-stateless")
	case "bare-stateful":
		args = append(args, "-bare")
	case "bare-stateful-resumable":
		args = append(args, "-bare", "-resumable")
	}
	if strings.HasPrefix(mode, "bare-") {
		tool, toolArgs = "echo", map[string]any{"message": "hi"}
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	if gogc != 0 {
		args = append(args, "-gogc", strconv.Itoa(gogc))
	}
	cmd, url, stop, err := startChild(exe, args, "our "+mode+" server")
	if err != nil {
		return nil, err
	}
	return &target{name: "go mcptools " + mode, url: url, pid: cmd.Process.Pid, tool: tool, args: toolArgs, stop: stop}, nil
}

// startChild starts exe with args (stderr passed through) and returns it
// with the URL it prints as its first line of output, and what stops it;
// what names it in an error.
func startChild(exe string, args []string, what string) (cmd *exec.Cmd, url string, stop func(), err error) {
	cmd = exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, "", nil, fmt.Errorf("start %s: %w", what, err)
	}
	return cmd, strings.TrimSpace(line), func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }, nil
}

func startNode(port int) (*target, error) {
	if port == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
	}
	bin := filepath.Join("node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s missing: run npm ci in the repo root and run this from there", bin)
	}
	cmd := exec.Command("node", bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	// Its per-request console logging goes nowhere, as it would to a
	// discarded log in production.
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	t := &target{
		name: "node server-everything", url: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), pid: cmd.Process.Pid,
		tool: "echo", args: map[string]any{"message": "hi"},
		stop: func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() },
	}
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return t, nil
		}
		if i > 100 {
			t.stop()
			return nil, fmt.Errorf("node server did not listen on %d", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// session is one client of the load generator: plain HTTP POSTs of
// JSON-RPC at one protocol era, with a session id where the server gives
// one (2025-11-25), or each request on its own with the era's headers
// (2026-07-28: Mcp-Method, Mcp-Name). The same code drives every server.
type session struct {
	url, id, protocol string
	hc                *http.Client
	next              atomic.Int64
}

const protocol = "2025-11-25"

// newSession opens a session at protocol on a client of its own.
func newSession(url string) (*session, error) {
	return openSession(&http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}, url, protocol)
}

// openSession initializes a session of era through hc.
func openSession(hc *http.Client, url, era string) (*session, error) {
	s := &session{url: url, hc: hc, protocol: era}
	if _, err := s.rpc("initialize", "", map[string]any{
		"protocolVersion": era, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "elicitation-bench", "version": "1"},
	}); err != nil {
		return nil, err
	}
	if err := s.notify("notifications/initialized"); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) post(body []byte, method, name string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		req.Header.Set("Mcp-Protocol-Version", s.protocol)
	}
	if s.protocol >= "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	return s.hc.Do(req)
}

func (s *session) notify(method string) error {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	resp, err := s.post(b, method, "")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %s", method, resp.Status)
	}
	return nil
}

// rpc sends one request (name: the Mcp-Name of a 2026-07-28 request) and
// returns its result, from a JSON body or from an event stream's last data.
func (s *session) rpc(method, name string, params any) (json.RawMessage, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next.Add(1), "method": method, "params": params})
	resp, err := s.post(b, method, name)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, body)
	}
	if method == "initialize" {
		s.id = resp.Header.Get("Mcp-Session-Id")
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body = sseData(body)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", method, err, body)
	}
	if msg.Error != nil {
		return nil, fmt.Errorf("%s: %d %s", method, msg.Error.Code, msg.Error.Message)
	}
	return msg.Result, nil
}

// call is rpc with the result decoded into out.
func (s *session) call(method, name string, params, out any) error {
	res, err := s.rpc(method, name, params)
	if err != nil {
		return err
	}
	return json.Unmarshal(res, out)
}

// sseData is the last data line of an event stream (a resumable stream
// starts with an empty priming event).
func sseData(b []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(d)) > 0 {
			last = bytes.TrimSpace(d)
		}
	}
	return last
}

func (s *session) callTool(name string, args any) (json.RawMessage, error) {
	res, err := s.rpc("tools/call", name, map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(res, &r) != nil || r.IsError {
		return nil, fmt.Errorf("%s: tool error: %s", name, res)
	}
	return res, nil
}

// createOne creates an approval on a session of its own and returns its id.
func createOne(url string) (string, error) {
	s, err := newSession(url)
	if err != nil {
		return "", err
	}
	return createTo(s, "")
}

// load makes n tool calls over the given sessions, concurrently, and
// returns each call's latency in milliseconds.
func load(t *target, sessions []*session, n int) ([]float64, error) {
	var (
		mu   sync.Mutex
		lat  = make([]float64, 0, n)
		errs []error
		wg   sync.WaitGroup
	)
	per := n / len(sessions)
	for c, s := range sessions {
		count := per
		if c == len(sessions)-1 {
			count = n - per*(len(sessions)-1)
		}
		wg.Go(func() {
			mine := make([]float64, 0, count)
			for range count {
				start := time.Now()
				if _, err := s.callTool(t.tool, t.args); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mine = append(mine, float64(time.Since(start).Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return lat, errors.Join(errs...)
}

// close ends the session (DELETE), so that stateful servers can free it.
func (s *session) close() error {
	if s.id == "" {
		return nil
	}
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", s.protocol)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	s.hc.CloseIdleConnections()
	return nil
}

// cpuTicks reads a process's user+system CPU time in clock ticks (1/100 s).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line.
	rest := string(b[bytes.LastIndexByte(b, ')')+2:])
	f := strings.Fields(rest)
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return u + s, nil
}
