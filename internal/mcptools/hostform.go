package mcptools

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The host's own form (askInHost): where the deployment allows it
// (Options.HostForm), the agent asked for it when creating the request,
// the request may be decided in the host at all
// (elicitation.Service.HostFormRefusal) and the client declared form
// elicitation, the first elicit_await asks the host a form-mode
// elicitation of the request (askOnSession, or an input-required result): an approval's
// requestedSchema (or none) plus a comment field, a selection's options as
// the spec's single- or multi-select enum within its bounds plus a comment
// field. Accept submits, decline declines, cancel decides nothing. The
// answer goes through elicitation.Service.Submit with the review key kept
// sealed in the request (Payload.HostLink), under the same rules as the
// review page (schema, bounds, exactly once, first answer wins), Via
// elicitation.ViaHostForm; then the wait goes on as elicit_await's would.
//
// On a session (before 2026-07-28) elicit_await sends the elicitation/create
// itself, within its wait bound (askOnSession): the call waits while the
// host shows its form, and never longer than it would have waited for the
// page. When the bound elapses with the form still open, the request is
// cancelled (notifications/cancelled, sent by the SDK when the request's
// context ends), the await returns pending as at any bound, the review page
// stays open, and the host's late answer, if it sends one, matches no call
// and is dropped: nothing is decided from it. The form is shown once
// (RecordPush): the next elicit_await only waits. On 2026-07-28 the client
// answers in its retry, which carries the sealed request state: the
// request, the principal, its expiry and a nonce that names the
// submission, so a replayed answer is the retry it is, and an altered one
// is refused.
//
// A host that negotiated app-rendered elicitations (appelicit.go) is
// offered the same form without askInHost or Options.HostForm, naming the
// MCP App's page in its _meta, wherever the app may decide the request.

// Purposes of the host form's sealed values.
const (
	purposeHostKey   = "elicitation host form key v1"
	purposeHostState = "elicitation host form state v1"
)

// Names in the host form: the input request's key, and the form's fields
// (an approval's own field of the same name keeps it: the comment then
// goes under hostCommentAlt).
const (
	hostInputKey   = "hostForm"
	hostSelection  = "selection"
	hostComment    = "comment"
	hostCommentAlt = "reviewerComment"
)

// canAskInHost reports whether the client that sent req declared form
// elicitation and can be asked through an input-required result: on a
// session (the SDK turns it into elicitation/create) or on 2026-07-28.
func (s *Server) canAskInHost(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// elicitation: {} (2025-06-18) means form mode.
	if caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		return false
	}
	if eraOf(req.ProtocolVersion()) == eraSessionless {
		return true
	}
	return req.Session != nil && req.Session.ID() != ""
}

// hostFormPlan decides, at creation, whether the request may be decided in
// the host and whether its own form will ask: it returns the sealer of the
// review key (nil: never decided in the host), whether the form asks, and
// the sentence for the agent (empty when it did not ask).
func (s *Server) hostFormPlan(ctx context.Context, req *mcp.CallToolRequest, asked bool, reviewers []string, approvals int) (seal func(id, key string) string, ask bool, why string) {
	refusal := s.svc.HostFormRefusal(ctx, reviewers, approvals)
	if s.sealer != nil && refusal == "" {
		seal = func(id, key string) string {
			return s.sealer.Seal(hostKeyPurpose(id), []byte(key))
		}
	}
	if asked {
		switch {
		case !s.hostForm || s.sealer == nil:
			why = "not asked in the host: this server does not ask in hosts (setting host-form); give the reviewUrl to the human"
		case refusal != "":
			why = "not asked in the host: " + refusal
		case !s.canAskInHost(req):
			why = "not asked in the host: your host did not declare form elicitation; give the reviewUrl to the human"
		}
	}
	if !asked || why != "" {
		// The sealed key serves only the host: its form, or the MCP App.
		if !s.app {
			seal = nil
		}
		return seal, false, why
	}
	return seal, true, "asked in the host: the next elicit_await (for a task, its input request) shows the host's form; the reviewUrl stays open and the first answer wins"
}

