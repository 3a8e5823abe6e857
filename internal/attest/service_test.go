package attest_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
	"github.com/mcp-elicitation/elicitation/receipt"
)

func service(t *testing.T, signIn bool) (*elicitation.Service, *testclock.Clock) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(t0)
	return elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: signIn}), c
}

// outcome reads what the MCP edge builds a receipt from.
func outcome(t *testing.T, svc *elicitation.Service, owner, id string) attest.Outcome {
	t.Helper()
	r, err := svc.Result(context.Background(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := svc.Audit(context.Background(), owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return attest.Outcome{Result: r, Trail: tr}
}

// From the Service's own records: a quorum decided on the page by a
// reviewer signed in with the OpenID provider and in Slack by a mapped
// Slack user names each with their issuer and channel; a decline in the
// host's form without sign-in names nobody, whatever the context carried.
func TestIssueFromService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := keys(t, "k1")
	set := signing.JWKS(k)
	svc, clock := service(t, true)
	cr, err := svc.Create(ctx, "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: []json.RawMessage{[]byte(`{"id":"a"}`), []byte(`{"id":"b"}`)}, Approvals: 2, TimeoutSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	page := elicitation.WithIdentity(ctx, elicitation.Identity{Issuer: "https://idp.example", Subject: "a1", Email: "alice@example.com", EmailVerified: true})
	slack := elicitation.WithIdentity(ctx, elicitation.Identity{Issuer: "https://slack.com", Subject: "slack:T1:U2", Email: "bob@example.com", EmailVerified: true})
	if _, err := svc.Submit(page, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "p1", Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	if _, err := svc.Submit(slack, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "s1", By: "bob@example.com", Via: elicitation.ViaSlack, Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	is := attest.Issuer{Keys: k, Now: clock.Now}
	tok, err := is.Issue(iss, outcome(t, svc, "agent", cr.State.ID))
	if err != nil {
		t.Fatal(err)
	}
	c, err := receipt.Verify(tok, set, receipt.Expect{Issuer: iss, Txn: cr.State.ID, Outcome: receipt.OutcomeApproved, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	want := []receipt.Approver{
		{Principal: "alice@example.com", Issuer: "https://idp.example", At: t0.Unix(), Via: "page", Decision: "approved"},
		{Principal: "bob@example.com", Issuer: "https://slack.com", At: t0.Add(time.Minute).Unix(), Via: "slack", Decision: "approved"},
	}
	if len(c.Approvers) != 2 || c.Approvers[0] != want[0] || c.Approvers[1] != want[1] || c.Requester != "agent" || c.Quorum != 2 || len(c.SelectedIDs) != 1 || c.SelectedIDs[0] != "b" {
		t.Errorf("quorum receipt %+v", c)
	}

	anon, clock := service(t, false)
	cr, err = anon.Create(ctx, "agent", elicitation.KindApproval, elicitation.Input{Message: "Ship?", Context: []byte(`{"v":1}`), TimeoutSeconds: 600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Submit(page, cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "h1", Via: elicitation.ViaHostForm, Decision: elicitation.DecisionDeclined}); err != nil {
		t.Fatal(err)
	}
	tok, err = attest.Issuer{Keys: k, Now: clock.Now}.Issue(iss, outcome(t, anon, "agent", cr.State.ID))
	if err != nil {
		t.Fatal(err)
	}
	c, err = receipt.Verify(tok, set, receipt.Expect{Issuer: iss, Outcome: receipt.OutcomeDeclined, Now: clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Approvers; len(a) != 1 || a[0] != (receipt.Approver{Anonymous: true, At: t0.Unix(), Via: "host-form", Decision: "declined"}) {
		t.Errorf("host-form decline without sign-in: %+v", a)
	}
}
