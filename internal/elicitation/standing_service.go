package elicitation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// RuleInput is what a reviewer asks for with an approval, to make it a
// standing approval (Submission.Rule).
type RuleInput struct {
	// ExpiresAt is when the rule stops deciding: after the decision, at
	// most the operator's StandingPolicy.MaxTTL later.
	ExpiresAt time.Time
	// MaxUses is how many later requests the rule may decide (1 to
	// MaxRuleUses).
	MaxUses int
	// Constraints hold chosen fields of the context to values; every one
	// must hold for the request decided now.
	Constraints []Constraint
	// Equal names fields of the context held to this request's own values
	// (EqualTo): what the review page sends.
	Equal [][]string
}

// Summary is the sentence that tells the reviewer, at now, what the
// standing approval in made with their approval (every surface says it
// so): how many later requests it may decide and for how long.
func (in RuleInput) Summary(now time.Time) string {
	return fmt.Sprintf("Later requests like this one are approved for you too: up to %d, for %s. See or revoke it in your inbox.",
		in.MaxUses, HumanDuration(in.ExpiresAt.Sub(now).Round(time.Minute)))
}

// HumanDuration is d as a reviewer reads it: "less than a minute",
// "1 minute", "25 minutes", "1 hour", "4 hours", "1 h 30 min".
func HumanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < 2*time.Minute:
		return "1 minute"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	h, m := int(d/time.Hour), int(d/time.Minute)%60
	if m == 0 {
		if h == 1 {
			return "1 hour"
		}
		return strconv.Itoa(h) + " hours"
	}
	return fmt.Sprintf("%d h %d min", h, m)
}

// ruleWith is the rule sub asks to make with its answer (nil: none),
// validated: sent by the signed-in reviewer of ctx on rec, and returns the
// rule it makes (not yet stored). The reviewer has passed
// ReviewerPolicy.MayDecide for rec (Submit's check) and answer is valid.
func (s *Service) ruleWith(ctx context.Context, rec Record, sub Submission, answer *Answer) (*Rule, error) {
	id, ok := IdentityFrom(ctx)
	switch {
	case sub.Rule == nil:
		return nil, nil
	case !s.signIn:
		return nil, invalid(ErrRuleNeedsSignIn, "rule", "standing approvals need reviewer sign-in, which this server does not have")
	case !ok:
		return nil, ErrNotSignedIn
	case sub.Decision != DecisionSubmitted:
		return nil, invalid(ErrRuleInvalid, "rule", "a standing approval is made with an approval, not with a decline")
	case rec.State.Quorum() > 1:
		return nil, &Error{Code: CodeForbidden, Kind: ErrRuleQuorum, Field: "rule",
			Message: fmt.Sprintf("this request needs %d approvals, and a standing approval decides alone; approve without it", rec.State.Quorum())}
	case rec.State.Kind == KindApproval && rec.Payload.Schema != nil:
		return nil, invalid(ErrRuleInvalid, "rule", "this request asks for a form to be filled, which a standing approval cannot do; approve without it")
	case len(sub.Rule.Constraints)+len(sub.Rule.Equal) > MaxRuleConstraints:
		// Counted before EqualTo reads each field from the context.
		return nil, tooManyConstraints(len(sub.Rule.Constraints) + len(sub.Rule.Equal))
	}
	now := s.now().UTC()
	r := Rule{
		ID: NewID(), By: id.Principal(), Author: authorOf(id), Principal: rec.State.Owner, Kind: rec.State.Kind,
		Constraints: sub.Rule.Constraints, From: rec.State.ID, CreatedAt: now, ExpiresAt: sub.Rule.ExpiresAt.UTC(), MaxUses: sub.Rule.MaxUses,
	}
	r.RetainUntil = r.ExpiresAt.Add(s.retention)
	r.Tool, _ = GateTool(rec.Payload.Context)
	r.Constraints = slices.Clone(r.Constraints)
	for _, path := range sub.Rule.Equal {
		c, err := EqualTo(rec.Payload.Context, path)
		if err != nil {
			return nil, err
		}
		r.Constraints = append(r.Constraints, c)
	}
	if r.Kind == KindSelection && answer != nil {
		r.SelectedIDs = slices.Clone(answer.SelectedIDs)
	}
	if err := s.checkRule(r, rec); err != nil {
		return nil, err
	}
	if err := s.roomForRule(ctx, r); err != nil {
		return nil, err
	}
	return &r, nil
}

