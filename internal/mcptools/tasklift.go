package mcptools

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskMeta is the _meta key Lift moves a 2025-11-25 tools/call's
// params.task to, for the middleware to find (the SDK's CallToolParams has
// no task field and drops it). The middleware removes it before the tool
// runs.
const taskMeta = "elicitation/task"

// Lift mends a POST's body for what go-sdk v1.8.0 drops, before the SDK
// decodes it: a session-era tools/call's params.task moves into
// params._meta, where the SDK keeps it; a 2026-07-28 subscriptions/listen
// asking for task notifications (notifications.taskIds) gets its task ids
// and JSON-RPC id in _meta (listen.go answers it), or, without the
// extension declared, is refused with -32021 as the extension requires:
// then refusal is the whole response (JSON) and the request goes no
// further. Only bodies that mention "task" or "taskIds" are decoded;
// lifted is nil when body stays as it is. ext tells a 2026-07-28
// request (the front door reads the era); Lift is called with the body of
// every session-era POST and of a 2026-07-28 subscriptions/listen.
func Lift(ext bool, body []byte) (lifted, refusal []byte) {
	look := []byte(`"task"`)
	if ext {
		look = []byte(`"taskIds"`)
	}
	if !bytes.Contains(body, look) {
		return nil, nil
	}
	if !ext {
		return lift(body), nil
	}
	if refusal = refuseListen(body); refusal != nil {
		return nil, refusal
	}
	return liftListen(body), nil
}

// message decodes body, a JSON-RPC message of method, and its params; ok
// is false when body is anything else (left for the SDK to judge).
func message(body []byte, method string) (msg, params map[string]json.RawMessage, ok bool) {
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"`+method+`"` || json.Unmarshal(msg["params"], &params) != nil {
		return nil, nil, false
	}
	return msg, params, true
}

// lift moves a tools/call message's params.task into params._meta; nil
// when body is anything else.
func lift(body []byte) []byte {
	msg, params, ok := message(body, "tools/call")
	task, has := params["task"]
	if !ok || !has {
		return nil
	}
	delete(params, "task")
	return withMeta(msg, params, map[string]json.RawMessage{taskMeta: task})
}

// withMeta adds add's keys to params._meta (keeping its others) and
// returns msg with those params, encoded; nil when params._meta is not an
// object.
func withMeta(msg, params, add map[string]json.RawMessage) []byte {
	for k, v := range add {
		if setIn(params, "_meta", k, v) != nil {
			return nil
		}
	}
	var err error
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil
	}
	out, _ := json.Marshal(msg)
	return out
}

// refuseListen is the answer to a subscriptions/listen that asks for task
// notifications without declaring the extension; nil for any other.
func refuseListen(body []byte) []byte {
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
		return nil
	}
	if _, ok := msg.Params.Meta.Caps.Extensions[Extension]; ok {
		return nil
	}
	return errorResponse(msg.ID, mcp.CodeMissingRequiredClientCapabilities,
		"Missing required client capability: task notifications need the "+Extension+" extension in the request's capabilities", missingExtension)
}

// missingExtension is the data of a -32021 refusal for want of the
// extension: it names the extension in requiredCapabilities.
var missingExtension = json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + Extension + `":{}}}}`)

// errorResponse is the JSON-RPC error response to the request id, its
// members in the order json.Marshal gives a map's.
func errorResponse(id json.RawMessage, code int64, message string, data json.RawMessage) []byte {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return out
}

// _meta keys liftListen moves a subscriptions/listen's task ids and its
// JSON-RPC id to, for the middleware (the SDK's listen params have no
// taskIds, and a handler cannot read the request's id).
const (
	listenTaskIDsMeta = "elicitation/listen-task-ids"
	listenIDMeta      = "elicitation/listen-id"
)

// liftListen copies a subscriptions/listen's notifications.taskIds and id
// into params._meta; nil when body is anything else.
func liftListen(body []byte) []byte {
	msg, params, ok := message(body, "subscriptions/listen")
	var n struct {
		TaskIDs []string `json:"taskIds"`
	}
	if !ok || msg["id"] == nil || json.Unmarshal(params["notifications"], &n) != nil || n.TaskIDs == nil {
		return nil
	}
	ids, _ := json.Marshal(n.TaskIDs) // strings only: cannot fail
	return withMeta(msg, params, map[string]json.RawMessage{listenTaskIDsMeta: ids, listenIDMeta: msg["id"]})
}

// nameMismatch begins the refusal of a tasks/* request whose Mcp-Name is
// not its params.taskId, from the front door (RefuseName) and from the
// method itself (tasks.method) alike.
const nameMismatch = "the Mcp-Name header must equal params.taskId on "

// NamedByTask reports whether a 2026-07-28 request of method (its
// Mcp-Method header) must carry Mcp-Name equal to its params.taskId.
func NamedByTask(method string) bool {
	return method == methodGet || method == methodUpdate || method == methodCancel
}

// RefuseName is the answer to a 2026-07-28 tasks/get, tasks/update or
// tasks/cancel body whose params.taskId the Mcp-Name header (name) does
// not equal, missing included: the header mismatch (-32020) the front
// door sends with HTTP 400, as the SDK does for the headers it checks
// (SEP-2243); nil when they agree, or when the body names no task (the
// method then answers -32602 itself).
func RefuseName(name string, body []byte) []byte {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			TaskID *string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || msg.Params.TaskID == nil || *msg.Params.TaskID == "" || *msg.Params.TaskID == name {
		return nil
	}
	return errorResponse(msg.ID, mcp.CodeHeaderMismatch, nameMismatch+"tasks/get, tasks/update and tasks/cancel", nil)
}
