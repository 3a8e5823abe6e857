package mcptools

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// versioned is what every *mcp.ServerRequest tells about its era.
type versioned interface {
	ProtocolVersion() string
	ClientCapabilities() *mcp.ClientCapabilities
}

func eraOfRequest(req mcp.Request) era {
	if r, ok := req.(versioned); ok {
		return eraOf(r.ProtocolVersion())
	}
	return eraEarly
}

// declaresExtension reports whether a 2026-07-28 request's per-request
// capabilities name the extension.
func declaresExtension(req mcp.Request) bool {
	r, ok := req.(versioned)
	if !ok {
		return false
	}
	caps := r.ClientCapabilities()
	if caps == nil || caps.Extensions == nil {
		return false
	}
	_, ok = caps.Extensions[Extension]
	return ok
}

func (t *tasks) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			return t.initialize(ctx, next, method, req)
		case "server/discover":
			return t.discover(ctx, next, method, req)
		case "tools/list":
			return t.listTools(ctx, next, method, req)
		case "tools/call":
			return t.call(ctx, next, req)
		case "subscriptions/listen":
			if eraOfRequest(req) == eraSessionless {
				if res, ok, err := t.listen(ctx, req); ok {
					return res, err
				}
			}
		case methodGet, methodResult, methodCancel, methodList, methodUpdate:
			fillParams(req)
			return t.method(ctx, method, req)
		}
		return next(ctx, method, req)
	}
}

// fillParams gives a tasks request that came without params empty ones:
// the SDK reads a request's _meta through its params (ProtocolVersion,
// ClientCapabilities), and for a params type that embeds ParamsBase a nil
// pointer panics there (go-sdk v1.8.0), which a client could cause with
// {"method":"tasks/list"}.
func fillParams(req mcp.Request) {
	switch r := req.(type) {
	case *mcp.ServerRequest[*taskParams]:
		if r.Params == nil {
			r.Params = &taskParams{}
		}
	case *mcp.ServerRequest[*updateParams]:
		if r.Params == nil {
			r.Params = &updateParams{}
		}
	}
}

// initialize declares the 2025-11-25 tasks capability to a session that
// negotiated that protocol (the SDK's ServerCapabilities has no field for
// it).
func (t *tasks) initialize(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	ir, ok := res.(*mcp.InitializeResult)
	if err != nil || !ok || eraOf(ir.ProtocolVersion) != eraCore {
		return res, err
	}
	return &initializeResult{ir}, nil
}

// coreCapability is the server's 2025-11-25 tasks capability.
var coreCapability = map[string]any{
	"list":     map[string]any{},
	"cancel":   map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
}

type initializeResult struct{ *mcp.InitializeResult }

func (r *initializeResult) MarshalJSON() ([]byte, error) {
	return addFields(r.InitializeResult, func(m map[string]json.RawMessage) error {
		return setIn(m, "capabilities", "tasks", coreCapability)
	})
}

// discover declares the extension to 2026-07-28 clients.
func (t *tasks) discover(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	dr, ok := res.(*mcp.DiscoverResult)
	if err != nil || !ok || dr.Capabilities == nil {
		return res, err
	}
	caps := *dr.Capabilities
	caps.Extensions = maps.Clone(caps.Extensions)
	caps.AddExtension(Extension, nil)
	dr.Capabilities = &caps
	return dr, nil
}

// listTools lets the creating tools' output schemas admit a task's result
// for the eras with Tasks, and adds execution.taskSupport to every tool for
// 2025-11-25 clients (the SDK's Tool has no execution field; the 2026-07-28
// extension does not list it).
func (t *tasks) listTools(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	res, err := next(ctx, method, req)
	lr, ok := res.(*mcp.ListToolsResult)
	if err != nil || !ok {
		return res, err
	}
	switch eraOfRequest(req) {
	case eraCore:
		return &listToolsResult{lr, true}, nil
	case eraSessionless:
		return &listToolsResult{lr, false}, nil
	}
	return res, nil
}

type listToolsResult struct {
	*mcp.ListToolsResult
	taskSupport bool // add execution.taskSupport (2025-11-25)
}

func (r *listToolsResult) MarshalJSON() ([]byte, error) {
	result, err := taskResultSchema(r.Tools)
	if err != nil {
		return nil, err
	}
	tools := make([]json.RawMessage, len(r.Tools))
	for i, tool := range r.Tools {
		support := "forbidden"
		if isTaskTool(tool.Name) {
			support = "optional"
		}
		b, err := addFields(tool, func(m map[string]json.RawMessage) error {
			if support == "optional" && result != nil && m["outputSchema"] != nil {
				// Run as a task, the tool's result is the task's result:
				// its output schema admits both.
				both, err := json.Marshal(map[string]any{"type": "object", "anyOf": []json.RawMessage{m["outputSchema"], result}})
				if err != nil {
					return err
				}
				m["outputSchema"] = both
			}
			if !r.taskSupport {
				return nil
			}
			return setIn(m, "execution", "taskSupport", support)
		})
		if err != nil {
			return nil, err
		}
		tools[i] = b
	}
	return addFields(r.ListToolsResult, func(m map[string]json.RawMessage) error {
		b, err := json.Marshal(tools)
		m["tools"] = b
		return err
	})
}

// taskResultSchema is the output schema of a task's result: the result
// tool's, with the elicitationId and reviewUrl every task result adds; nil
// when the list does not hold the result tool's schema.
func taskResultSchema(tools []*mcp.Tool) (json.RawMessage, error) {
	for _, tool := range tools {
		if tool.Name != ToolResult || tool.OutputSchema == nil {
			continue
		}
		return addFields(tool.OutputSchema, func(m map[string]json.RawMessage) error {
			if err := setIn(m, "properties", "elicitationId", map[string]any{"type": "string", "description": "The request's id (the task id)."}); err != nil {
				return err
			}
			return setIn(m, "properties", "reviewUrl", map[string]any{"type": []string{"string", "null"}, "description": "The review page, when the request kept its link."})
		})
	}
	return nil, nil
}

// addFields encodes v as a JSON object and lets edit change its members.
func addFields(v any, edit func(map[string]json.RawMessage) error) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := edit(m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// setIn sets m[outer][inner] = v, keeping outer's other members.
func setIn(m map[string]json.RawMessage, outer, inner string, v any) error {
	o := map[string]json.RawMessage{}
	if raw, ok := m[outer]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &o); err != nil {
			return err
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	o[inner] = b
	m[outer], err = json.Marshal(o)
	return err
}
