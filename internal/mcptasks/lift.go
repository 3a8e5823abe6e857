package mcptasks

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"

	"github.com/mcp-elicitation/elicitation/internal/reqbody"
)

// taskMeta is the _meta key Lift moves a 2025-11-25 tools/call's
// params.task to, for the middleware to find (the SDK's CallToolParams has
// no task field and drops it). The middleware removes it before the tool
// runs.
const taskMeta = "elicitation/task"

// Lift returns next with each session-era tools/call POST's params.task
// moved into params._meta, where the SDK keeps it, the carriers of each
// session-era response and 2026-07-28 listen turned into the task
// notifications they carry (notify.go), and a 2026-07-28
// subscriptions/listen asking for task notifications (notifications.taskIds,
// which the SDK drops) refused with -32021 without the extension, as the
// extension requires, and with it given its task ids and JSON-RPC id in
// _meta (listen.go answers it). Bodies of at most maxBody bytes are looked
// at, and only those that mention "task" or "taskIds"; every other request
// reaches next untouched (next applies its own body limit).
func Lift(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ext := r.Header.Get("Mcp-Protocol-Version") >= FirstExtensionVersion
		if !ext || r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			w = &statusWriter{w} // task notifications (notify.go)
		}
		if r.Method != http.MethodPost || r.Body == nil || (ext && r.Header.Get("Mcp-Method") != "subscriptions/listen") {
			next.ServeHTTP(w, r)
			return
		}
		look := []byte(`"task"`)
		if ext {
			look = []byte(`"taskIds"`)
		}
		body, ok := reqbody.Peek(r, maxBody)
		if !ok || !bytes.Contains(body, look) {
			next.ServeHTTP(w, r)
			return
		}
		if ext {
			if refuseListen(w, body) {
				return
			}
			if lifted, ok := liftListen(body); ok {
				reqbody.Replace(r, lifted)
			}
			next.ServeHTTP(w, r)
			return
		}
		if lifted, ok := lift(body); ok {
			reqbody.Replace(r, lifted)
		}
		next.ServeHTTP(w, r)
	})
}

// lift moves a tools/call message's params.task into params._meta; ok is
// false when body is anything else (left for the SDK to judge).
func lift(body []byte) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"tools/call"` {
		return nil, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	task, ok := params["task"]
	if !ok {
		return nil, false
	}
	delete(params, "task")
	return withMeta(msg, params, map[string]json.RawMessage{taskMeta: task})
}

// withMeta adds add's keys to params._meta (keeping its others) and
// returns msg with those params, encoded; ok is false when params._meta
// is not an object.
func withMeta(msg, params, add map[string]json.RawMessage) ([]byte, bool) {
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil {
			return nil, false
		}
	}
	maps.Copy(meta, add)
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	out, err := json.Marshal(msg)
	return out, err == nil
}

// refuseListen answers a subscriptions/listen that asks for task
// notifications without declaring the extension; it reports whether it did.
func refuseListen(w http.ResponseWriter, body []byte) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Notifications struct {
				TaskIDs json.RawMessage `json:"taskIds"`
			} `json:"notifications"`
			Meta struct {
				Caps struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Params.Notifications.TaskIDs == nil || len(msg.ID) == 0 {
		return false
	}
	if _, ok := msg.Params.Meta.Caps.Extensions[Extension]; ok {
		return false
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{
		"code":    -32021,
		"message": "Missing required client capability: task notifications need the " + Extension + " extension in the request's capabilities",
		"data":    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}},
	}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
	return true
}

// _meta keys liftListen moves a subscriptions/listen's task ids and its
// JSON-RPC id to, for the middleware (the SDK's listen params have no
// taskIds, and a handler cannot read the request's id).
const (
	listenTaskIDsMeta = "elicitation/listen-task-ids"
	listenIDMeta      = "elicitation/listen-id"
)

// liftListen copies a subscriptions/listen's notifications.taskIds and id
// into params._meta; ok is false when body is anything else.
func liftListen(body []byte) ([]byte, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"subscriptions/listen"` || msg["id"] == nil {
		return nil, false
	}
	var params map[string]json.RawMessage
	var n struct {
		TaskIDs []string `json:"taskIds"`
	}
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["notifications"], &n) != nil || n.TaskIDs == nil {
		return nil, false
	}
	ids, _ := json.Marshal(n.TaskIDs) // strings only: cannot fail
	return withMeta(msg, params, map[string]json.RawMessage{listenTaskIDsMeta: ids, listenIDMeta: msg["id"]})
}
