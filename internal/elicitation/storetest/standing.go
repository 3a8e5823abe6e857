package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// testStanding: standing approvals through two Services on the two handles
// (two processes on one store, as far as the store can share): a rule made
// with a decision on one decides the like requests created on the other,
// no more than its uses; a revoke on one holds at once for a create on the
// other; a rule decides nothing from its expiry on (the test clock); a rule
// sent by a reviewer who may not decide is refused and nothing is written.
func testStanding(t *testing.T, open Factory) {
	a, b := open(t)
	clock := testclock.New(T0)
	cfg := func(s elicitation.Store) elicitation.Config {
		return elicitation.Config{Store: s, Now: clock.Now, SignIn: true, Policy: elicitation.ReviewerPolicy{BarOwner: true},
			Standing: elicitation.StandingPolicy{RequireArgument: true}}
	}
	one, two := elicitation.NewService(cfg(a)), elicitation.NewService(cfg(b))
	bob := elicitation.WithIdentity(context.Background(), elicitation.Identity{Issuer: "https://idp.example", Subject: "b", Email: "bob@example.com", EmailVerified: true, Groups: []string{"ops"}})
	deploy := func(svc *elicitation.Service, env string) (elicitation.Created, elicitation.Status) {
		t.Helper()
		c, err := svc.Create(context.Background(), "agent", elicitation.KindApproval, elicitation.Input{Message: "Allow deploy?", Reviewers: []string{"group:ops"},
			Context: json.RawMessage(`{"tool":"deploy","arguments":{"env":"` + env + `"},"argumentsDigest":"d-` + env + `"}`)})

		if err != nil {
			t.Fatal(err)
		}
		return c, c.State.Status
	}
	approve := func(ctx context.Context, c elicitation.Created, uses int, d time.Duration) error {
		_, err := one.Submit(ctx, c.State.ID, c.ReviewKey, elicitation.Submission{ID: "s-" + c.State.ID, Decision: elicitation.DecisionSubmitted,
			Rule: &elicitation.RuleInput{ExpiresAt: clock.Now().Add(d), MaxUses: uses, Equal: [][]string{{"arguments", "env"}}}})
		return err
	}

	// Refused: a reviewer who may not decide; nothing written.
	first, _ := deploy(one, "staging")
	stranger := elicitation.WithIdentity(context.Background(), elicitation.Identity{Subject: "x", Email: "x@example.com", EmailVerified: true})
	if err := approve(stranger, first, 5, time.Hour); elicitation.CodeOf(err) != elicitation.CodeForbidden {
		t.Errorf("a rule by a stranger: %v, want forbidden", err)
	}
	if rs, _ := b.RulesBy(context.Background(), "x@example.com"); len(rs) != 0 {
		t.Errorf("the stranger's rule was stored: %v", ruleIDs(rs))
	}

	// Made on one, used on the other, as often as it allows.
	must(t, approve(bob, first, 2, time.Hour))
	for i, want := range []elicitation.Status{elicitation.StatusSubmitted, elicitation.StatusSubmitted, elicitation.StatusPending} {
		if _, got := deploy(two, "staging"); got != want {
			t.Errorf("like call %d on the other handle: %s, want %s", i+1, got, want)
		}
	}
	if _, got := deploy(two, "production"); got != elicitation.StatusPending {
		t.Errorf("a call to production: %s, want pending", got)
	}

	// Revoked on the other: the next create on this one is asked.
	c, _ := deploy(one, "qa")
	must(t, approve(bob, c, 10, time.Hour))
	if _, got := deploy(one, "qa"); got != elicitation.StatusSubmitted {
		t.Fatalf("before the revoke: %s, want submitted", got)
	}
	rs, err := two.Rules(bob)
	must(t, err)
	for _, r := range rs {
		if r.LiveAt(clock.Now()) {
			if _, err := two.RevokeRule(bob, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, got := deploy(one, "qa"); got != elicitation.StatusPending {
		t.Errorf("after the revoke on the other handle: %s, want pending", got)
	}

	// Expired: nothing decided from the expiry on.
	c, _ = deploy(one, "dev")
	must(t, approve(bob, c, 10, 10*time.Minute))
	clock.Add(10*time.Minute - time.Nanosecond)
	if _, got := deploy(two, "dev"); got != elicitation.StatusSubmitted {
		t.Errorf("just before the expiry: %s, want submitted", got)
	}
	clock.Add(time.Nanosecond)
	if _, got := deploy(two, "dev"); got != elicitation.StatusPending {
		t.Errorf("at the expiry: %s, want pending", got)
	}
}