// tooManyConstraints refuses a rule of n constraints, over MaxRuleConstraints.
func tooManyConstraints(n int) error {
	return invalid(ErrRuleInvalid, "rule.constraints", "a standing approval holds at most %d constraints, not %d", MaxRuleConstraints, n)
}

// roomForRule refuses a rule whose author already holds MaxRulesPerAuthor
// live ones (RoomForRule), read before anything is decided, so that the
// reviewer is refused before their answer counts; the store's CreateRule
// applies the same bound in its write, for two made at once.
func (s *Service) roomForRule(ctx context.Context, r Rule) error {
	rs, err := s.store.RulesBy(ctx, r.By)
	if err != nil {
		return fmt.Errorf("standing approval: %w", err)
	}
	return RoomForRule(rs, r)
}

// StandingMaxTTL is how long a standing approval may last at most; 0
// without reviewer sign-in, where none can be made.
func (s *Service) StandingMaxTTL() time.Duration {
	if !s.signIn {
		return 0
	}
	return s.standing.maxTTL()
}

// checkRule validates r's bounds and constraints, made from rec.
func (s *Service) checkRule(r Rule, rec Record) error {
	switch maxTTL := s.standing.maxTTL(); {
	case !r.ExpiresAt.After(r.CreatedAt):
		return invalid(ErrRuleInvalid, "rule.expiresAt", "the standing approval's expiry %s is not in the future", r.ExpiresAt.Format(time.RFC3339))
	case r.ExpiresAt.Sub(r.CreatedAt) > maxTTL:
		return invalid(ErrRuleInvalid, "rule.expiresAt", "a standing approval lasts at most %s on this server; choose a shorter time", maxTTL)
	case r.MaxUses < 1 || r.MaxUses > MaxRuleUses:
		return invalid(ErrRuleInvalid, "rule.maxUses", "a standing approval allows 1 to %d uses, not %d", MaxRuleUses, r.MaxUses)
	case len(r.Constraints) > MaxRuleConstraints:
		return tooManyConstraints(len(r.Constraints))
	}
	onArguments := false
	for i, c := range r.Constraints {
		if err := c.check(i); err != nil {
			return err
		}
		onArguments = onArguments || len(c.Path) > 1 && c.Path[0] == "arguments"
	}
	if r.Tool != "" && s.standing.RequireArgument && !onArguments {
		return invalid(ErrRuleNeedsArgument, "rule.constraints", "a standing approval of the tool %s must hold at least one of its arguments to a value on this server; choose an argument", truncate(r.Tool, 64))
	}
	if !r.Matches(rec.State.Owner, rec.State.Kind, rec.Payload) {
		return invalid(ErrRuleInvalid, "rule.constraints", "the standing approval's constraints do not hold for this request itself; choose values this request has")
	}
	return nil
}

// saveRule stores r (nil: none), made with the approval that left the
// request in state st, once that approval decided it, and records it in
// the trail of the request it was made from. A rule not stored is an
// ErrRuleNotSaved: the approval stands.
func (s *Service) saveRule(ctx context.Context, rule *Rule, st State) error {
	if rule == nil || st.Status != StatusSubmitted {
		return nil
	}
	r := *rule
	if err := s.store.CreateRule(ctx, r); err != nil {
		return fmt.Errorf("%w: %w", ErrRuleNotSaved, err)
	}
	e := AuditEntry{At: r.CreatedAt, Action: ActionRuleCreated, Principal: r.By, Issuer: r.Author.Issuer,
		Detail: fmt.Sprintf("rule %s: up to %d uses until %s", r.ID, r.MaxUses, r.ExpiresAt.Format(time.RFC3339))}
	if err := s.store.Append(ctx, r.From, e); err != nil {
		// A rule the trail does not name must not decide anything: take
		// it back (were that to fail too, the author's inbox lists it).
		if _, rerr := s.store.RevokeRule(ctx, r.By, r.ID, r.CreatedAt); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("%w: standing approval %s: %w", ErrRuleNotSaved, r.ID, err)
	}
	return nil
}

