package mcptools_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func TestPollInterval(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	const hour = time.Hour
	for _, tc := range []struct {
		name       string
		first, ttl time.Duration
		age        time.Duration // the clock's move after creation
		want       time.Duration
	}{
		{"new", 5 * time.Second, hour, 0, 5 * time.Second},
		{"the first minute", 5 * time.Second, hour, 59 * time.Second, 5 * time.Second},
		{"a minute old", 5 * time.Second, hour, time.Minute, 5 * time.Second},
		{"two minutes old", 5 * time.Second, hour, 2 * time.Minute, 10 * time.Second},
		{"three minutes old", 5 * time.Second, hour, 3 * time.Minute, 15 * time.Second},
		{"six minutes old: the most", 5 * time.Second, hour, 6 * time.Minute, 30 * time.Second},
		{"half an hour old", 5 * time.Second, hour, 30 * time.Minute, 30 * time.Second},
		{"20 s left", 5 * time.Second, hour, hour - 20*time.Second, 20 * time.Second},
		{"4 s left", 5 * time.Second, hour, hour - 4*time.Second, 4 * time.Second},
		{"300 ms left: a second", 5 * time.Second, hour, hour - 300*time.Millisecond, time.Second},
		{"past its expiry: a second", 5 * time.Second, hour, hour + time.Minute, time.Second},
		{"a short request's end", 5 * time.Second, 2 * time.Minute, 110 * time.Second, 9166 * time.Millisecond},
		{"a long first interval stays", time.Minute, hour, 30 * time.Minute, time.Minute},
		{"a short first interval grows", 100 * time.Millisecond, hour, 12 * time.Second, time.Second},
		{"a short first interval at the end", 100 * time.Millisecond, hour, hour, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := testclock.New(created)
			clock.Add(tc.age)
			got := mcptools.PollInterval(tc.first, created, created.Add(tc.ttl), clock.Now())
			if got.Truncate(time.Millisecond) != tc.want {
				t.Fatalf("PollInterval(%s) at age %s of %s = %s, want %s", tc.first, tc.age, tc.ttl, got, tc.want)
			}
		})
	}
}

// TestPollIntervalGrowsOverHTTP polls a task over real HTTP in each era and
// deployment as its request ages on the test clock: the suggested interval
// grows from 5 s to 30 s and shrinks to the time left near the end.
func TestPollIntervalGrowsOverHTTP(t *testing.T) {
	t.Parallel()
	args := map[string]any{"message": "Ship build 7?", "context": map[string]any{"build": 7}, "timeoutSeconds": 1200}
	for _, ep := range endpoints {
		for _, era := range []struct {
			version, field, task string
			caps                 *mcp.ClientCapabilities
		}{{core, "pollInterval", `{"ttl": 1800000}`, nil}, {ext, "pollIntervalMs", "", extCaps}} {
			t.Run(ep.name+"/"+era.version, func(t *testing.T) {
				w := newWorld(t, ep.o)
				c := w.connect("tok-alice", era.version, -1, era.caps)
				res, e := c.Start("elicit_approval", args, era.task)
				if e != nil {
					t.Fatalf("start: error %d %q", e.Code, e.Message)
				}
				id, _ := res["taskId"].(string)
				if task, ok := res["task"].(map[string]any); ok {
					id = task["taskId"].(string)
				}
				age := time.Duration(0)
				for _, step := range []struct {
					move time.Duration
					want float64 // ms
				}{{0, 5000}, {2 * time.Minute, 10000}, {4 * time.Minute, 30000}, {13*time.Minute + 50*time.Second, 10000}} {
					w.clock.Add(step.move)
					age += step.move
					got := c.Must("tasks/get", id)
					if got["status"] != "working" || got[era.field] != step.want {
						t.Fatalf("tasks/get %s into the request: status %v, %s %v, want working and %v", age, got["status"], era.field, got[era.field], step.want)
					}
				}
			})
		}
	}
}
