package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// target is the task a tasks/* request names, read for its principal.
type target struct {
	req       mcp.Request
	f         flavour
	principal string
	state     elicitation.State
	view      view
}

// method answers tasks/get, tasks/result, tasks/cancel, tasks/update and
// tasks/list.
func (t *Tasks) method(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	f := flavourOfRequest(req)
	if err := offered(method, f, req); err != nil {
		return nil, err
	}
	if method == methodList {
		return t.list(ctx, req)
	}
	id, inputs := paramsOf(req)
	if id == nil || *id == "" {
		return nil, errInvalid("%s needs params.taskId (the taskId of the task's creation result)", method)
	}
	if f == flavourExt {
		if h := headerOf(req); h == nil || h.Get("Mcp-Name") != *id {
			return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "the Mcp-Name header must equal params.taskId on " + method}
		}
	}
	tg := target{req: req, f: f, principal: t.opts.Principal(req.GetExtra())}
	st, err := t.opts.Service.Status(ctx, tg.principal, *id)
	if err != nil {
		return nil, t.readError(ctx, *id, err)
	}
	tg.state, tg.view = st, viewOf(st, f)
	switch method {
	case methodGet:
		if f == flavourExt {
			return t.getExt(ctx, next, tg)
		}
		return &taskResult{coreTask: t.coreTask(tg.view)}, nil
	case methodResult:
		return t.result(ctx, next, tg)
	case methodCancel:
		return t.cancel(ctx, tg)
	default:
		return t.update(ctx, tg, inputs)
	}
}

// offered refuses a method the request's flavour does not have, with
// -32601 and the sentence.
func offered(method string, f flavour, req mcp.Request) error {
	notFound := errMethodNotFound
	switch {
	case f == flavourNone:
		return notFound(method + " needs protocol " + FirstCoreVersion + " or later (tasks came with it)")
	case f == flavourExt && method == methodList:
		return notFound("tasks/list is not part of the 2026-07-28 tasks extension: keep the taskId of each task you start")
	case f == flavourExt && method == methodResult:
		return notFound("tasks/result is not part of the 2026-07-28 tasks extension: tasks/get carries the result once the task completes")
	case f == flavourCore && method == methodUpdate:
		return notFound("tasks/update is part of the 2026-07-28 tasks extension, not of protocol " + FirstCoreVersion)
	case f == flavourExt && !declaresExtension(req):
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{Extension: map[string]any{}}}})
		return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare the " + Extension + " extension in the request's capabilities", Data: data}
	}
	return nil
}

func paramsOf(req mcp.Request) (id *string, inputs map[string]json.RawMessage) {
	switch p := req.GetParams().(type) {
	case *taskParams:
		return p.TaskID, nil
	case *updateParams:
		return p.TaskID, p.InputResponses
	}
	return nil, nil
}

func headerOf(req mcp.Request) httpHeader {
	if e := req.GetExtra(); e != nil && e.Header != nil {
		return e.Header
	}
	return nil
}

type httpHeader interface{ Get(string) string }

// readError maps a failed read of a task: one not found (unknown, another
// principal's, or removed after its retention) is the specification's
// "Task not found"; bad ids get their sentence; the rest is internal.
func (t *Tasks) readError(ctx context.Context, id string, err error) error {
	switch elicitation.CodeOf(err) {
	case elicitation.CodeNotFound:
		return errNotFound()
	case elicitation.CodeInvalidArgument:
		return errInvalid("taskId: %s", elicitation.PublicMessage(err))
	}
	if ctx.Err() == nil {
		t.log.ErrorContext(ctx, "reading a task failed", "taskId", id, "err", err)
	}
	return errInternal
}

// result answers a 2025-11-25 tasks/result: it waits for the request
// through the await tool (within the server's wait bound, decided where
// elicit_await's is), then returns what the result tool returns, which
// consumes the request and audits the fetch.
func (t *Tasks) result(ctx context.Context, next mcp.MethodHandler, tg target) (mcp.Result, error) {
	if tg.view.pending {
		res, err := t.callTool(ctx, next, tg, t.opts.AwaitTool)
		if err != nil {
			return nil, err
		}
		var out struct {
			Status elicitation.Status `json:"status"`
		}
		if res.IsError || decodeStructured(res, &out) != nil {
			return nil, t.toolFailure(ctx, tg.state.ID, res)
		}
		if out.Status == elicitation.StatusPending {
			return nil, errStillWorking(t.opts.Service.MaxWait().String())
		}
	}
	res, err := t.outcome(ctx, next, tg)
	if err != nil {
		return nil, err
	}
	res.Meta = mcp.Meta{MetaRelatedTask: map[string]any{"taskId": tg.state.ID}}
	return res, nil
}

