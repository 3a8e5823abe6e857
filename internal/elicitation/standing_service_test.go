package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// standing is a Service with sign-in over an embedded store, its clock and
// its store, for the standing approvals' tests.
type standing struct {
	svc   *elicitation.Service
	clock *testclock.Clock
	store *boltstore.Store
}

func newStanding(t testing.TB, pol elicitation.ReviewerPolicy, sp elicitation.StandingPolicy) standing {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	return standing{elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: true, Policy: pol, Standing: sp}), c, st}
}

// gateCall is an approval as the proxy's gate asks it: the tool deploy to env.
func gateCall(env string, reviewers ...string) elicitation.Input {
	return elicitation.Input{Message: "Allow deploy?", Reviewers: reviewers,
		Context: json.RawMessage(`{"tool":"deploy","arguments":{"env":"` + env + `","replicas":2},"argumentsDigest":"sha256:` + env + `"}`)}
}

func (s standing) create(t *testing.T, principal string, in elicitation.Input) elicitation.State {
	t.Helper()
	c, err := s.svc.Create(context.Background(), principal, elicitation.KindApproval, in)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return c.State
}

// approveWith approves id as the reviewer of ctx, with rule.
func (s standing) approveWith(ctx context.Context, id string, rule *elicitation.RuleInput) error {
	_, err := s.svc.Submit(ctx, id, elicitation.NoKey, elicitation.Submission{ID: "sub-" + id, Decision: elicitation.DecisionSubmitted, Rule: rule})
	return err
}

func onEnv(t *testing.T, env string) []elicitation.Constraint {
	c, err := elicitation.EqualTo(json.RawMessage(`{"arguments":{"env":"`+env+`"}}`), []string{"arguments", "env"})
	if err != nil {
		t.Fatal(err)
	}
	return []elicitation.Constraint{c}
}

func TestStandingApprovalDecidesLikeCalls(t *testing.T) {
	t.Parallel()
	s := newStanding(t, elicitation.ReviewerPolicy{BarOwner: true}, elicitation.StandingPolicy{RequireArgument: true})
	rev := signedIn("rev@example.com")
	first := s.create(t, "agent", gateCall("staging"))
	in := &elicitation.RuleInput{ExpiresAt: s.clock.Now().Add(time.Hour), MaxUses: 2, Constraints: onEnv(t, "staging")}
	if err := s.approveWith(rev, first.ID, in); err != nil {
		t.Fatalf("approve with a rule: %v", err)
	}
	rules, err := s.svc.Rules(rev)
	if err != nil || len(rules) != 1 {
		t.Fatalf("Rules = %v, %v; want the one made", rules, err)
	}
	rule := rules[0]
	if rule.Principal != "agent" || rule.Tool != "deploy" || rule.By != "rev@example.com" || rule.From != first.ID {
		t.Errorf("rule %+v: want agent's deploy calls, by rev@example.com, from %s", rule, first.ID)
	}
	tr, _ := s.svc.OperatorAudit(context.Background(), first.ID)
	if last := tr.Entries[len(tr.Entries)-1]; last.Action != elicitation.ActionRuleCreated || !strings.Contains(last.Detail, rule.ID) {
		t.Errorf("the first request's trail ends with %+v, want the rule's creation", last)
	}

	// A like call is decided at its creation, by the rule, in rev's name.
	s.clock.Add(time.Minute)
	next := s.create(t, "agent", gateCall("staging"))
	if next.Status != elicitation.StatusSubmitted || next.DecidedVia != elicitation.ViaRule || next.DecidedRule != rule.ID || next.DecidedBy != "rev@example.com" {
		t.Fatalf("the next like call: %+v; want submitted via rule %s by rev@example.com", next, rule.ID)
	}
	res, err := s.svc.Result(context.Background(), "agent", next.ID)
	if err != nil || res.DecidedBy != "rev@example.com" || res.State.DecidedRule != rule.ID || res.Decision != elicitation.DecisionSubmitted {
		t.Errorf("Result = %+v, %v; want submitted by rev@example.com through %s", res, err, rule.ID)
	}
	decided := res.Trail.Entries[1]
	if decided.Action != elicitation.ActionDecided || decided.Via != elicitation.ViaRule || !strings.Contains(decided.Detail, rule.ID) || decided.Principal != "rev@example.com" {
		t.Errorf("the trail's decision %+v: want decided via rule, naming %s", decided, rule.ID)
	}
	if _, err := elicitation.VerifyAudit(next.ID, res.Trail.Entries); err != nil {
		t.Errorf("the decided trail does not verify: %v", err)
	}

	// One field different: asked of a human.
	if other := s.create(t, "agent", gateCall("production")); other.Status != elicitation.StatusPending {
		t.Errorf("a call to production: %s, want pending", other.Status)
	}
	// Another principal: asked of a human.
	if other := s.create(t, "other-agent", gateCall("staging")); other.Status != elicitation.StatusPending {
		t.Errorf("another agent's call: %s, want pending", other.Status)
	}
	// The second and last use, then none.
	if again := s.create(t, "agent", gateCall("staging")); again.Status != elicitation.StatusSubmitted {
		t.Errorf("the second use: %s, want submitted", again.Status)
	}
	if spent := s.create(t, "agent", gateCall("staging")); spent.Status != elicitation.StatusPending {
		t.Errorf("past the uses: %s, want pending", spent.Status)
	}
}

