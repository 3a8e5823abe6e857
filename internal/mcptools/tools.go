package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The six tool names.
const (
	ToolApproval  = "elicit_approval"
	ToolSelection = "elicit_selection"
	ToolAwait     = "elicit_await"
	ToolStatus    = "elicit_status"
	ToolResult    = "elicit_result"
	ToolCancel    = "elicit_cancel"
)

// ToolNames lists the tools in the order the server registers them.
var ToolNames = []string{ToolApproval, ToolSelection, ToolAwait, ToolStatus, ToolResult, ToolCancel}

type tool struct {
	tool    *mcp.Tool
	handler mcp.ToolHandler
}

// call is one tool's work: it returns the structured output, or an error
// whose elicitation.Code becomes the tool error's first word.
type call func(ctx context.Context, req *mcp.CallToolRequest) (any, error)

// tools are the server's tools: the six, and with the MCP App its two.
func (s *Server) tools() []tool {
	ts := []tool{
		{&mcp.Tool{
			Name:  ToolApproval,
			Title: "Ask a human to approve (or fill a form)",
			Description: "Asks a human to approve a payload and/or fill a form on a review page, without blocking. " +
				"JSON mode: pass context (any JSON) to show read-only. Form mode: pass requestedSchema (a flat form). Both may be given. " +
				"Returns elicitationId, status pending, reviewUrl (give it to the human) and expiresAt. " +
				"Then call elicit_await until the status is not pending, and elicit_result for the decision (and formSubmission).",
			InputSchema:  approvalInputSchema,
			OutputSchema: createdOutputSchema,
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: new(false)},
		}, s.wrap(ToolApproval, s.creating(false))},
		{&mcp.Tool{
			Name:  ToolSelection,
			Title: "Ask a human to pick among options",
			Description: "Asks a human to pick between minSelections and maxSelections of the given options (default exactly one) on a review page, without blocking; " +
				"the reviewer may also decline (\"none of these, refine\"). " +
				"Returns elicitationId, status pending, reviewUrl (give it to the human) and expiresAt. " +
				"Then call elicit_await until the status is not pending, and elicit_result for the decision and selectedIds.",
			InputSchema:  selectionInputSchema,
			OutputSchema: createdOutputSchema,
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: new(false)},
		}, s.wrap(ToolSelection, s.creating(true))},
		{&mcp.Tool{
			Name:  ToolAwait,
			Title: "Wait for the human's answer",
			Description: "Waits until the request is no longer pending and returns its status, or returns pending when the wait bound elapses " +
				"(the server's bound, default 20 s, shortened by waitSeconds); then call it again. " +
				"Status submitted or declined: call elicit_result. canceled or expired: no answer will come.",
			InputSchema:  awaitInputSchema,
			OutputSchema: awaitOutputSchema,
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		}, s.wrap(ToolAwait, s.await)},
		{&mcp.Tool{
			Name:         ToolStatus,
			Title:        "Check a request's status",
			Description:  "Returns a request's status and expiresAt at once; never waits and never consumes the result. With includeAudit, also its audit trail.",
			InputSchema:  statusInputSchema,
			OutputSchema: statusOutputSchema,
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		}, s.wrap(ToolStatus, s.status)},
		{&mcp.Tool{
			Name:  ToolResult,
			Title: "Read the human's decision",
			Description: "Returns the decision of a decided request (submitted or declined), the context you sent, formSubmission (approval form values), selectedIds (selection), the reviewer's optional comment, decidedBy (the signed-in reviewer, null without sign-in) and decidedVia (page, app or host-form), " +
				"and marks it consumed. Reading it again returns the same answer. " +
				"Errors: not_decided while pending (call elicit_await), expired, canceled.",
			InputSchema:  idInputSchema,
			OutputSchema: resultOutputSchema,
			Annotations:  &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)},
		}, s.wrap(ToolResult, s.result)},
		{&mcp.Tool{
			Name:  ToolCancel,
			Title: "Withdraw a request",
			Description: "Cancels a pending request: the review page stops accepting answers and waiting elicit_await calls return canceled. " +
				"Errors: conflict if already decided, expired if it expired.",
			InputSchema:  idInputSchema,
			OutputSchema: cancelOutputSchema,
			Annotations:  &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
		}, s.wrap(ToolCancel, s.cancel)},
	}
	if !s.app {
		return ts
	}
	for _, t := range ts[:2] {
		// The creating tools (the first two) name the MCP App's page.
		t.tool.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": AppResourceURI}, legacyResourceURIMeta: AppResourceURI}
	}
	return append(ts,
		tool{&mcp.Tool{
			Name: ToolAppView, Title: "Show a request in the MCP App", Meta: appOnly,
			Description: "For the elicitation MCP App only: what the review page shows of a request, and a render token for elicit_app_decide.",
			InputSchema: idInputSchema, OutputSchema: appViewOutputSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		}, s.wrap(ToolAppView, s.appView)},
		tool{&mcp.Tool{
			Name: ToolAppDecide, Title: "Decide a request from the MCP App", Meta: appOnly,
			Description: "For the elicitation MCP App only: submits or declines with the render token elicit_app_view returned.",
			InputSchema: appDecideInputSchema, OutputSchema: appDecideOutputSchema, Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false)},
		}, s.wrap(ToolAppDecide, s.appDecide)})
}