// byRule decides a new request at its creation if a standing approval
// matches it: the first live rule (soonest to expire) that matches, whose
// author may decide the request, and of which a use could be taken. It
// stores the request and its decision and reports true; false (nothing
// written) when no rule decides it. st and p are the request as create
// built it; entry its creation audit entry.
func (s *Service) byRule(ctx context.Context, st State, p Payload, entry AuditEntry, key string) (Created, bool, error) {
	if !s.signIn || st.Approvals > 1 || (st.Kind == KindApproval && p.Schema != nil) {
		return Created{}, false, nil
	}
	rules, err := s.store.RulesFor(ctx, st.Owner, st.Kind, st.CreatedAt)
	if err != nil {
		return Created{}, false, fmt.Errorf("create: standing approvals: %w", err)
	}
	slices.SortFunc(rules, func(a, b Rule) int { return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), strings.Compare(a.ID, b.ID)) })
	for _, r := range rules {
		if !r.LiveAt(st.CreatedAt) || !r.Matches(st.Owner, st.Kind, p) || s.policy.MayDecide(r.Author.Identity(), st.Owner, p.Reviewers) != nil {
			continue
		}
		used, err := s.store.UseRule(ctx, r, st.CreatedAt)
		switch {
		case errors.Is(err, ErrRuleSpent), errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return Created{}, false, fmt.Errorf("create: standing approval %s: %w", r.ID, err)
		}
		c, err := s.decideByRule(ctx, st, p, entry, key, used)
		return c, true, err
	}
	return Created{}, false, nil
}

// decideByRule stores the request st with payload p and lands r's decision
// on it: no notice is sent (nobody is asked), and the trail records the
// creation, then the decision by r's author through r.
func (s *Service) decideByRule(ctx context.Context, st State, p Payload, entry AuditEntry, key string, r Rule) (Created, error) {
	p.Scheduled = nil
	if err := s.storeNew(ctx, Request{State: st, Payload: p, MaxPending: s.maxPending}, entry); err != nil {
		return Created{}, err
	}
	t := Resolution{
		Status: StatusSubmitted, SubmissionID: "rule:" + r.ID, At: st.CreatedAt, By: r.By, Via: ViaRule, Issuer: r.Author.Issuer,
		Answer: &Answer{SelectedIDs: slices.Clone(r.SelectedIDs)}, Rule: r.ID,
		Detail: fmt.Sprintf("submitted by standing approval %s (use %d of %d)", r.ID, r.Uses, r.MaxUses),
	}
	decided, err := s.store.Resolve(ctx, st.ID, t)
	if err != nil {
		return Created{}, fmt.Errorf("create %s: decide by standing approval %s: %w", st.ID, r.ID, err)
	}
	return Created{State: s.derive(decided), ReviewKey: key}, nil
}

// Rules lists the standing approvals the signed-in reviewer of ctx made
// that the store still keeps, newest first.
func (s *Service) Rules(ctx context.Context) ([]Rule, error) {
	id, ok := IdentityFrom(ctx)
	if !s.signIn || !ok {
		return nil, ErrNotSignedIn
	}
	rs, err := s.store.RulesBy(ctx, id.Principal())
	if err != nil {
		return nil, fmt.Errorf("standing approvals: %w", err)
	}
	return rs, nil
}

// RevokeRule revokes the standing approval id the signed-in reviewer of
// ctx made: from then on it decides nothing, in every process. A rule of
// anyone else gives ErrNotFound.
func (s *Service) RevokeRule(ctx context.Context, id string) (Rule, error) {
	who, ok := IdentityFrom(ctx)
	if !s.signIn || !ok {
		return Rule{}, ErrNotSignedIn
	}
	r, err := s.store.RevokeRule(ctx, who.Principal(), id, s.now().UTC())
	if err != nil {
		return Rule{}, fmt.Errorf("revoke standing approval %s: %w", id, err)
	}
	return r, nil
}