func TestStandingApprovalRevokedAndExpired(t *testing.T) {
	t.Parallel()
	s := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{})
	rev := signedIn("rev@example.com")
	make1 := func(d time.Duration) elicitation.Rule {
		first := s.create(t, "agent", gateCall("staging"))
		if err := s.approveWith(rev, first.ID, &elicitation.RuleInput{ExpiresAt: s.clock.Now().Add(d), MaxUses: 10, Constraints: onEnv(t, "staging")}); err != nil {
			t.Fatal(err)
		}
		rs, _ := s.svc.Rules(rev)
		return rs[0]
	}
	r := make1(time.Hour)
	if _, err := s.svc.RevokeRule(signedIn("other@example.com"), r.ID); !errors.Is(err, elicitation.ErrNotFound) {
		t.Errorf("a revoke by someone else: %v, want not found", err)
	}
	if _, err := s.svc.RevokeRule(rev, r.ID); err != nil {
		t.Fatal(err)
	}
	if st := s.create(t, "agent", gateCall("staging")); st.Status != elicitation.StatusPending {
		t.Errorf("after the revoke: %s, want pending", st.Status)
	}
	make1(10 * time.Minute)
	s.clock.Add(10 * time.Minute)
	if st := s.create(t, "agent", gateCall("staging")); st.Status != elicitation.StatusPending {
		t.Errorf("at the rule's expiry: %s, want pending", st.Status)
	}
}

func TestStandingApprovalOnlyWhereTheAuthorMayDecide(t *testing.T) {
	t.Parallel()
	s := newStanding(t, elicitation.ReviewerPolicy{BarOwner: true}, elicitation.StandingPolicy{})
	rev := signedIn("rev@example.com", "ops")
	c, err := s.svc.Create(context.Background(), "agent", elicitation.KindApproval, gateCall("staging", "group:ops"))
	if err != nil {
		t.Fatal(err)
	}
	first := c.State
	in := &elicitation.RuleInput{ExpiresAt: s.clock.Now().Add(time.Hour), MaxUses: 5, Constraints: onEnv(t, "staging")}

	// Someone who may not decide (with the review link): refused, no
	// rule, nothing decided.
	_, err = s.svc.Submit(signedIn("stranger@example.com"), first.ID, c.ReviewKey, elicitation.Submission{ID: "s1", Decision: elicitation.DecisionSubmitted, Rule: in})
	if elicitation.CodeOf(err) != elicitation.CodeForbidden {
		t.Errorf("a rule by a stranger: %v, want forbidden", err)
	}
	if rs, _ := s.svc.Rules(signedIn("stranger@example.com")); len(rs) != 0 {
		t.Errorf("the stranger holds %d rules, want none", len(rs))
	}
	if st, _ := s.svc.Status(context.Background(), "agent", first.ID); st.Status != elicitation.StatusPending {
		t.Errorf("the request is %s, want still pending", st.Status)
	}

	if err := s.approveWith(rev, first.ID, in); err != nil {
		t.Fatal(err)
	}
	// The author is in group ops: a request naming other reviewers, or one
	// with a quorum, is not theirs to decide alone.
	if st := s.create(t, "agent", gateCall("staging", "carol@example.com")); st.Status != elicitation.StatusPending {
		t.Errorf("a request naming carol only: %s, want pending", st.Status)
	}
	quorum := gateCall("staging", "group:ops")
	quorum.Approvals = 2
	if st := s.create(t, "agent", quorum); st.Status != elicitation.StatusPending {
		t.Errorf("a request needing two approvals: %s, want pending", st.Status)
	}
	if st := s.create(t, "agent", gateCall("staging", "group:ops")); st.Status != elicitation.StatusSubmitted {
		t.Errorf("a request the author may decide: %s, want submitted", st.Status)
	}
	// A quorum request cannot make a rule.
	q := s.create(t, "agent", quorum)
	if err := s.approveWith(rev, q.ID, in); !errors.Is(err, elicitation.ErrRuleQuorum) {
		t.Errorf("a rule from a quorum request: %v, want ErrRuleQuorum", err)
	}
}

