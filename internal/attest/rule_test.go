package attest_test

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// A request a standing approval decided: its one approver is the rule's
// author, via rule, and names the rule.
func TestIssueByRule(t *testing.T) {
	t.Parallel()
	st := elicitation.State{
		ID: "el-3", Kind: elicitation.KindApproval, Owner: "agent-key", Status: elicitation.StatusConsumed,
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RetainUntil: t0.Add(7 * 24 * time.Hour),
		Decision: elicitation.DecisionSubmitted, DecidedAt: t0, DecidedBy: "rev@example.com", DecidedVia: elicitation.ViaRule, DecidedRule: "rule-7",
	}
	o := attest.Outcome{
		Result: elicitation.Result{State: st, Decision: st.Decision, Message: "Allow deploy?"},
		Trail: elicitation.AuditTrail{Entries: []elicitation.AuditEntry{
			{At: t0, Action: elicitation.ActionCreated, Principal: "agent-key"},
			{At: t0, Action: elicitation.ActionDecided, Principal: "rev@example.com", Via: elicitation.ViaRule, Issuer: "https://idp.example", Detail: "submitted by standing approval rule-7 (use 1 of 5)"},
		}},
	}
	k := keys(t, "k1")
	tok, err := attest.Issuer{Keys: k, Now: func() time.Time { return t0 }}.Issue(iss, o)
	if err != nil {
		t.Fatal(err)
	}
	c, err := receipt.Verify(tok, signing.JWKS(k), receipt.Expect{Issuer: iss, Txn: "el-3", Outcome: receipt.OutcomeApproved, Now: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	want := receipt.Approver{Principal: "rev@example.com", Issuer: "https://idp.example", At: t0.Unix(), Via: "rule", Rule: "rule-7", Decision: receipt.OutcomeApproved}
	if len(c.Approvers) != 1 || c.Approvers[0] != want {
		t.Errorf("approvers %+v, want [%+v]", c.Approvers, want)
	}
}
