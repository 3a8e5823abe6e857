package elicitation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// A decision records where it was made: the caller of Submit says so, and
// the page is what an unnamed caller means. It lands in the state (so in
// elicit_result) and in the decided audit entry.
func TestSubmitRecordsVia(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		via, want elicitation.Via
		decision  elicitation.Decision
	}{
		{"", elicitation.ViaPage, elicitation.DecisionSubmitted},
		{elicitation.ViaHostForm, elicitation.ViaHostForm, elicitation.DecisionDeclined},
		{elicitation.ViaApp, elicitation.ViaApp, elicitation.DecisionSubmitted},
	} {
		t.Run(string(tc.want), func(t *testing.T) {
			svc, _, _ := newService(t)
			cr, err := svc.Create(ctx, "alice", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), TimeoutSeconds: 60})
			if err != nil {
				t.Fatal(err)
			}
			sub := elicitation.Submission{ID: "s1", Decision: tc.decision, Via: tc.via}
			if tc.decision == elicitation.DecisionSubmitted {
				sub.SelectedIDs = []string{"o1"}
			}
			if _, err := svc.Submit(ctx, cr.State.ID, cr.ReviewKey, sub); err != nil {
				t.Fatal(err)
			}
			r, err := svc.Result(ctx, "alice", cr.State.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.State.DecidedVia != tc.want {
				t.Errorf("DecidedVia = %q, want %q", r.State.DecidedVia, tc.want)
			}
			tr, err := svc.Audit(ctx, "alice", cr.State.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []elicitation.Via
			for _, e := range tr.Entries {
				if e.Action == elicitation.ActionDecided {
					got = append(got, e.Via)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("decided entries via = %v, want [%s]", got, tc.want)
			}
		})
	}
}

// With sign-in, each counted decision's audit entry names the issuer that
// signed its reviewer in (what a receipt says of each approver); without
// sign-in none does, whatever the context carries.
func TestSubmitRecordsIssuer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newSignInService(t, elicitation.ReviewerPolicy{})
	cr, err := svc.Create(ctx, "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), Approvals: 2, TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	for i, who := range []string{"alice@example.com", "bob@example.com"} {
		sub := elicitation.Submission{ID: "s" + who, Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"o1"}}
		if _, err := svc.Submit(signedIn(who), cr.State.ID, cr.ReviewKey, sub); err != nil {
			t.Fatalf("approval %d: %v", i, err)
		}
	}
	tr, err := svc.Audit(ctx, "agent", cr.State.ID)
	if err != nil {
		t.Fatal(err)
	}
	var issuers []string
	for _, e := range tr.Entries {
		if e.Action == elicitation.ActionApproved || e.Action == elicitation.ActionDecided {
			issuers = append(issuers, e.Principal+" "+e.Issuer)
		}
	}
	if want := "alice@example.com https://id.example.com/,bob@example.com https://id.example.com/"; strings.Join(issuers, ",") != want {
		t.Errorf("counted entries %q, want %q", issuers, want)
	}

	anon, _, _ := newService(t)
	cr, err = anon.Create(ctx, "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), TimeoutSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Submit(signedIn("mallory@example.com"), cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s1", Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	tr, _ = anon.Audit(ctx, "agent", cr.State.ID)
	for _, e := range tr.Entries {
		if e.Issuer != "" {
			t.Errorf("without sign-in an entry names issuer %q", e.Issuer)
		}
	}
}