func TestStandingApprovalBadInput(t *testing.T) {
	t.Parallel()
	s := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{RequireArgument: true})
	rev := signedIn("rev@example.com")
	now := s.clock.Now()
	tool := []elicitation.Constraint{{Path: []string{"tool"}, Op: elicitation.ConstraintEqual, Values: []json.RawMessage{json.RawMessage(`"deploy"`)}}}
	for _, tc := range []struct {
		name string
		in   elicitation.RuleInput
		kind error
		says string
	}{
		{"no argument constrained", elicitation.RuleInput{ExpiresAt: now.Add(time.Hour), MaxUses: 1, Constraints: tool}, elicitation.ErrRuleNeedsArgument, "must hold at least one of its arguments"},
		{"expiry in the past", elicitation.RuleInput{ExpiresAt: now.Add(-time.Minute), MaxUses: 1, Constraints: onEnv(t, "staging")}, elicitation.ErrRuleInvalid, "not in the future"},
		{"expiry beyond the cap", elicitation.RuleInput{ExpiresAt: now.Add(25 * time.Hour), MaxUses: 1, Constraints: onEnv(t, "staging")}, elicitation.ErrRuleInvalid, "at most 24h0m0s"},
		{"no use", elicitation.RuleInput{ExpiresAt: now.Add(time.Hour), MaxUses: 0, Constraints: onEnv(t, "staging")}, elicitation.ErrRuleInvalid, "1 to 1000 uses, not 0"},
		{"a constraint this request fails", elicitation.RuleInput{ExpiresAt: now.Add(time.Hour), MaxUses: 1, Constraints: onEnv(t, "production")}, elicitation.ErrRuleInvalid, "do not hold for this request"},
		{"a bad constraint", elicitation.RuleInput{ExpiresAt: now.Add(time.Hour), MaxUses: 1, Constraints: []elicitation.Constraint{{Path: []string{"arguments", "env"}, Op: "like"}}}, elicitation.ErrRuleInvalid, "not one of equal"},
	} {
		first := s.create(t, "agent", gateCall("staging"))
		err := s.approveWith(rev, first.ID, &tc.in)
		if !errors.Is(err, tc.kind) || !strings.Contains(elicitation.PublicMessage(err), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.kind, tc.says)
		}
		if st, _ := s.svc.Status(context.Background(), "agent", first.ID); st.Status != elicitation.StatusPending {
			t.Errorf("%s: the request is %s, want still pending (nothing decided)", tc.name, st.Status)
		}
	}
	if rs, _ := s.svc.Rules(rev); len(rs) != 0 {
		t.Errorf("%d rules were stored, want none", len(rs))
	}
}

// A selection's standing approval picks the options its decision picked,
// in later selections of the same principal that offer them.
func TestStandingApprovalOfASelection(t *testing.T) {
	t.Parallel()
	s := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{})
	rev := signedIn("rev@example.com")
	pick := func(ids ...string) elicitation.Input {
		var opts []json.RawMessage
		for _, id := range ids {
			opts = append(opts, json.RawMessage(`{"id":"`+id+`"}`))
		}
		return elicitation.Input{Message: "Which region?", Options: opts}
	}
	c, err := s.svc.Create(context.Background(), "agent", elicitation.KindSelection, pick("eu", "us"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.svc.Submit(rev, c.State.ID, elicitation.NoKey, elicitation.Submission{ID: "p1", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"eu"},
		Rule: &elicitation.RuleInput{ExpiresAt: s.clock.Now().Add(time.Hour), MaxUses: 5}}); err != nil {
		t.Fatal(err)
	}
	next, err := s.svc.Create(context.Background(), "agent", elicitation.KindSelection, pick("us", "eu", "ap"))
	if err != nil || next.State.Status != elicitation.StatusSubmitted {
		t.Fatalf("a selection offering eu: %+v, %v; want decided", next.State, err)
	}
	if res, err := s.svc.Result(context.Background(), "agent", next.State.ID); err != nil || len(res.SelectedIDs) != 1 || res.SelectedIDs[0] != "eu" {
		t.Errorf("the rule picked %v, %v; want [eu]", res.SelectedIDs, err)
	}
	if other, _ := s.svc.Create(context.Background(), "agent", elicitation.KindSelection, pick("us", "ap")); other.State.Status != elicitation.StatusPending {
		t.Errorf("a selection without eu: %s, want pending", other.State.Status)
	}
}

