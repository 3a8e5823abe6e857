package mcptools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A 2026-07-28 task has at most one input request at a time, its offer:
// the host's own form (hostInputKey) where the request asked for it and
// this host may be asked (hostFormOffer: the same rules as elicit_await's),
// else the review link as a URL-mode elicitation (reviewInput) to a host
// that declared URL elicitation. Each is offered once per task (keys are
// never reused): once the host answers it, the task is working until the
// human decides (on the page, or in the host's form just answered).

// answeredRef names, in the audit trail, the host's answer to a task's
// input request under key.
func answeredRef(key string) string { return "task input " + key }

// getExt answers a 2026-07-28 tasks/get: the task, with the result inline
// once there is one (fetching it consumes and audits as the result tool
// does), or the review link as an input request while it waits. A result
// that could not be produced for an internal failure fails the task, with
// the error inline and no result, as the extension asks of protocol-level
// errors.
func (t *tasks) getExt(ctx context.Context, tg target) (mcp.Result, error) {
	e := t.extTask(tg.view, "complete")
	switch {
	case tg.view.hasResult:
		// Every poll carries the result; only the first consumes the
		// request and audits the fetch.
		res, failed, err := t.outcome(elicitation.WithRepeatRead(ctx), tg)
		if err != nil {
			return nil, err
		}
		if failed {
			e.Status, e.Error = statusFailed, taskFailed
			e.StatusMessage = "This server could not produce the task's result (an internal failure, logged on the server). The request is kept until its retention ends: elicit_result with this taskId, which is its elicitationId, may return the answer once the server is well."
			break
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
			if e.InputRequests, err = json.Marshal(ir); err != nil {
				return nil, errInternal
			}
			e.Status = statusInputRequired
			e.StatusMessage = "Waiting for a human: open the review link (the input request) for them, or give it to them; the task ends when they answer, or when the request expires at " + stamp(tg.state.ExpiresAt) + "."
			if _, form := ir[hostInputKey]; form {
				e.StatusMessage = "Waiting for the person at your host: show them the form (the input request) and send their answer with tasks/update; the review link stays open until the request expires at " + stamp(tg.state.ExpiresAt) + ", and the first answer wins."
			}
		}
	}
	return e, nil
}

// inputRequest is the task's outstanding input request (nil if none):
// its offer (taskOffer), if the host has not answered it yet.
func (t *tasks) inputRequest(ctx context.Context, tg target) (mcp.InputRequestMap, error) {
	o, err := t.taskOffer(ctx, tg)
	if err != nil {
		// Never the store's text: its own sentence, else internal (logged).
		return nil, t.readError(ctx, tg.state.ID, err)
	}
	if o == nil {
		return nil, nil
	}
	answered, err := t.answered(ctx, tg, o.key)
	if err != nil || answered {
		return nil, err
	}
	return mcp.InputRequestMap{o.key: o.params}, nil
}

// taskOffer is what the task offers its host while the request is pending
// (nil if nothing): the host's form, else the review link.
func (t *tasks) taskOffer(ctx context.Context, tg target) (*offer, error) {
	o, err := t.s.hostFormOffer(ctx, t.toolRequest(tg), tg.state.ID)
	if o != nil || err != nil {
		return o, err
	}
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
	return &offer{key: reviewInput, params: urlElicitation(tg.state.ID, message, link)}, nil
}

// answered reports whether the host already answered the task's input
// request under key (recorded in the request's audit trail).
func (t *tasks) answered(ctx context.Context, tg target, key string) (bool, error) {
	tr, err := t.s.svc.Audit(ctx, tg.principal, tg.state.ID)
	if err != nil {
		return false, t.readError(ctx, tg.state.ID, err)
	}
	return slices.ContainsFunc(tr.Entries, func(e elicitation.AuditEntry) bool {
		return e.Action == elicitation.ActionPushAnswered && e.Detail == answeredRef(key)
	}), nil
}

// update takes a host's answer to a task's outstanding input request. The
// answer to the review link says only what the host did with it (opened,
// declined, dismissed): the human's answer comes from the review page, so
// the task goes back to working whatever it is (an answer that is none,
// not an object with action accept, decline or cancel, is refused and
// retires nothing). The answer to the host's
// form is submitted as the review page would submit it (submitHostAnswer:
// the request's schema, bounds and reviewers' rules); an answer the form
// does not allow is refused with the reason and leaves the form
// outstanding. An answer keyed to anything but the outstanding input
// request (answered already, the task ended meanwhile: a human quick on
// the link decides before the host reports, or a key this task never
// issued) is ignored and acknowledged, as the extension asks ("SHOULD
// ignore any inputResponses mapped to a key that is not currently
// outstanding ... including keys that were never issued").
func (t *tasks) update(ctx context.Context, tg target, inputs map[string]json.RawMessage) (mcp.Result, error) {
	ack := &ackResult{ResultType: "complete"}
	if len(inputs) == 0 {
		return nil, errInvalid("tasks/update needs inputResponses, keyed by the inputRequests that tasks/get returned")
	}
	if !tg.view.pending {
		return ack, nil
	}
	ir, err := t.inputRequest(ctx, tg)
	if err != nil {
		return nil, err
	}
	for key := range ir {
		raw, ok := inputs[key]
		if !ok {
			return ack, nil
		}
		if key == hostInputKey {
			if err := t.submitForm(ctx, tg, raw); err != nil {
				return nil, err
			}
		} else if !linkAnswer(raw) {
			return nil, errInvalid("inputResponses.%s must be the host's answer to the link: an object with action accept, decline or cancel", key)
		}
		if _, err := t.s.svc.RecordPushAnswer(ctx, tg.principal, tg.state.ID, answeredRef(key)); err != nil {
			return nil, t.readError(ctx, tg.state.ID, err)
		}
	}
	return ack, nil
}

// linkAnswer reports whether raw is an answer to the review link (a
// URL-mode elicitation's result): an object whose action is accept,
// decline or cancel.
func linkAnswer(raw json.RawMessage) bool {
	var res mcp.ElicitResult
	return json.Unmarshal(raw, &res) == nil && linkAction(res.Action)
}

// submitForm submits the host's answer to the task's form, as one
// submission per task: a second update is not outstanding any more.
func (t *tasks) submitForm(ctx context.Context, tg target, raw json.RawMessage) error {
	var res mcp.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil || res.Action == "" {
		return errInvalid("inputResponses.%s must be the answer to the form: an object with action (accept, decline or cancel) and, to accept, content", hostInputKey)
	}
	err := t.s.submitHostAnswer(ctx, tg.principal, tg.state.ID, &res, "task "+tg.state.ID)
	switch elicitation.CodeOf(err) {
	case "":
		return nil
	case elicitation.CodeInvalidArgument, elicitation.CodeForbidden:
		return errInvalid("%s", elicitation.PublicMessage(err))
	}
	return t.readError(ctx, tg.state.ID, err)
}