// canWait reports whether the tool name can wait: elicit_await for the
// answer, the creating tools for a host asked in the call. The others
// (elicit_status, elicit_result, elicit_cancel) are one read or write of
// the store, answered at once, and run on the SDK's context: binding it to
// the HTTP request would cost more than the call (a cancel context and a
// callback a call, the most allocations of anything the call does here).
func canWait(name string) bool {
	return name != ToolStatus && name != ToolResult && name != ToolCancel
}

// AuditNoteMeta is the _meta key of a tool call's audit note: a short text
// recorded with the audit entries the call writes (creation, result
// fetches), such as the proxy's "gate=confirm tool=… digest=sha256:…"
// (elicitation.WithAuditNote).
const AuditNoteMeta = "elicitation/audit-note"

// wrap turns a call into a ToolHandler: it binds the context of a tool
// that can wait to the HTTP request (bind), returns the output as
// structured content and the same JSON as text, and turns errors into tool
// errors "code: sentence", but a JSON-RPC error, which refuses the request.
func (s *Server) wrap(name string, f call) mcp.ToolHandler {
	bound := canWait(name)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if bound {
			var done context.CancelFunc
			ctx, done = bind(ctx, s.httpRequest(req))
			defer done()
		}
		ctx = withCaller(ctx, req)
		out, err := f(ctx, req)
		var refused *jsonrpc.Error
		if errors.As(err, &refused) {
			// The request itself is refused (a requestState, rounds.go).
			return nil, refused
		}
		return s.toolResult(ctx, name, PrincipalOf(req.Extra), out, err), nil
	}
}

// withCaller carries in ctx what the call says of its caller: req's audit
// note (AuditNoteMeta), if any, and the person signed in with this
// deployment behind an OAuth token (PersonKey), whose answers in the host
// the Service then judges as the review page judges a signed-in reviewer.
func withCaller(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if note, ok := req.Params.Meta[AuditNoteMeta].(string); ok {
		ctx = elicitation.WithAuditNote(ctx, note)
	}
	if id, ok := personOf(req.GetExtra()); ok {
		ctx = elicitation.WithIdentity(ctx, id)
	}
	return ctx
}

// PersonKey is the auth.TokenInfo.Extra key of the person (an
// elicitation.Identity) an OAuth access token of this deployment names;
// internal/compose/mcpendpoint sets it.
const PersonKey = "person"

func personOf(extra *mcp.RequestExtra) (elicitation.Identity, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return elicitation.Identity{}, false
	}
	id, ok := extra.TokenInfo.Extra[PersonKey].(elicitation.Identity)
	return id, ok && id.Subject != "" && id.Principal() == extra.TokenInfo.UserID
}

// toolResult is a call's result: out as structured content and the same
// JSON as text, out itself where it is a result already (an input-required
// one, push.go), or the tool error for err.
func (s *Server) toolResult(ctx context.Context, name, principal string, out any, err error) *mcp.CallToolResult {
	if res, ok := out.(*mcp.CallToolResult); ok && err == nil {
		return res
	}
	if err == nil {
		var b []byte
		if b, err = json.Marshal(out); err == nil {
			var structured any = json.RawMessage(b)
			if c, ok := out.(createdOutput); ok {
				structured = c // the Tasks read the request it names
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
				StructuredContent: structured,
			}
		}
	}
	return s.toolError(ctx, name, principal, err)
}

// toolError is the isError result for err. Internal errors are logged and
// shown only as "internal: …".
func (s *Server) toolError(ctx context.Context, name, principal string, err error) *mcp.CallToolResult {
	code := elicitation.CodeOf(err)
	if code == elicitation.CodeInternal {
		level := slog.LevelError
		if ctx.Err() != nil {
			// The client went away or the invocation ran out of time.
			level = slog.LevelWarn
		}
		s.log.Log(ctx, level, "tool call failed", "tool", name, "principal", principal, "err", err)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(code) + ": " + elicitation.PublicMessage(err)}}}
}