// askOnSession shows the host's form on a session, as an elicitation/create
// of the call, and submits its answer; it returns the wait left. The form
// is open until formGrace before the end of bound: then its request is
// cancelled (the SDK sends notifications/cancelled and retires the call,
// so a late answer is dropped) and the wait goes on, on the page, for the
// rest of the bound, so that elicit_await returns pending at its bound as
// it would have without the form.
func (s *Server) askOnSession(ctx context.Context, req *mcp.CallToolRequest, id string, params *mcp.ElicitParams, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	fctx, cancel := context.WithTimeout(ctx, bound-formGrace(bound))
	defer cancel()
	if task, ok := req.Params.Meta[MetaRelatedTask]; ok {
		// The form shown during a task's tasks/result belongs to the task.
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta[MetaRelatedTask] = task
	}
	res, err := req.Session.Elicit(fctx, params)
	left := max(bound-time.Since(start), time.Nanosecond)
	switch {
	case err == nil:
		return left, s.submitHostAnswer(ctx, PrincipalOf(req.Extra), id, res, rand.Text())
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case fctx.Err() != nil:
		// The form's time is over with the form open: nothing is decided,
		// the page stays open.
		return left, nil
	}
	// The host failed its form, or answered outside it (the SDK checks the
	// answer against the form's schema): nothing is recorded. The SDK's
	// error for an answer outside the form quotes the answer, which may be
	// a secret: only a host's JSON-RPC error code is logged.
	var host *jsonrpc.Error
	if errors.As(err, &host) {
		s.log.Warn("host form not answered", "elicitationId", id, "why", "the host answered with an error", "code", host.Code)
	} else {
		s.log.Warn("host form not answered", "elicitationId", id, "why", "the answer did not fit the form, or the host could not be asked")
	}
	return 0, &elicitation.Error{Code: elicitation.CodeInvalidArgument, Field: "askInHost",
		Message: "the host did not answer its form with an answer the form allows; nothing was recorded and the request is still open: give the reviewUrl to the human"}
}

// formGrace is how long before the end of its wait bound a session's host
// form is cancelled: the SDK sends notifications/cancelled on the call's
// stream from a goroutine of its own, which must reach the stream before
// elicit_await's response closes it; meanwhile the wait goes on on the page.
func formGrace(bound time.Duration) time.Duration { return min(bound/2, time.Second) }

// submitHostAnswer submits the host's answer res through Service.Submit
// as a submission named by nonce. Cancel decides nothing; an answer to a
// request already decided, canceled or expired decides nothing either
// (the wait reports what the request is now).
func (s *Server) submitHostAnswer(ctx context.Context, principal, id string, res *mcp.ElicitResult, nonce string) error {
	if res.Action == "cancel" {
		// The person closed the form: nothing is decided, the page stays open.
		return nil
	}
	_, p, err := s.svc.HostForm(ctx, principal, id)
	if err != nil {
		return err
	}
	if why := s.svc.HostFormRefusal(ctx, p.Reviewers, 0); why != "" {
		// A form shown before sign-in was turned on: say so, not nothing.
		return &elicitation.Error{Code: elicitation.CodeForbidden, Message: "the answer given in the host was not recorded and the request is still open: " + why}
	}
	key, err := s.sealer.Open(hostKeyPurpose(id), p.HostLink)
	if err != nil {
		// The request's own sealed key, not the retry's state: a tool error.
		return badArg("requestState", "requestState is not one this server can use any more (its keys changed): call elicit_await again without it")
	}
	sub, err := hostSubmission(p, res, nonce)
	if err == nil {
		_, err = s.svc.Submit(ctx, id, string(key), sub)
	}
	switch elicitation.CodeOf(err) {
	case elicitation.CodeInvalidArgument:
		return badArg("inputResponses", "the answer given in the host was not recorded and the request is still open (the reviewUrl too): %s", elicitation.PublicMessage(err))
	case elicitation.CodeInternal:
		return err
	}
	// Decided, or refused because it was already decided, canceled or
	// expired: the wait reports what the request is now.
	return nil
}
