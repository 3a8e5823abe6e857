package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// call answers a tools/call: as a task where the request asks for one (a
// 2025-11-25 params.task) or may be given one (a 2026-07-28 client that
// declared the extension), and the tool runs as a task; otherwise as the
// tool answers it.
func (t *tasks) call(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	cr, ok := req.(*mcp.CallToolRequest)
	if !ok || cr.Params == nil {
		return next(ctx, "tools/call", req)
	}
	f := eraOfRequest(req)
	raw, requested := cr.Params.Meta[taskMeta]
	if requested {
		// Never passed on: the tools do not know about tasks.
		cr.Params.Meta = maps.Clone(cr.Params.Meta)
		delete(cr.Params.Meta, taskMeta)
	}
	switch f {
	case eraCore:
		if !requested {
			return next(ctx, "tools/call", req)
		}
		if !isTaskTool(cr.Params.Name) {
			// execution.taskSupport "forbidden": -32601, as the specification
			// asks, and a sentence the agent can act on.
			return nil, errMethodNotFound("tool " + cr.Params.Name + " does not run as a task (its execution.taskSupport is \"forbidden\"): call it without params.task")
		}
		ttl, err := checkTaskParam(raw)
		if err != nil {
			return nil, err
		}
		applyTTL(cr.Params, ttl)
	case eraSessionless:
		if !isTaskTool(cr.Params.Name) || !declaresExtension(req) {
			return next(ctx, "tools/call", req)
		}
	default:
		// Before 2025-11-25 there are no tasks: a task parameter is
		// ignored, as the specification asks of a server without the
		// capability.
		return next(ctx, "tools/call", req)
	}
	return t.create(ctx, next, cr, f)
}

// create runs the creating tool and answers with its request as a task,
// once the request is durably stored (the strongly consistent read of its
// state proves it).
func (t *tasks) create(ctx context.Context, next mcp.MethodHandler, cr *mcp.CallToolRequest, f era) (mcp.Result, error) {
	res, err := next(ctx, "tools/call", cr)
	if err != nil {
		return nil, err
	}
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok || ctr.NeedsInput() {
		return res, nil
	}
	if ctr.IsError {
		// No request was created, so there is no task to refer to: the
		// tool's own sentence, as a protocol error.
		return nil, errInvalid("%s (no task was created)", textOf(ctr))
	}
	out, ok := ctr.StructuredContent.(createdOutput)
	if !ok || out.ElicitationID == "" {
		t.s.log.ErrorContext(ctx, "task tool returned no request", "tool", cr.Params.Name)
		return nil, errInternal
	}
	principal := PrincipalOf(cr.Extra)
	st, err := t.s.svc.Status(ctx, principal, out.ElicitationID)
	if err != nil {
		t.s.log.ErrorContext(ctx, "reading a created task failed", "taskId", out.ElicitationID, "err", err)
		return nil, errInternal
	}
	v := viewOf(st, f)
	v.Message = fmt.Sprintf("Waiting for a human to answer at %s (give them this link if the host does not show it); the task ends when they do, or when the request expires at %s.", out.ReviewURL, stamp(st.ExpiresAt))
	immediate := fmt.Sprintf("Started a human review as task %s (elicitationId %s). If the host does not show it, give the human this link: %s. Carry on with other work: the host brings the answer when the task completes.", st.ID, st.ID, out.ReviewURL)
	meta := mcp.Meta{metaImmediateResponse: immediate}
	if f == eraSessionless {
		e := t.extTask(v, "task")
		e.Meta = meta
		return e, nil
	}
	r := &createTaskResult{Task: t.coreTask(v)}
	r.Meta = meta
	if cr.Session != nil && cr.Session.ID() != "" {
		t.watch(cr.Session, principal, t.s.limitPrincipal(cr.Extra), st.ID) // notifications/tasks/status when it ends
	}
	return r, nil
}

// checkTaskParam checks a 2025-11-25 params.task, an object whose optional
// ttl is a number of milliseconds, and returns that ttl (0: none).
func checkTaskParam(raw any) (ttlMs float64, err error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return 0, errInvalid("params.task must be an object such as {\"ttl\": 600000}, not %s", describeParam(raw))
	}
	if ttl, ok := m["ttl"]; ok && ttl != nil {
		n, ok := ttl.(float64)
		if !ok || n < 0 {
			return 0, errInvalid("params.task.ttl must be a number of milliseconds (0 or more), not %s", describeParam(ttl))
		}
		return n, nil
	}
	return 0, nil
}

// applyTTL makes a requested ttl the request's lifetime when the call's
// arguments give no timeoutSeconds of their own: the task's lifetime is the
// request's, and the specification lets the requestor ask for one and the
// receiver override it (the tool clamps it to its bounds, and the task's
// ttl then says the lifetime it got). An agent's own timeoutSeconds wins.
func applyTTL(p *mcp.CallToolParamsRaw, ttlMs float64) {
	if ttlMs <= 0 {
		return
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(p.Arguments, &args) != nil || args == nil {
		return // not an object: the tool says what is wrong
	}
	if _, ok := args["timeoutSeconds"]; ok {
		return
	}
	seconds := math.Ceil(min(ttlMs, float64(elicitation.MaxTimeout.Milliseconds())) / 1000)
	args["timeoutSeconds"], _ = json.Marshal(int64(seconds))
	if b, err := json.Marshal(args); err == nil {
		p.Arguments = b
	}
}

func describeParam(v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 40 {
		return fmt.Sprintf("a %T", v)
	}
	return string(b)
}

func textOf(r *mcp.CallToolResult) string {
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return "the tool call failed"
}