type createdOutput struct {
	ElicitationID string             `json:"elicitationId"`
	Status        elicitation.Status `json:"status"`
	ReviewURL     string             `json:"reviewUrl"`
	ExpiresAt     string             `json:"expiresAt"`
	// HostForm answers askInHost: whether the host will be asked, or why not.
	HostForm string `json:"hostForm,omitempty"`
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// creating is the handler of a creating tool, elicit_selection's if
// selection, else elicit_approval's: the one shape of both. It fills in
// what the call's transport tells (the review link, the client, the push
// and host links), creates through the Service, answers with the creation
// result, then offers the push (afterCreated: to a session that can take
// it, never delaying or failing the creation).
func (s *Server) creating(selection bool) call {
	return func(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
		in, err := decodeCreate(req.Params.Arguments, selection)
		if err != nil {
			return nil, err
		}
		r := s.httpRequest(req)
		in.Notify.ReviewLink = func(id, key string) string { return s.reviewURL(r, id, key) }
		in.Client = clientOf(req)
		in.PushLink = s.pushLink(req, in.push)
		hostLink, ask, why := s.hostFormPlan(ctx, req, in.AskInHost, in.Reviewers, in.Approvals)
		in.HostLink, in.AskInHost = hostLink, ask
		c, err := s.svc.Create(ctx, PrincipalOf(req.Extra), in.kind, in.Input)
		if err != nil {
			return nil, err
		}
		u := s.reviewURL(r, c.State.ID, c.ReviewKey)
		s.log.DebugContext(ctx, "elicitation created", "elicitationId", c.State.ID, "kind", c.State.Kind, "principal", c.State.Owner)
		if s.onCreated != nil {
			s.onCreated(ctx, c.State.ID, u)
		}
		// A request a standing approval decided at once asks nobody: no push.
		// Nor does a host whose offer is its form (askInHost) or the app it
		// negotiated for app-rendered elicitations get the link pushed on its
		// session: a request is offered to a host once (RecordPush), and that
		// offer is made at the first elicit_await (hostFormOffer); the link is
		// in the form's message, the app and this result.
		hostOffer := hostLink != nil && (ask || s.appElicits(req))
		s.afterCreated(req, in.push && !hostOffer && c.State.Status == elicitation.StatusPending, c.State, in.Message, u)
		// Created pending, always (SPEC §3), even when a standing approval
		// decided it in the same step: the agent's next elicit_await answers
		// at once, and the agent sees no other difference.
		return createdOutput{ElicitationID: c.State.ID, Status: elicitation.StatusPending, ReviewURL: u, ExpiresAt: timestamp(c.State.ExpiresAt), HostForm: why}, nil
	}
}

// clientOf is the calling MCP client's self-description: the clientInfo of
// the session's initialize, or of a 2026-07-28 request's _meta.
func clientOf(req *mcp.CallToolRequest) elicitation.Client {
	if ci := req.ClientInfo(); ci != nil {
		return elicitation.Client{Name: ci.Name, Version: ci.Version}
	}
	return elicitation.Client{}
}

type statusOutput struct {
	Status elicitation.Status `json:"status"`
}

func (s *Server) await(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	a, err := parseArgs(req.Params.Arguments, awaitArgNames...)
	if err != nil {
		return nil, err
	}
	id, err := a.elicitationID()
	if err != nil {
		return nil, err
	}
	secs, given, err := a.number("waitSeconds", "a number of seconds greater than 0")
	if err != nil {
		return nil, err
	}
	if given && secs <= 0 {
		return nil, badArg("waitSeconds", "waitSeconds must be a number of seconds greater than 0; omit it to wait the server's full bound (%s)", s.svc.MaxWait())
	}
	wait := time.Duration(math.Min(secs, 1e6) * float64(time.Second))
	if given {
		// Below a nanosecond is the shortest wait, not "no waitSeconds".
		wait = max(wait, time.Nanosecond)
	}
	res, st, err := s.awaitID(ctx, req, id, wait)
	if err != nil || res != nil {
		return res, err
	}
	return statusOutput{Status: st.Status}, nil
}

// awaitID is elicit_await's wait for the request id, at most wait (0: the
// server's full bound), for req: the offers to its host, then the store's
// wait; res is an offer's result where the host is to answer first.
func (s *Server) awaitID(ctx context.Context, req *mcp.CallToolRequest, id string, wait time.Duration) (res *mcp.CallToolResult, st elicitation.State, err error) {
	// The slot is taken before the offers: a session's host form holds the
	// call (within the bound) as a wait does, and counts as one.
	release, err := s.waits.take(s.limitPrincipal(req.Extra))
	if err != nil {
		return nil, st, err
	}
	defer release()
	res, wait, err = s.awaitOffers(ctx, req, id, wait)
	if err != nil || res != nil {
		return res, st, err
	}
	st, err = s.svc.Await(ctx, PrincipalOf(req.Extra), id, wait)
	return nil, st, err
}

type statusExpiresOutput struct {
	Status    elicitation.Status `json:"status"`
	ExpiresAt string             `json:"expiresAt"`
	Audit     *auditOutput       `json:"audit,omitempty"`
}

type auditOutput struct {
	Entries []auditEntry               `json:"entries"`
	Omitted map[elicitation.Action]int `json:"omitted,omitempty"`
}

type auditEntry struct {
	At        string             `json:"at"`
	Action    elicitation.Action `json:"action"`
	Principal string             `json:"principal"`
	Detail    string             `json:"detail,omitempty"`
	Via       elicitation.Via    `json:"via,omitempty"`
}

func (s *Server) status(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	a, err := parseArgs(req.Params.Arguments, statusArgNames...)
	if err != nil {
		return nil, err
	}
	id, err := a.elicitationID()
	if err != nil {
		return nil, err
	}
	withAudit, err := a.boolean("includeAudit")
	if err != nil {
		return nil, err
	}
	st, err := s.svc.Status(ctx, PrincipalOf(req.Extra), id)
	if err != nil {
		return nil, err
	}
	out := statusExpiresOutput{Status: st.Status, ExpiresAt: timestamp(st.ExpiresAt)}
	if withAudit {
		tr, err := s.svc.Audit(ctx, PrincipalOf(req.Extra), id)
		if err != nil {
			return nil, err
		}
		out.Audit = &auditOutput{Entries: make([]auditEntry, len(tr.Entries)), Omitted: tr.Omitted}
		for i, e := range tr.Entries {
			out.Audit.Entries[i] = auditEntry{At: timestamp(e.At), Action: e.Action, Principal: e.Principal, Detail: e.Detail, Via: e.Via}
		}
	}
	return out, nil
}

func idArg(req *mcp.CallToolRequest) (string, error) {
	a, err := parseArgs(req.Params.Arguments, idArgNames...)
	if err != nil {
		return "", err
	}
	return a.elicitationID()
}

type resultOutput struct {
	Status         elicitation.Status   `json:"status"`
	Decision       elicitation.Decision `json:"decision"`
	Context        json.RawMessage      `json:"context"`
	FormSubmission json.RawMessage      `json:"formSubmission"`
	SelectedIDs    []string             `json:"selectedIds"`
	Comment        *string              `json:"comment"`
	DecidedBy      *string              `json:"decidedBy"`
	DecidedVia     elicitation.Via      `json:"decidedVia,omitempty"`
	// DecidedRule names the standing approval that decided (decidedVia rule).
	DecidedRule string   `json:"decidedRule,omitempty"`
	ApprovedBy  []string `json:"approvedBy,omitempty"`
	// Receipt is the signed approval receipt (internal/attest issues it;
	// package receipt verifies it), where the
	// deployment has signing keys.
	Receipt string `json:"receipt,omitempty"`
}

func (s *Server) result(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	id, err := idArg(req)
	if err != nil {
		return nil, err
	}
	return s.resultOf(ctx, req, PrincipalOf(req.Extra), id)
}

// resultOf is elicit_result's output for principal's request id, asked
// by req.
func (s *Server) resultOf(ctx context.Context, req *mcp.CallToolRequest, principal, id string) (resultOutput, error) {
	r, err := s.svc.Result(ctx, principal, id)
	if err != nil {
		return resultOutput{}, err
	}
	out := resultOutput{Status: r.State.Status, Decision: r.Decision, Context: r.Context, FormSubmission: r.Form, SelectedIDs: r.SelectedIDs,
		DecidedVia: r.State.DecidedVia, DecidedRule: r.State.DecidedRule, ApprovedBy: r.ApprovedBy}
	if r.Comment != "" {
		out.Comment = &r.Comment
	}
	if r.DecidedBy != "" {
		out.DecidedBy = &r.DecidedBy
	}
	if s.receipts != nil {
		if out.Receipt, err = s.receipts(s.httpRequest(req), attest.Outcome{Result: r, Trail: r.Trail}); err != nil {
			return resultOutput{}, fmt.Errorf("receipt of %s: %w", id, err)
		}
	}
	return out, nil
}

func (s *Server) cancel(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	id, err := idArg(req)
	if err != nil {
		return nil, err
	}
	st, err := s.svc.Cancel(ctx, PrincipalOf(req.Extra), id)
	if err != nil {
		return nil, err
	}
	if st.Status != elicitation.StatusCanceled {
		return nil, errors.New("cancel returned status " + string(st.Status))
	}
	return statusOutput{Status: st.Status}, nil
}
