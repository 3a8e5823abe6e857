package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// NewRule returns a live rule made at T0 by author for alice's approvals,
// lasting an hour, with uses uses.
func NewRule(author string, uses int) elicitation.Rule {
	return elicitation.Rule{
		ID: elicitation.NewID(), By: author, Author: elicitation.RuleAuthor{Subject: author, Email: author, EmailVerified: true, Groups: []string{"ops"}},
		Principal: "alice", Kind: elicitation.KindApproval, Tool: "deploy", From: elicitation.NewID(),
		Constraints: []elicitation.Constraint{{Path: []string{"arguments", "env"}, Op: elicitation.ConstraintEqual, Values: []json.RawMessage{json.RawMessage(`"staging"`)}}},
		CreatedAt:   T0, ExpiresAt: T0.Add(time.Hour), RetainUntil: T0.Add(8 * 24 * time.Hour), MaxUses: uses,
	}
}

// testRules: a rule written through one handle is read whole through the
// other; the candidates of a principal and kind are the live rules only; an
// author lists their own rules, newest first; a revoke or a use through one
// handle is seen at once through the other; a rule used up, expired or
// revoked is refused with ErrRuleSpent and not changed; a revoke by anyone
// but the author finds nothing.
func testRules(t *testing.T, open Factory) {
	ctx := ctxT(t)
	a, b := open(t)
	r1 := NewRule("rev@example.com", 2)
	r2 := NewRule("rev@example.com", 5)
	r2.CreatedAt = T0.Add(time.Minute)
	other := NewRule("other@example.com", 1)
	other.Principal = "bob"
	sel := NewRule("rev@example.com", 1)
	sel.Kind, sel.Tool, sel.SelectedIDs = elicitation.KindSelection, "", []string{"opt-1"}
	for _, r := range []elicitation.Rule{r1, r2, other, sel} {
		must(t, a.CreateRule(ctx, r))
	}
	if err := b.CreateRule(ctx, r1); !errors.Is(err, elicitation.ErrConflict) {
		t.Errorf("CreateRule of an existing id: %v, want ErrConflict", err)
	}
	got, err := b.RulesFor(ctx, "alice", elicitation.KindApproval, T0)
	must(t, err)
	if !sameRuleIDs(got, r1, r2) {
		t.Fatalf("RulesFor(alice, approval) = %v, want %s and %s", ruleIDs(got), r1.ID, r2.ID)
	}
	if i := slices.IndexFunc(got, func(r elicitation.Rule) bool { return r.ID == r1.ID }); !sameRule(got[i], r1) {
		t.Errorf("read back %+v, want %+v", got[i], r1)
	}
	mine, err := a.RulesBy(ctx, "rev@example.com")
	must(t, err)
	if ids := ruleIDs(mine); len(ids) != 3 || ids[0] != r2.ID {
		t.Errorf("RulesBy = %v, want three with %s (the newest) first", ids, r2.ID)
	}
	used, err := b.UseRule(ctx, r1, T0)
	must(t, err)
	if used.Uses != 1 {
		t.Errorf("after one use Uses = %d, want 1", used.Uses)
	}
	_, err = a.UseRule(ctx, r1, T0)
	must(t, err)
	if _, err := b.UseRule(ctx, r1, T0); !errors.Is(err, elicitation.ErrRuleSpent) {
		t.Errorf("a use past the last: %v, want ErrRuleSpent", err)
	}
	if _, err := a.UseRule(ctx, r2, r2.ExpiresAt); !errors.Is(err, elicitation.ErrRuleSpent) {
		t.Errorf("a use at the expiry: %v, want ErrRuleSpent", err)
	}
	if _, err := a.RevokeRule(ctx, "other@example.com", r2.ID, T0); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("a revoke by another reviewer: %v, want ErrNotFound", err)
	}
	rv, err := a.RevokeRule(ctx, "rev@example.com", r2.ID, T0.Add(time.Second))
	must(t, err)
	again, err := b.RevokeRule(ctx, "rev@example.com", r2.ID, T0.Add(time.Hour))
	must(t, err)
	if !rv.RevokedAt.Equal(T0.Add(time.Second)) || !again.RevokedAt.Equal(rv.RevokedAt) {
		t.Errorf("RevokedAt %v then %v, want the first revoke's %v both times", rv.RevokedAt, again.RevokedAt, T0.Add(time.Second))
	}
	if _, err := b.UseRule(ctx, r2, T0.Add(2*time.Second)); !errors.Is(err, elicitation.ErrRuleSpent) {
		t.Errorf("a use after the revoke: %v, want ErrRuleSpent", err)
	}
	if got, err := b.RulesFor(ctx, "alice", elicitation.KindApproval, T0.Add(2*time.Second)); err != nil || len(got) != 0 {
		t.Errorf("RulesFor after a use-up and a revoke = %v, %v; want none", ruleIDs(got), err)
	}
	if _, err := a.UseRule(ctx, NewRule("rev@example.com", 1), T0); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("a use of an unknown rule: %v, want ErrNotFound", err)
	}
	if got, _ := a.RulesFor(ctx, "alice", elicitation.KindSelection, T0); !sameRuleIDs(got, sel) {
		t.Errorf("RulesFor(alice, selection) = %v, want %s", ruleIDs(got), sel.ID)
	}
	testRuleLastUse(ctx, t, a, b)
	testRuleRoom(ctx, t, a, b)
	testDecidedRule(ctx, t, a, b)
}

