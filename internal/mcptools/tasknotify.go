package mcptools

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// 2025-11-25 notifications/tasks/status. A task started on a session is
// watched (elicitation.Service.Watch: the store's own wake-up, or rare
// reads where the store can only poll) for as long as the session lives,
// and when it ends (decided, declined, cancelled or expired) the session is
// told, with the whole task, as the specification's optional notification.
//
// go-sdk v1.8.0 sends a server's notifications only from its own list, so
// the notification travels as a carrier the SDK knows: a
// notifications/progress whose params hold the task under carrierKey in
// _meta. The server's front door passes every session-era response through
// Uncarry, which turns each
// server-sent event that is such a carrier back into
// notifications/tasks/status (one event is one Write, in the SDK as in
// the event store's replays). Nothing else is ever rewritten: a carrier is
// a notification (a method, no id) with that _meta key, which no client
// can make the server send.
const (
	methodStatus    = "notifications/tasks/status"
	methodExtStatus = "notifications/tasks"
	methodAcked     = "notifications/subscriptions/acknowledged"
	carrierKey      = "io.github.mcp-elicitation/carried"
)

var carrierMark = []byte(`"` + carrierKey + `"`)

// notify sends ss the notification method with params, in a carrier
// (Uncarry sends it as itself).
func notify(ctx context.Context, ss *mcp.ServerSession, method string, params any) error {
	return ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: carrierKey,
		Meta:          mcp.Meta{carrierKey: carried{Method: method, Params: params}},
	})
}

// carried is a carrier's notification.
type carried struct {
	Method string `json:"m"`
	Params any    `json:"p"`
}

// carriable are the notifications a carrier may turn into.
var carriable = map[string]bool{methodStatus: true, methodExtStatus: true, methodAcked: true}

// watch tells ss when task id (of principal) ends, unless ss closes first,
// holding a watch slot of limit (Server.limitPrincipal).
func (t *tasks) watch(ss *mcp.ServerSession, principal, limit, id string) {
	ctx := t.s.sessionEnd(ss)
	release, ok := t.s.watches.Hold(limit)
	if !ok {
		t.s.log.DebugContext(ctx, "task status not watched: this client's watches are at their most", "taskId", id)
		return
	}
	go func() {
		defer release()
		st, err := t.s.svc.Watch(ctx, principal, id)
		if err != nil || st.Status == elicitation.StatusPending {
			if err != nil && ctx.Err() == nil {
				t.s.log.DebugContext(ctx, "task status not watched", "taskId", id, "err", err)
			}
			return
		}
		if err := notify(ctx, ss, methodStatus, t.coreTask(viewOf(st, eraCore))); err != nil {
			// Best effort, as the specification makes it: the session's
			// GET stream may not be open; the host polls.
			t.s.log.DebugContext(ctx, "task status not delivered", "taskId", id, "err", err)
		}
	}()
}

// Uncarry turns event, what the SDK writes of a response, back into the task
// notifications it carries, if it is one server-sent event that is a
// carrier; ok is false for anything else, which goes out as it is. The
// server's front door runs every session-era response and 2026-07-28
// listen through it. It rewrites the data line of that event.
func Uncarry(event []byte) (out []byte, ok bool) {
	if !bytes.Contains(event, carrierMark) {
		return nil, false
	}
	lines := bytes.Split(event, []byte("\n"))
	done := false
	for i, line := range lines {
		data, found := bytes.CutPrefix(line, []byte("data: "))
		if !found || !bytes.Contains(data, carrierMark) {
			continue
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		var c struct {
			Method string          `json:"m"`
			Params json.RawMessage `json:"p"`
		}
		if json.Unmarshal(data, &msg) != nil || msg.ID != nil || msg.Method != "notifications/progress" ||
			json.Unmarshal(msg.Params.Meta[carrierKey], &c) != nil || !carriable[c.Method] || c.Params == nil {
			return nil, false
		}
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": c.Method, "params": c.Params})
		if err != nil {
			return nil, false
		}
		lines[i] = append([]byte("data: "), b...)
		done = true
	}
	return bytes.Join(lines, []byte("\n")), done
}