// TestStandingMaxTTL: the operator's cap (its default when unset) with
// sign-in; 0 without, where no standing approval can be made.
func TestStandingMaxTTL(t *testing.T) {
	t.Parallel()
	if got := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{}).svc.StandingMaxTTL(); got != elicitation.DefaultRuleMaxTTL {
		t.Errorf("default: %s", got)
	}
	if got := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{MaxTTL: 15 * time.Minute}).svc.StandingMaxTTL(); got != 15*time.Minute {
		t.Errorf("15m cap: %s", got)
	}
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if got := elicitation.NewService(elicitation.Config{Store: st, Standing: elicitation.StandingPolicy{MaxTTL: time.Hour}}).StandingMaxTTL(); got != 0 {
		t.Errorf("without sign-in: %s", got)
	}
}

// ruleFaults is an embedded store whose rule writes fail as asked: the
// rule itself, or the rule_created entry of the trail it was made from.
type ruleFaults struct {
	*boltstore.Store
	createFails, auditFails bool
}

var errFault = errors.New("disk full")

func (f *ruleFaults) CreateRule(ctx context.Context, r elicitation.Rule) error {
	if f.createFails {
		return errFault
	}
	return f.Store.CreateRule(ctx, r)
}

func (f *ruleFaults) Append(ctx context.Context, id string, e elicitation.AuditEntry) error {
	if f.auditFails && e.Action == elicitation.ActionRuleCreated {
		return errFault
	}
	return f.Store.Append(ctx, id, e)
}

// TestStandingApprovalNotSaved: a rule that cannot be stored, or whose
// creation the trail cannot record, leaves the approval standing, says
// ErrRuleNotSaved, and decides nothing later.
func TestStandingApprovalNotSaved(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]*ruleFaults{"rule": {createFails: true}, "trail": {auditFails: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bs, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = bs.Close() })
			f.Store = bs
			c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
			s := standing{elicitation.NewService(elicitation.Config{Store: f, Now: c.Now, SignIn: true, Standing: elicitation.StandingPolicy{RequireArgument: true}}), c, bs}
			rev := signedIn("rev@example.com")
			first := s.create(t, "agent", gateCall("staging"))
			err = s.approveWith(rev, first.ID, &elicitation.RuleInput{ExpiresAt: c.Now().Add(time.Hour), MaxUses: 2, Constraints: onEnv(t, "staging")})
			if !errors.Is(err, elicitation.ErrRuleNotSaved) {
				t.Fatalf("approve with a rule the store refuses: %v, want ErrRuleNotSaved", err)
			}
			if st, err := s.svc.Status(context.Background(), "agent", first.ID); err != nil || st.Status != elicitation.StatusSubmitted {
				t.Fatalf("the approval: %+v, %v; want it to stand", st, err)
			}
			c.Add(time.Minute)
			if next := s.create(t, "agent", gateCall("staging")); next.Status != elicitation.StatusPending {
				t.Errorf("a like call after the rule was lost: %s, want pending (asked of a human)", next.Status)
			}
		})
	}
}

// A rule that names more fields than a rule may hold is refused before
// any of them is read from the context: the review page sends one
// rule.field per field, and a half-MiB submission holds thousands, each
// of which decoded the whole context (up to 64 KiB) again before the
// count was checked. The work of a refusal does not grow with the paths.
// Not parallel: AllocsPerRun counts the whole process's allocations.
func TestStandingApprovalTooManyFieldsBoundsWork(t *testing.T) {
	s := newStanding(t, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{})
	rev := signedIn("rev@example.com")
	in := gateCall("staging")
	in.Context = json.RawMessage(`{"tool":"deploy","arguments":{"env":"staging","hosts":[` + strings.Repeat(`"h",`, 2000) + `"h"]}}`)
	first := s.create(t, "agent", in)
	rule := func(n int) *elicitation.RuleInput {
		r := &elicitation.RuleInput{ExpiresAt: s.clock.Now().Add(time.Hour), MaxUses: 1}
		for range n {
			r.Equal = append(r.Equal, []string{"arguments", "env"})
		}
		return r
	}
	var err error
	allocs := func(n int) float64 {
		r := rule(n)
		return testing.AllocsPerRun(1, func() { err = s.approveWith(rev, first.ID, r) })
	}
	few, many := allocs(elicitation.MaxRuleConstraints+1), allocs(2000)
	if !errors.Is(err, elicitation.ErrRuleInvalid) || !strings.Contains(elicitation.PublicMessage(err), "at most 20 constraints") {
		t.Errorf("2000 fields: %v, want ErrRuleInvalid saying at most 20 constraints", err)
	}
	if many > 2*few {
		t.Errorf("refusing 2000 fields took %.0f allocations, %.0f for %d: the work grows with the fields sent", many, few, elicitation.MaxRuleConstraints+1)
	}
	if st, _ := s.svc.Status(context.Background(), "agent", first.ID); st.Status != elicitation.StatusPending {
		t.Errorf("the request is %s, want still pending (nothing decided)", st.Status)
	}
}