// testRuleRoom: an author two short of MaxRulesPerAuthor live rules (a
// revoked, an expired and a used-up one beside them do not count) who
// makes many at once through both handles gets exactly two more; the rest
// are refused with ErrTooManyRules, and none of them is stored.
func testRuleRoom(ctx context.Context, t *testing.T, a, b elicitation.Store) {
	const author = "room@example.com"
	at := T0.Add(time.Minute)
	for i := range elicitation.MaxRulesPerAuthor - 2 {
		must(t, []elicitation.Store{a, b}[i%2].CreateRule(ctx, NewRule(author, 2)))
	}
	// Each made at T0 while the others no longer count there.
	revoked, spent, expired := NewRule(author, 1), NewRule(author, 1), NewRule(author, 1)
	must(t, a.CreateRule(ctx, revoked))
	_, err := b.RevokeRule(ctx, author, revoked.ID, T0)
	must(t, err)
	must(t, a.CreateRule(ctx, spent))
	_, err = b.UseRule(ctx, spent, T0)
	must(t, err)
	expired.ExpiresAt = at
	must(t, a.CreateRule(ctx, expired))
	made := make([]elicitation.Rule, 8)
	won := wins(t, "CreateRule", race(len(made), a, b, func(i int, h elicitation.Store) error {
		made[i] = NewRule(author, 1)
		made[i].CreatedAt = at
		return h.CreateRule(ctx, made[i])
	}), elicitation.ErrTooManyRules)
	if won != 2 {
		t.Errorf("%d concurrent rules landed for an author two short of %d live, want exactly 2", won, elicitation.MaxRulesPerAuthor)
	}
	// No rule of the author's has an id a store keys its own items with.
	if _, err := b.RevokeRule(ctx, author, "#seq", at); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("a revoke of id #seq: %v, want ErrNotFound", err)
	}
	mine, err := a.RulesBy(ctx, author)
	must(t, err)
	live := 0
	for _, r := range mine {
		if r.LiveAt(at) {
			live++
		}
	}
	if len(mine) != elicitation.MaxRulesPerAuthor+3 || live != elicitation.MaxRulesPerAuthor {
		t.Errorf("the author keeps %d rules, %d live at the race; want %d, %d (the three spent kept, the refused ones not stored)", len(mine), live, elicitation.MaxRulesPerAuthor+3, elicitation.MaxRulesPerAuthor)
	}
}

// testRuleLastUse: of many concurrent uses through both handles, exactly
// as many as the rule allows land.
func testRuleLastUse(ctx context.Context, t *testing.T, a, b elicitation.Store) {
	r := NewRule("race@example.com", 3)
	must(t, a.CreateRule(ctx, r))
	won := wins(t, "UseRule", race(16, a, b, func(_ int, h elicitation.Store) error {
		_, err := h.UseRule(ctx, r, T0)
		return err
	}), elicitation.ErrRuleSpent)
	if won != 3 {
		t.Errorf("%d concurrent uses landed, want exactly the rule's 3", won)
	}
}

// testDecidedRule: the rule that decided a request is kept with its state.
func testDecidedRule(ctx context.Context, t *testing.T, a, b elicitation.Store) {
	r := NewApproval(t, time.Hour)
	mustCreate(t, a, r)
	mustResolve(ctx, t, a, r.State.ID, elicitation.Resolution{Status: elicitation.StatusSubmitted, SubmissionID: "rule:x", At: T0, By: "rev@example.com", Via: elicitation.ViaRule, Rule: "rule-1", Answer: &elicitation.Answer{}})
	st, err := b.State(ctx, r.State.ID)
	must(t, err)
	if st.DecidedRule != "rule-1" || st.DecidedVia != elicitation.ViaRule {
		t.Errorf("decided by a rule: DecidedRule %q, DecidedVia %q; want rule-1, rule", st.DecidedRule, st.DecidedVia)
	}
}

func ruleIDs(rs []elicitation.Rule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func sameRuleIDs(got []elicitation.Rule, want ...elicitation.Rule) bool {
	g, w := ruleIDs(got), ruleIDs(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func sameRule(got, want elicitation.Rule) bool {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return string(g) == string(w)
}
