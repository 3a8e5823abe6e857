package mcptools_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// nodeHost is a TypeScript host script running against the world, its
// stdout read as JSON events.
type nodeHost struct {
	t      *testing.T
	events chan map[string]any
	seen   []map[string]any
}

func startNode(t *testing.T, script string, args ...string) *nodeHost {
	t.Helper()
	node := testenv.Node(t)
	path := filepath.Join(testenv.Root(t), "internal", "mcptools", "testdata", script)
	cmd := exec.Command(node, append([]string{path}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &nodeHost{t: t, events: make(chan map[string]any, 64)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("node stderr:\n%s", stderr.String())
			t.Logf("node events: %v", h.seen)
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				h.events <- ev
			}
		}
		close(h.events)
	}()
	return h
}

// next returns the next event, which must be named name.
func (h *nodeHost) next(name string) map[string]any {
	h.t.Helper()
	for {
		select {
		case ev, ok := <-h.events:
			if !ok {
				h.t.Fatalf("the TypeScript host exited before %q", name)
			}
			h.seen = append(h.seen, ev)
			if ev["event"] == "taskStatus" && name != "taskStatus" {
				continue // polls while the task works
			}
			if ev["event"] != name {
				h.t.Fatalf("event %v, want %q", ev, name)
			}
			return ev
		case <-time.After(30 * time.Second):
			h.t.Fatalf("no %q from the TypeScript host", name)
		}
	}
}

// nextAny returns the next event, whatever it is.
func (h *nodeHost) nextAny() map[string]any {
	h.t.Helper()
	select {
	case ev, ok := <-h.events:
		if !ok {
			h.t.Fatal("the TypeScript host exited")
		}
		h.seen = append(h.seen, ev)
		return ev
	case <-time.After(30 * time.Second):
		h.t.Fatal("the TypeScript host went quiet")
	}
	return nil
}
