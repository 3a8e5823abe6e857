package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// target is the task a tasks/* request names, read for its principal.
type target struct {
	req       mcp.Request
	f         era
	principal string
	state     elicitation.State
	view      view
}

// method answers tasks/get, tasks/result, tasks/cancel, tasks/update and
// tasks/list.
func (t *tasks) method(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	f := eraOfRequest(req)
	if err := offered(method, f, req); err != nil {
		return nil, err
	}
	id, inputs, bad := paramsOf(req)
	if bad != "" {
		return nil, errInvalid("%s of %s is not what it must be: taskId and cursor are strings, inputResponses an object keyed by the inputRequests that tasks/get returned", bad, method)
	}
	if method == methodList {
		return t.list(ctx, req)
	}
	if id == nil || *id == "" {
		return nil, errInvalid("%s needs params.taskId (the taskId of the task's creation result)", method)
	}
	if f == eraSessionless {
		if e := req.GetExtra(); e == nil || e.Header.Get("Mcp-Name") != *id {
			return nil, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: nameMismatch + method}
		}
	}
	tg := target{req: req, f: f, principal: PrincipalOf(req.GetExtra())}
	st, err := t.s.svc.Status(ctx, tg.principal, *id)
	if err != nil {
		return nil, t.readError(ctx, *id, err)
	}
	tg.state, tg.view = st, viewOf(st, f)
	switch method {
	case methodGet:
		if f == eraSessionless {
			return t.getExt(ctx, tg)
		}
		return t.getCore(ctx, tg), nil
	case methodResult:
		return t.result(ctx, tg)
	case methodCancel:
		return t.cancel(ctx, tg)
	default:
		return t.update(ctx, tg, inputs)
	}
}

// offered refuses a method the request's flavour does not have, with
// -32601 and the sentence.
func offered(method string, f era, req mcp.Request) error {
	notFound := errMethodNotFound
	switch {
	case f == eraEarly:
		return notFound(method + " needs protocol " + FirstCoreVersion + " or later (tasks came with it)")
	case f == eraSessionless && method == methodList:
		return notFound("tasks/list is not part of the 2026-07-28 tasks extension: keep the taskId of each task you start")
	case f == eraSessionless && method == methodResult:
		return notFound("tasks/result is not part of the 2026-07-28 tasks extension: tasks/get carries the result once the task completes")
	case f == eraCore && method == methodUpdate:
		return notFound("tasks/update is part of the 2026-07-28 tasks extension, not of protocol " + FirstCoreVersion)
	case f == eraSessionless:
		return RequireExtension(req)
	}
	return nil
}

// RequireExtension refuses a 2026-07-28 request that needs the Tasks
// extension (a tasks/* method; a call of a tool that can only run as a
// task, execution.taskSupport "required", which none of this server's
// tools is: the conformance fixture's) when its capabilities do not
// declare it: -32021, Missing Required Client Capability, naming the
// extension in data.requiredCapabilities, as the extension asks. nil when
// they do.
func RequireExtension(req mcp.Request) error {
	if declaresExtension(req) {
		return nil
	}
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare the " + Extension + " extension in the request's capabilities", Data: missingExtension}
}

func paramsOf(req mcp.Request) (id *string, inputs map[string]json.RawMessage, bad string) {
	switch p := req.GetParams().(type) {
	case *taskParams:
		return p.TaskID, nil, p.bad
	case *updateParams:
		return p.TaskID, p.InputResponses, p.bad
	}
	return nil, nil, ""
}

// readError maps a failed read of a task: one not found (unknown, another
// principal's, or removed after its retention) is the specification's
// "Task not found"; bad ids get their sentence; the rest is internal.
func (t *tasks) readError(ctx context.Context, id string, err error) error {
	switch elicitation.CodeOf(err) {
	case elicitation.CodeNotFound:
		return errNotFound
	case elicitation.CodeInvalidArgument:
		return errInvalid("taskId: %s", elicitation.PublicMessage(err))
	}
	if ctx.Err() == nil {
		t.s.log.ErrorContext(ctx, "reading a task failed", "taskId", id, "err", err)
	}
	return errInternal
}