// outcome is the task's result: the result tool's answer with the
// request's id and review link.
func (t *Tasks) outcome(ctx context.Context, next mcp.MethodHandler, tg target) (*mcp.CallToolResult, error) {
	res, err := t.callTool(ctx, next, tg, t.opts.ResultTool)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		if text := textOf(res); strings.HasPrefix(text, string(elicitation.CodeNotFound)+":") {
			return nil, errNotFound()
		}
		return res, nil
	}
	link := ""
	if t.opts.ReviewLink != nil {
		link, _ = t.opts.ReviewLink(ctx, tg.principal, tg.state.ID)
	}
	var fields map[string]json.RawMessage
	if err := decodeStructured(res, &fields); err != nil || fields == nil {
		return nil, t.toolFailure(ctx, tg.state.ID, res)
	}
	fields["elicitationId"], _ = json.Marshal(tg.state.ID)
	fields["reviewUrl"], _ = json.Marshal(link)
	if link == "" {
		fields["reviewUrl"] = json.RawMessage("null")
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, errInternal
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// toolFailure maps an unexpected tool answer inside a tasks method.
func (t *Tasks) toolFailure(ctx context.Context, id string, res *mcp.CallToolResult) error {
	text := textOf(res)
	if strings.HasPrefix(text, string(elicitation.CodeNotFound)+":") {
		return errNotFound()
	}
	if busy, ok := strings.CutPrefix(text, string(elicitation.CodeBusy)+": "); ok {
		// A wait limit of the server is full: the task is still working,
		// and the sentence says which limit and when to ask again.
		return &jsonrpc.Error{Code: CodeStillWorking, Message: "task still working: " + busy}
	}
	t.log.WarnContext(ctx, "task tool call failed", "taskId", id, "answer", text)
	return errInternal
}

// callTool calls a tool with the task's elicitationId through the rest of
// the server's chain, as the request's own client (same session, extra and
// era), so that the tools apply every rule they always apply.
func (t *Tasks) callTool(ctx context.Context, next mcp.MethodHandler, tg target, name string) (*mcp.CallToolResult, error) {
	args, _ := json.Marshal(map[string]string{"elicitationId": tg.state.ID})
	p := &mcp.CallToolParamsRaw{Name: name, Arguments: args}
	if m := tg.req.GetParams().GetMeta(); m != nil {
		p.Meta = maps.Clone(mcp.Meta(m))
	}
	if tg.f == flavourCore {
		// What the call sends the client meanwhile (the host's form during
		// tasks/result) belongs to the task: the tool copies the key on.
		if p.Meta == nil {
			p.Meta = mcp.Meta{}
		}
		p.Meta[MetaRelatedTask] = map[string]any{"taskId": tg.state.ID}
	}
	ss, _ := tg.req.GetSession().(*mcp.ServerSession)
	res, err := next(ctx, "tools/call", &mcp.CallToolRequest{Session: ss, Params: p, Extra: tg.req.GetExtra()})
	if err != nil {
		if isRPCError(err) {
			return nil, err
		}
		t.log.ErrorContext(ctx, "task tool call failed", "tool", name, "taskId", tg.state.ID, "err", err)
		return nil, errInternal
	}
	ctr, ok := res.(*mcp.CallToolResult)
	if !ok {
		return nil, errInternal
	}
	return ctr, nil
}

// cancel withdraws the request (Service.Cancel, as elicit_cancel does):
// the review page then refuses it.
func (t *Tasks) cancel(ctx context.Context, tg target) (mcp.Result, error) {
	if tg.view.terminal {
		if tg.f == flavourExt {
			return &ackResult{ResultType: "complete"}, nil // cooperative: nothing left to stop
		}
		return nil, errInvalid("task %s is already %s: only a working task can be cancelled", tg.state.ID, tg.view.Status)
	}
	st, err := t.opts.Service.Cancel(ctx, tg.principal, tg.state.ID)
	switch {
	case errors.Is(err, elicitation.ErrConflict) || errors.Is(err, elicitation.ErrExpired):
		if tg.f == flavourExt {
			return &ackResult{ResultType: "complete"}, nil
		}
		return nil, errInvalid("task %s ended before it could be cancelled (the human answered, or it expired): call tasks/get", tg.state.ID)
	case err != nil:
		return nil, t.readError(ctx, tg.state.ID, err)
	}
	if tg.f == flavourExt {
		return &ackResult{ResultType: "complete"}, nil
	}
	return &taskResult{coreTask: t.coreTask(viewOf(st, tg.f))}, nil
}
