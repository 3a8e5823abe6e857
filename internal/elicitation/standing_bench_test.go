package elicitation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// BenchmarkCreateWithRules: what consulting standing approvals costs a
// create with sign-in on the embedded store: none stored, 50 live rules of
// the same principal that do not match (each read and matched), and one
// that matches (the use taken and the decision landed with the create).
// Run it with -benchtime of at most 900x: the principal may hold 1000
// pending requests.
func BenchmarkCreateWithRules(b *testing.B) {
	for _, bc := range []struct {
		name  string
		rules int
		env   string
	}{{"none", 0, "staging"}, {"50-unmatched", 50, "other"}, {"decided-by-rule", 1, "staging"}} {
		b.Run(bc.name, func(b *testing.B) {
			s := newStanding(b, elicitation.ReviewerPolicy{}, elicitation.StandingPolicy{})
			for i := range bc.rules {
				r := elicitation.Rule{ID: fmt.Sprint("r", i), By: "rev@example.com", Author: elicitation.RuleAuthor{Subject: "rev", Email: "rev@example.com", EmailVerified: true},
					Principal: "agent", Kind: elicitation.KindApproval, Tool: "deploy", CreatedAt: s.clock.Now(), ExpiresAt: s.clock.Now().Add(time.Hour), RetainUntil: s.clock.Now().Add(time.Hour), MaxUses: 1 << 30}
				env := bc.env
				if bc.rules > 1 {
					env = fmt.Sprint("env-", i)
				}
				c, err := elicitation.EqualTo([]byte(`{"arguments":{"env":"`+env+`"}}`), []string{"arguments", "env"})
				if err != nil {
					b.Fatal(err)
				}
				r.Constraints = []elicitation.Constraint{c}
				if err := s.store.CreateRule(context.Background(), r); err != nil {
					b.Fatal(err)
				}
			}
			in := gateCall("staging")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.svc.Create(context.Background(), "agent", elicitation.KindApproval, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
