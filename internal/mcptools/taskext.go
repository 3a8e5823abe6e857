package mcptools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A 2026-07-28 task has one input request, reviewInput: the review link as
// a URL-mode elicitation. It is offered once per task (keys are never
// reused): once the host answers it, the task is working until the human
// decides.

// answeredRef names, in the audit trail, the host's answer to a task's
// review input request.
const answeredRef = "task input " + reviewInput

// getExt answers a 2026-07-28 tasks/get: the task, with the result inline
// once there is one (fetching it consumes and audits as the result tool
// does), or the review link as an input request while it waits.
func (t *tasks) getExt(ctx context.Context, tg target) (mcp.Result, error) {
	e := t.extTask(tg.view, "complete")
	switch {
	case tg.view.hasResult:
		// Every poll carries the result; only the first consumes the
		// request and audits the fetch.
		res, err := t.outcome(elicitation.WithRepeatRead(ctx), tg)
		if err != nil {
			return nil, err
		}
		// A 2026-07-28 result names its shape (the SDK adds it only to
		// the response it sends, not to a result inlined in another).
		e.Result, err = addFields(res, func(m map[string]json.RawMessage) error {
			m["resultType"] = json.RawMessage(`"complete"`)
			return nil
		})
		if err != nil {
			return nil, errInternal
		}
	case tg.view.pending:
		ir, err := t.inputRequest(ctx, tg)
		if err != nil {
			return nil, err
		}
		if ir != nil {
			e.Status, e.InputRequests = statusInputRequired, ir
			e.StatusMessage = "Waiting for a human: open the review link (the input request) for them, or give it to them; the task ends when they answer, or when the request expires at " + stamp(tg.state.ExpiresAt) + "."
		}
	}
	return e, nil
}

// inputRequest is the task's outstanding input request (nil if none): the
// review link, for a host that declared URL elicitation on this request,
// where a link is kept and the host has not answered it yet.
func (t *tasks) inputRequest(ctx context.Context, tg target) (json.RawMessage, error) {
	r, ok := tg.req.(versioned)
	if !ok {
		return nil, nil
	}
	caps := r.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return nil, nil
	}
	link, message := t.s.keptLink(ctx, tg.principal, tg.state.ID)
	if link == "" {
		return nil, nil
	}
	answered, err := t.answered(ctx, tg)
	if err != nil || answered {
		return nil, err
	}
	b, err := json.Marshal(mcp.InputRequestMap{reviewInput: urlElicitation(tg.state.ID, message, link)})
	if err != nil {
		return nil, errInternal
	}
	return b, nil
}

// answered reports whether the host already answered the task's review
// input request (recorded in the request's audit trail).
func (t *tasks) answered(ctx context.Context, tg target) (bool, error) {
	tr, err := t.s.svc.Audit(ctx, tg.principal, tg.state.ID)
	if err != nil {
		return false, t.readError(ctx, tg.state.ID, err)
	}
	return slices.ContainsFunc(tr.Entries, func(e elicitation.AuditEntry) bool {
		return e.Action == elicitation.ActionPushAnswered && e.Detail == answeredRef
	}), nil
}

// update takes a host's answers to a task's input requests. The answer to
// the review link says only what the host did with it (opened, declined,
// dismissed): the human's answer comes from the review page, so the task
// goes back to working whatever it is. An answer keyed to anything but an
// outstanding input request (answered already, the task ended meanwhile: a
// human quick on the link decides before the host reports, or a key this
// task never issued) is ignored and acknowledged, as the extension asks
// ("SHOULD ignore any inputResponses mapped to a key that is not currently
// outstanding ... including keys that were never issued").
func (t *tasks) update(ctx context.Context, tg target, inputs map[string]json.RawMessage) (mcp.Result, error) {
	if len(inputs) == 0 {
		return nil, errInvalid("tasks/update needs inputResponses, keyed by the inputRequests that tasks/get returned")
	}
	if _, ok := inputs[reviewInput]; !ok || !tg.view.pending {
		return &ackResult{ResultType: "complete"}, nil
	}
	ir, err := t.inputRequest(ctx, tg)
	if err != nil {
		return nil, err
	}
	if ir != nil {
		if _, err := t.s.svc.RecordPushAnswer(ctx, tg.principal, tg.state.ID, answeredRef); err != nil {
			return nil, t.readError(ctx, tg.state.ID, err)
		}
	}
	return &ackResult{ResultType: "complete"}, nil
}