// result answers a 2025-11-25 tasks/result: it waits for the request as
// elicit_await does (Options.Await: within the server's wait bound, with
// its caps and offers), then returns what the result tool returns, which
// consumes the request and audits the fetch.
func (t *tasks) result(ctx context.Context, tg target) (mcp.Result, error) {
	if tg.view.pending {
		req := t.toolRequest(tg)
		wctx, done := bind(withCaller(ctx, req), t.s.httpRequest(req))
		defer done()
		res, st, err := t.s.awaitID(wctx, req, tg.state.ID, 0)
		if err != nil {
			return nil, t.callError(ctx, tg.state.ID, err)
		}
		if res != nil || st.Status == elicitation.StatusPending {
			// An input request (res) is not for a task's wait.
			return nil, errStillWorking(t.s.svc.MaxWait().String())
		}
	}
	res, _, err := t.outcome(ctx, tg)
	if err != nil {
		return nil, err
	}
	res.Meta = mcp.Meta{MetaRelatedTask: map[string]any{"taskId": tg.state.ID}}
	return res, nil
}

// outcome is a decided task's result as elicit_result answers it (it
// consumes the request), with the request's id and the review link kept
// with it; tasks/result and tasks/get call it. An error only for a request
// that cannot be read (not found); the tool's own errors are isError
// results. failed says the result could not be produced for an internal
// failure (logged, and answered by the tool as "internal: …"), which
// fails a 2026-07-28 task.
func (t *tasks) outcome(ctx context.Context, tg target) (res *mcp.CallToolResult, failed bool, err error) {
	req, id := t.toolRequest(tg), tg.state.ID
	ctx = withCaller(ctx, req)
	out, err := t.s.resultOf(ctx, req, tg.principal, id)
	switch elicitation.CodeOf(err) {
	case elicitation.CodeNotFound:
		return nil, false, errNotFound
	case elicitation.CodeInternal:
		failed = true
	}
	var task *taskOutput
	if err == nil {
		task = &taskOutput{resultOutput: out, ElicitationID: id}
		if link, _ := t.s.keptLink(ctx, tg.principal, id); link != "" {
			task.ReviewURL = &link
		}
	}
	return t.s.toolResult(ctx, ToolResult, tg.principal, task, err), failed, nil
}

// callError maps what failed when a tasks method waited or read the
// result: a request not found is the specification's "Task not found", a
// full wait limit a task still working (the sentence says which limit and
// when to ask again), anything else internal.
func (t *tasks) callError(ctx context.Context, id string, err error) error {
	switch elicitation.CodeOf(err) {
	case elicitation.CodeNotFound:
		return errNotFound
	case elicitation.CodeBusy:
		return &jsonrpc.Error{Code: CodeStillWorking, Message: "task still working: " + elicitation.PublicMessage(err)}
	}
	if ctx.Err() == nil {
		t.s.log.WarnContext(ctx, "task call failed", "taskId", id, "err", err)
	}
	return errInternal
}

// toolRequest is the tools/call the task's wait and result run as: the
// request's own client's (same session, extra and era), so that they apply
// every rule the tools always apply.
func (t *tasks) toolRequest(tg target) *mcp.CallToolRequest {
	p := &mcp.CallToolParamsRaw{Meta: maps.Clone(mcp.Meta(tg.req.GetParams().GetMeta()))}
	if tg.f == eraCore {
		// What the call sends the client meanwhile (the host's form during
		// tasks/result) belongs to the task: the tool copies the key on.
		if p.Meta == nil {
			p.Meta = mcp.Meta{}
		}
		p.Meta[MetaRelatedTask] = map[string]any{"taskId": tg.state.ID}
	}
	ss, _ := tg.req.GetSession().(*mcp.ServerSession)
	return &mcp.CallToolRequest{Session: ss, Params: p, Extra: tg.req.GetExtra()}
}

// cancel withdraws the request (Service.Cancel, as elicit_cancel does):
// the review page then refuses it.
func (t *tasks) cancel(ctx context.Context, tg target) (mcp.Result, error) {
	var st elicitation.State
	var err error
	if tg.view.pending {
		st, err = t.s.svc.Cancel(ctx, tg.principal, tg.state.ID)
	}
	ended := errors.Is(err, elicitation.ErrConflict) || errors.Is(err, elicitation.ErrExpired)
	switch {
	case err != nil && !ended:
		return nil, t.readError(ctx, tg.state.ID, err)
	case tg.f == eraSessionless:
		return &ackResult{ResultType: "complete"}, nil // cooperative: nothing left to stop
	case !tg.view.pending:
		return nil, errInvalid("task %s is already %s: only a working task can be cancelled", tg.state.ID, tg.view.Status)
	case ended:
		return nil, errInvalid("task %s ended before it could be cancelled (the human answered, or it expired): call tasks/get", tg.state.ID)
	}
	return &taskResult{coreTask: t.coreTask(viewOf(st, tg.f))}, nil
}
