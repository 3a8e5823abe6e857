package elicitation

import (
	"context"
	"fmt"
)

// PushLink returns, for a request's owner, its state, its sealed push link
// (Payload.PushLink, empty when it may not be pushed) and its message.
func (s *Service) PushLink(ctx context.Context, principal, id string) (st State, link, message string, err error) {
	if st, err = s.owned(ctx, principal, id); err != nil {
		return State{}, "", "", err
	}
	rec, err := s.store.Load(ctx, id)
	if err != nil {
		return State{}, "", "", fmt.Errorf("read %s: %w", id, err)
	}
	return s.derive(st), rec.Payload.PushLink, rec.Payload.Message, nil
}

// RecordPush records, in the audit trail, that the review link of a
// pending request was pushed to principal's host (how: the means), unless
// one was already recorded for that principal: it reports whether this is
// the first, so that each principal's host is offered a request once. Two
// first pushes racing in the same instant may both be recorded (the trail
// shows it); every later one is refused.
func (s *Service) RecordPush(ctx context.Context, principal, id, how string) (bool, error) {
	return s.recordOnce(ctx, principal, id, AuditEntry{Action: ActionPushed, Detail: how}, func(e AuditEntry) bool {
		return e.Action == ActionPushed
	})
}

// RecordPushAnswer records that the host answered the push whose request
// state is named by ref (a digest, never the state itself), unless that
// state was already answered: it reports whether this is the first use,
// so that a request state is accepted once.
func (s *Service) RecordPushAnswer(ctx context.Context, principal, id, ref string) (bool, error) {
	return s.recordOnce(ctx, principal, id, AuditEntry{Action: ActionPushAnswered, Detail: ref}, func(e AuditEntry) bool {
		return e.Action == ActionPushAnswered && e.Detail == ref
	})
}

// recordOnce appends entry for principal unless an entry of principal
// matching seen is already in the trail.
func (s *Service) recordOnce(ctx context.Context, principal, id string, entry AuditEntry, seen func(AuditEntry) bool) (bool, error) {
	principal = orAnonymous(principal)
	if _, err := s.owned(ctx, principal, id); err != nil {
		return false, err
	}
	tr, err := s.store.Audit(ctx, id)
	if err != nil {
		return false, fmt.Errorf("read the audit of %s: %w", id, err)
	}
	for _, e := range tr.Entries {
		if e.Principal == principal && seen(e) {
			return false, nil
		}
	}
	entry.At, entry.Principal = s.now().UTC(), principal
	if err := s.store.Append(ctx, id, entry); err != nil {
		return false, fmt.Errorf("record %s of %s: %w", entry.Action, id, err)
	}
	return true, nil
}
