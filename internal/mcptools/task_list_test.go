package mcptools_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// listAll follows nextCursor to the end and returns the tasks and how many
// pages they came in.
func (c *client) listAll() (tasks []map[string]any, pages int) {
	c.t.Helper()
	cursor := ""
	for {
		res, e := c.List(cursor)
		if e != nil {
			c.t.Fatalf("tasks/list (page %d): error %d %q", pages, e.Code, e.Message)
		}
		pages++
		for _, x := range res["tasks"].([]any) {
			tasks = append(tasks, x.(map[string]any))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			return tasks, pages
		}
		if pages > 10 {
			c.t.Fatal("tasks/list: pages never end")
		}
		cursor = next
	}
}

// createMany creates n approvals for principal straight through the
// Service (each is a task tasks/get reads, however it was created).
func createMany(t *testing.T, w *world, principal string, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		w.clock.Add(time.Millisecond)
		cr, err := w.svc.Create(context.Background(), principal, elicitation.KindApproval, elicitation.Input{Message: "Batch item?", Context: json.RawMessage(`1`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cr.State.ID)
	}
	return ids
}

func base64URL(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func taskIDs(tasks []map[string]any) []string {
	var out []string
	for _, x := range tasks {
		out = append(out, x["taskId"].(string))
	}
	return out
}

// TestCoreList: tasks/list (go-sdk raw calls) lists the principal's own
// tasks, newest first, over pages joined by an opaque cursor, with each
// task's current status (decided, cancelled, working); another principal
// sees none of them; a cursor that is not the server's is -32602; the
// 2026-07-28 extension has no tasks/list.
func TestCoreList(t *testing.T) {
	t.Parallel()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			w := newWorld(t, ep.o)
			alice := w.connect("tok-alice", core, -1, nil)
			bob := w.connect("tok-bob", core, -1, nil)
			older := createMany(t, w, "alice", mcptools.ListPage) // fills the first page with the next one
			w.clock.Add(time.Millisecond)
			decided, _ := startTask(t, alice, "elicit_approval", approvalArgs)
			w.clock.Add(time.Millisecond)
			cancelled, _ := startTask(t, alice, "elicit_approval", approvalArgs)
			createMany(t, w, "bob", 2)
			w.decide(decided, elicitation.Submission{Decision: elicitation.DecisionDeclined, Comment: "no"})
			alice.Must("tasks/cancel", cancelled)

			tasks, pages := alice.listAll()
			slices.Reverse(older)
			want := append([]string{cancelled, decided}, older...)
			if got := taskIDs(tasks); !slices.Equal(got, want) || pages != 2 {
				t.Fatalf("alice listed %d tasks in %d pages: %v\nwant %d, newest first, in 2 pages: %v", len(got), pages, got, len(want), want)
			}
			if tasks[0]["status"] != "cancelled" || tasks[1]["status"] != "completed" || tasks[2]["status"] != "working" || tasks[2]["pollInterval"] == nil {
				t.Fatalf("statuses %v, %v, %v: want cancelled, completed, working", tasks[0], tasks[1], tasks[2])
			}
			for _, x := range tasks {
				if x["createdAt"] == nil || x["lastUpdatedAt"] == nil || x["ttl"] == nil {
					t.Fatalf("a listed task lacks createdAt, lastUpdatedAt or ttl: %v", x)
				}
			}
			if got := alice.Must("tasks/get", decided); got["status"] != tasks[1]["status"] || got["lastUpdatedAt"] != tasks[1]["lastUpdatedAt"] {
				t.Fatalf("tasks/get %v differs from the listing's %v", got, tasks[1])
			}
			bobs, _ := bob.listAll()
			if len(bobs) != 2 || slices.ContainsFunc(taskIDs(bobs), func(id string) bool { return slices.Contains(want, id) }) {
				t.Fatalf("bob listed %v: want only his two", taskIDs(bobs))
			}
			for _, bad := range []string{"nonsense", "v1.!!!", "v1.e30", "v1." + base64URL(`{"c":-5,"i":"x"}`)} {
				_, e := alice.List(bad)
				tasktest.WantCode(t, "cursor "+bad, e, jsonrpc.CodeInvalidParams, "cursor is not one this server gave")
			}
		})
	}
	t.Run("extension", func(t *testing.T) {
		w := newWorld(t, worldOptions{})
		c := w.connect("tok-alice", ext, -1, extCaps)
		_, e := c.List("")
		tasktest.WantCode(t, "tasks/list on 2026-07-28", e, jsonrpc.CodeMethodNotFound, "tasks/list")
	})
}

// TestTypeScriptListTasks: the TypeScript SDK 1.32.2's experimental tasks
// client lists a principal's tasks with listTasks, following nextCursor;
// another principal lists none of them.
func TestTypeScriptListTasks(t *testing.T) {
	testenv.Slow(t, "TypeScript SDK")
	t.Parallel()
	testenv.NodeModule(t, "@modelcontextprotocol/sdk/package.json")
	w := newWorld(t, worldOptions{stateless: true, instances: 2})
	alice := w.connect("tok-alice", core, -1, nil)
	mine := createMany(t, w, "alice", mcptools.ListPage+3)
	w.clock.Add(time.Millisecond)
	started, _ := startTask(t, alice, "elicit_approval", approvalArgs)
	mine = append(mine, started)
	slices.Reverse(mine)

	h := startNode(t, "tscore.mjs", w.servers[0].URL+"/mcp", "tok-alice", "list")
	h.next("connected")
	got := h.next("listed")
	var ids []string
	for _, x := range got["tasks"].([]any) {
		ids = append(ids, x.(map[string]any)["taskId"].(string))
	}
	if !slices.Equal(ids, mine) || got["pages"] != float64(2) {
		t.Fatalf("listTasks: %d tasks in %v pages, want %d in 2, newest first", len(ids), got["pages"], len(mine))
	}
	if e := h.next("badCursor"); e["code"] != float64(jsonrpc.CodeInvalidParams) {
		t.Fatalf("listTasks with a made-up cursor: %v", e)
	}
	hb := startNode(t, "tscore.mjs", w.servers[0].URL+"/mcp", "tok-bob", "list")
	hb.next("connected")
	if got := hb.next("listed"); len(got["tasks"].([]any)) != 0 {
		t.Fatalf("bob's listTasks: %v", got["tasks"])
	}
}
