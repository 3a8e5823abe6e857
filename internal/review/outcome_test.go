package review

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestOutcomesTable: every outcome has its rule (status and page), and the
// pages that tell the reviewer what went wrong say something.
func TestOutcomesTable(t *testing.T) {
	for o := outPending; o <= outInternal; o++ {
		r, ok := outcomes[o]
		if !ok || r.status == 0 {
			t.Errorf("outcome %d has no rule", o)
			continue
		}
		if r.page == pageProblem && r.heading == "" {
			t.Errorf("outcome %d: a problem page without a heading", o)
		}
		if r.status >= 400 && r.page == pagePending && r.status != http.StatusUnprocessableEntity {
			t.Errorf("outcome %d: status %d with the answerable page", o, r.status)
		}
	}
	if len(outcomes) != int(outInternal)+1 {
		t.Errorf("%d rules for %d outcomes", len(outcomes), int(outInternal)+1)
	}
}

// TestReceiptNamesTheReviewer: a signed-in reviewer who decided is named on
// the receipt; the anonymous one ("reviewer") is not.
func TestReceiptNamesTheReviewer(t *testing.T) {
	for by, want := range map[string]string{"alice@example.com": "alice@example.com", elicitation.Reviewer: ""} {
		st := elicitation.State{ID: "x", Kind: elicitation.KindApproval, Decision: elicitation.DecisionSubmitted, DecidedAt: time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC), DecidedBy: by}
		r := receiptPage(elicitation.Record{State: st}, st, elicitation.Submission{}, false).Final.Receipt
		if r.By != want || r.At != "Sat 14 Mar 2026, 09:30 UTC" {
			t.Errorf("decided by %q: receipt By %q At %q", by, r.By, r.At)
		}
	}
}

// TestReceiptSaysWhatRuleWasMade: an approval with a standing approval
// says what was made, or, when the Service could not save it, that later
// requests are asked as before, never that they are approved.
func TestReceiptSaysWhatRuleWasMade(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	st := elicitation.State{ID: "x", Kind: elicitation.KindApproval, Decision: elicitation.DecisionSubmitted, DecidedAt: at}
	sub := elicitation.Submission{Decision: elicitation.DecisionSubmitted, Rule: &elicitation.RuleInput{ExpiresAt: at.Add(time.Hour), MaxUses: 10}}
	for lost, want := range map[bool]string{false: "are approved for you too", true: "could not be saved"} {
		text := strings.Join(receiptPage(elicitation.Record{State: st}, st, sub, lost).Final.Text, " ")
		if !strings.Contains(text, want) || lost == strings.Contains(text, "approved for you too") {
			t.Errorf("rule lost %v: %q, want %q", lost, text, want)
		}
	}
}

// TestSignInOutcomes: every outcome of reviewer sign-in is answered from
// the outcomes table, and the switch link is SwitchPath relative to the
// review page.
func TestSignInOutcomes(t *testing.T) {
	want := map[SignInOutcome]int{SignInMethod: 405, SignInMisconfigured: 500, SignInUnavailable: 503, SignInFailed: 500, SignInIncomplete: 400, SignInRefusedByIssuer: 403, SignInTooMany: 429}
	for o, status := range want {
		r, ok := outcomes[signInOutcomes[o]]
		if !ok || r.status != status || r.page != pageProblem || r.heading == "" {
			t.Errorf("sign-in outcome %d: rule %+v, want status %d with a problem page", o, r, status)
		}
	}
	if len(signInOutcomes) != len(want) {
		t.Errorf("%d sign-in outcomes mapped, %d tested", len(signInOutcomes), len(want))
	}
	link, _ := url.Parse("https://h.example/stage" + Path("a", "b"))
	sw, _ := link.Parse(switchAccountURL("a", "b"))
	if sw.Path != "/stage"+SwitchPath || sw.Query().Get("next") != Path("a", "b") {
		t.Errorf("switch link resolves to %s", sw)
	}
}
