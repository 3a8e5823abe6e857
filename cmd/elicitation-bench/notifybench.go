package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/notify/notifybench"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
)

// notifyBench measures the isolation of notification targets (issue 22.1)
// on a real local server: the latency from creation to arrival of notices
// to a healthy webhook while thousands of notices are queued to a webhook
// that accepts and never answers, and elicit_status p99 beside a quiet
// run in the same run.
//
//	go run ./cmd/elicitation-bench notify -queued 2000 -healthy 200
func notifyBench(args []string) error {
	fs := flag.NewFlagSet("elicitation-bench notify", flag.ExitOnError)
	queued := fs.Int("queued", 2000, "notices queued to the hanging webhook first")
	healthy := fs.Int("healthy", 200, "notices to the healthy webhook, measured")
	every := fs.Duration("every", 50*time.Millisecond, "pause between two healthy notices")
	calls := fs.Int("status-calls", 2000, "elicit_status calls measured quiet, and again under the queue")
	_ = fs.Parse(args)

	const secret = "bench-webhook-secret-0123456789"
	hooks, err := notifybench.Start(secret)
	if err != nil {
		return err
	}
	defer hooks.Close()

	url, stop, err := serveWithTargets(hooks.StuckURL, hooks.HealthyURL, secret)
	if err != nil {
		return err
	}
	defer stop()
	agent, err := newSession(url)
	if err != nil {
		return err
	}
	defer agent.close()
	id, err := createTo(agent, "")
	if err != nil {
		return err
	}
	status := &target{tool: mcptools.ToolStatus, args: map[string]any{"elicitationId": id}}
	if _, err := load(status, []*session{agent}, 300); err != nil { // warm-up
		return err
	}
	queuer, err := newSession(url)
	if err != nil {
		return err
	}
	defer queuer.close()
	ph := phase{agent: agent, creator: queuer, status: status, hooks: hooks, healthy: *healthy, every: *every, calls: *calls}
	quietNotice, quietStatus, err := ph.run()
	if err != nil {
		return fmt.Errorf("quiet run: %w", err)
	}
	t0 := time.Now()
	for range *queued {
		if _, err := createTo(queuer, "stuck"); err != nil {
			return err
		}
	}
	fmt.Printf("queued %d notices to the hanging webhook in %.1f s\n", *queued, time.Since(t0).Seconds())
	stuckNotice, stuckStatus, err := ph.run()
	if err != nil {
		return fmt.Errorf("with the queue: %w", err)
	}
	fmt.Printf("healthy notice, creation to arrival (%d each): quiet p50 %.1f ms p99 %.1f ms; with %d queued to a hanging webhook p50 %.1f ms p99 %.1f ms max %.1f ms\n",
		len(stuckNotice), percentile.Of(quietNotice, 50), percentile.Of(quietNotice, 99), *queued, percentile.Of(stuckNotice, 50), percentile.Of(stuckNotice, 99), percentile.Of(stuckNotice, 100))
	fmt.Printf("elicit_status (%d / %d calls): quiet p50 %.2f ms p99 %.2f ms; with the queue p50 %.2f ms p99 %.2f ms (p99 x%.2f)\n",
		len(quietStatus), len(stuckStatus), percentile.Of(quietStatus, 50), percentile.Of(quietStatus, 99), percentile.Of(stuckStatus, 50), percentile.Of(stuckStatus, 99), percentile.Of(stuckStatus, 99)/percentile.Of(quietStatus, 99))
	return nil
}

// phase is one measured run: healthy notices created one every `every`
// while elicit_status is called on another session, until every notice
// has arrived and at least `calls` status calls were made.
type phase struct {
	agent, creator *session
	status         *target
	hooks          *notifybench.Hooks
	healthy        int
	every          time.Duration
	calls          int
}

func (p phase) run() (notices, status []float64, err error) {
	var loadErr error
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for len(status) < p.calls || !closed(done) {
			l, err := load(p.status, []*session{p.agent}, 100)
			if err != nil {
				loadErr = err
				return
			}
			status = append(status, l...)
		}
	})
	defer func() {
		close(done)
		wg.Wait()
		if err == nil {
			err = loadErr
		}
	}()
	var creating sync.WaitGroup
	var createErr error
	creating.Go(func() {
		for range p.healthy {
			start := time.Now()
			hid, err := createTo(p.creator, "healthy")
			if err != nil {
				createErr = err
				return
			}
			p.hooks.Expect(hid, start)
			time.Sleep(p.every)
		}
	})
	if notices, err = p.hooks.Collect(p.healthy, 2*time.Minute); err != nil {
		return nil, nil, err
	}
	creating.Wait()
	return notices, status, createErr
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// createTo creates an approval that notifies target ("" none) and returns
// its id.
func createTo(s *session, target string) (string, error) {
	args := map[string]any{"message": "benchmark", "context": map[string]any{"n": 1}, "timeoutSeconds": 3600}
	if target != "" {
		args["notify"] = []string{target}
	}
	res, err := s.callTool(mcptools.ToolApproval, args)
	if err != nil {
		return "", err
	}
	var r struct {
		StructuredContent struct {
			ElicitationID string `json:"elicitationId"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.StructuredContent.ElicitationID == "" {
		return "", fmt.Errorf("no elicitationId in %s", res)
	}
	return r.StructuredContent.ElicitationID, nil
}

// serveWithTargets builds and starts the local server with the two webhook
// targets, stuck and healthy, and returns its MCP URL.
func serveWithTargets(stuckURL, goodURL, secret string) (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "elicitation-notify-bench-")
	if err != nil {
		return "", nil, err
	}
	cfg := fmt.Sprintf(`{"targets":{"stuck":{"type":"webhook","url":%q,"secret":%q},"healthy":{"type":"webhook","url":%q,"secret":%q}}}`, stuckURL, secret, goodURL, secret)
	cfgPath := filepath.Join(dir, "notify.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	addr, _, stopServer, err := startServer(dir, "", "--max-pending-per-principal", "0", "--notify-config", cfgPath)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return "http://" + addr + "/mcp", func() { stopServer(); os.RemoveAll(dir) }, nil
}
