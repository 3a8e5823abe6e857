package elicitation

import (
	"cmp"
	"context"
	"fmt"
	"strings"
)

// PushLink returns, for a request's owner, its state, its sealed push link
// (Payload.PushLink, empty when it may not be pushed) and its message.
func (s *Service) PushLink(ctx context.Context, principal, id string) (st State, link, message string, err error) {
	st, p, err := s.HostForm(ctx, principal, id)
	return st, p.PushLink, p.Message, err
}

// RecordPush records, in the audit trail, that the review link of a
// pending request was pushed to principal's host (how: the means), unless
// one was already recorded for that principal: it reports whether this is
// the first, so that each principal's host is offered a request at most
// once, however it is pushed (on a session or in an input-required
// result). The store decides it (Store.AppendOnce): of any number of first
// pushes racing, in any processes, exactly one is recorded and told true.
func (s *Service) RecordPush(ctx context.Context, principal, id, how string) (bool, error) {
	return s.recordOnce(ctx, principal, id, AuditEntry{Action: ActionPushed, Detail: how}, "")
}

// RecordPushAnswer records that the host answered the push whose request
// state is named by ref (a digest, never the state itself), unless that
// state was already answered: it reports whether this is the first use,
// so that a request state is accepted once, even when two retries carrying
// it race.
func (s *Service) RecordPushAnswer(ctx context.Context, principal, id, ref string) (bool, error) {
	return s.recordOnce(ctx, principal, id, AuditEntry{Action: ActionPushAnswered, Detail: ref}, ref)
}

// recordOnce appends entry for principal unless its mark (the action, the
// principal and ref) is already recorded for the request.
func (s *Service) recordOnce(ctx context.Context, principal, id string, entry AuditEntry, ref string) (bool, error) {
	principal = cmp.Or(principal, Anonymous)
	if _, err := s.owned(ctx, principal, id); err != nil {
		return false, err
	}
	entry.At, entry.Principal = s.now().UTC(), principal
	first, err := s.store.AppendOnce(ctx, id, onceMark(entry.Action, principal, ref), entry)
	if err != nil {
		return false, fmt.Errorf("record %s of %s: %w", entry.Action, id, err)
	}
	return first, nil
}

// onceMark is the AppendOnce mark of action by principal (on ref, when the
// action is once per ref). Each part is length-prefixed, so no two
// different triples share a mark.
func onceMark(action Action, principal, ref string) string {
	var b strings.Builder
	for _, p := range []string{string(action), principal, ref} {
		fmt.Fprintf(&b, "%d:%s", len(p), p)
	}
	return b.String()
}

// seal returns the sealed push and host links of a request ("" for none).
func (l links) seal(id, key string) (push, host string) {
	if l.push != nil {
		push = l.push(id, key)
	}
	if l.host != nil {
		host = l.host(id, key)
	}
	return push, host
}

// HostFormRefusal says why a request may not be decided in the agent's
// host (its own form, the MCP App), or "" when it may. Where reviewers
// sign in, only a person signed in with this deployment (an OAuth token's
// identity in ctx) may answer in the host, and Submit then judges them as
// the review page does (named reviewers, groups, quorums, the owner bar);
// elsewhere the host cannot say who answers, so requests that name their
// reviewers or need several approvals are the page's.
func (s *Service) HostFormRefusal(ctx context.Context, reviewers []string, approvals int) string {
	_, person := IdentityFrom(ctx)
	switch {
	case s.signIn && person:
		return ""
	case s.signIn:
		return "this server signs reviewers in, and the host cannot say who answers: open the review link instead"
	case len(reviewers) > 0:
		return "this request names its reviewers, and the host cannot say who answers: open the review link instead"
	case approvals > 1:
		return "this request needs several approvals, which only the review page counts: open the review link instead"
	}
	return ""
}

// HostForm returns, for a request's owner, its state and its payload,
// which the MCP adapter turns into the host's own form (Payload.HostLink
// names the link whose key submits its answer).
func (s *Service) HostForm(ctx context.Context, principal, id string) (State, Payload, error) {
	st, err := s.owned(ctx, principal, id)
	if err != nil {
		return State{}, Payload{}, err
	}
	rec, err := s.store.Load(ctx, id)
	if err != nil {
		return State{}, Payload{}, fmt.Errorf("read %s: %w", id, err)
	}
	return s.derive(st), rec.Payload, nil
}
