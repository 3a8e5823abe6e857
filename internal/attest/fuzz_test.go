package attest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// FuzzIssue checks the receipt of a decided approval whose context the
// agent wrote: every context the service accepts at creation
// (Input.Payload) gets a receipt, which verifies, digests that context,
// and names a tool call only where the context declares one with a
// well-formed digest (and then exactly that call).
func FuzzIssue(f *testing.F) {
	f.Add(`{"b": 2, "a": [1.0, "x"]}`, `{"reason":"ok"}`, "Deploy v2?")
	f.Add(`{"tool":"deploy","argumentsSha256":"`+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"+`","upstream":"https://up.example/mcp"}`, ``, "Call?")
	f.Add(`{"tool":"deploy","argumentsSha256":"`+"0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"+`"}`, `{}`, "m")
	f.Add(`{"a":"\ud800","a":1}`, ``, "m")
	f.Add(`[1e-400,-0,"\u2028"]`, `null`, "m")
	k := keys(f, "k1")
	f.Fuzz(func(t *testing.T, context, form, message string) {
		p, err := elicitation.Input{Message: message, Context: json.RawMessage(context)}.Payload(elicitation.KindApproval)
		if err != nil || p.Context == nil {
			return
		}
		st := elicitation.State{ID: "el-1", Kind: elicitation.KindApproval, Owner: "agent", Status: elicitation.StatusConsumed,
			CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), RetainUntil: t0.Add(24 * time.Hour),
			Decision: elicitation.DecisionSubmitted, DecidedAt: t0.Add(time.Minute), DecidedBy: elicitation.Reviewer, DecidedVia: elicitation.ViaPage}
		var formJSON json.RawMessage
		if json.Valid([]byte(form)) {
			if b, err := json.Marshal(json.RawMessage(form)); err == nil {
				formJSON = b // as the service stores form values: Go's own JSON
			}
		}
		o := attest.Outcome{Result: elicitation.Result{State: st, Decision: st.Decision, Message: p.Message, Context: p.Context, Form: formJSON}}
		tok, err := attest.Issuer{Keys: k, Now: func() time.Time { return t0.Add(2 * time.Minute) }}.Issue(iss, o)
		if err != nil {
			if _, derr := receipt.Digest(formJSON); derr != nil {
				return // the form here is the fuzzer's, not the service's
			}
			t.Fatalf("no receipt for an accepted context %q: %v", p.Context, err)
		}
		c, err := receipt.Verify(tok, signing.JWKS(k), receipt.Expect{Issuer: iss, Txn: "el-1", Outcome: receipt.OutcomeApproved, Now: t0.Add(time.Hour)})
		if err != nil {
			t.Fatalf("the receipt does not verify: %v", err)
		}
		d, _ := c.Detail()
		if want, _ := receipt.Digest(p.Context); d.ContextSHA256 != want {
			t.Fatalf("context digest %q, want %q", d.ContextSHA256, want)
		}
		var call receipt.Call
		declared := json.Unmarshal(p.Context, &call) == nil && call.Tool != "" && validDigest(call.ArgumentsSHA256)
		if declared != (d.Tool != "") || declared && (d.Tool != call.Tool || d.ArgumentsSHA256 != call.ArgumentsSHA256) {
			t.Fatalf("context %q: detail names tool %q, args %q", p.Context, d.Tool, d.ArgumentsSHA256)
		}
	})
}

func validDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
