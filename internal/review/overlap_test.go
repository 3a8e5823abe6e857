package review_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// TestOverlappingPostsOfOnePage: one rendered page posted twice at once with
// different answers (amount=10 and amount=1000000). Exactly one is told it
// was sent, and it is the one recorded; the other gets the conflict page.
func TestOverlappingPostsOfOnePage(t *testing.T) {
	e := newEnv(t)
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		c := e.approval(elicitation.Input{
			Message:         "Transfer?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"}},"required":["amount"]}`),
		})
		tok := e.token(c)
		amounts := []string{"10", "1000000"}
		got := make([]response, len(amounts))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, amount := range amounts {
			wg.Go(func() {
				<-start
				res, err := http.PostForm(e.srv.URL+c.Path(), url.Values{"token": {tok}, "decision": {"submitted"}, "f.amount": {amount}})
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = read(t, res)
			})
		}
		close(start)
		wg.Wait()
		rec, err := e.svc.Result(context.Background(), "agent", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var form struct{ Amount int64 }
		if err := json.Unmarshal(rec.Form, &form); err != nil {
			t.Fatalf("recorded form %s: %v", rec.Form, err)
		}
		sent := 0
		for i, r := range got {
			switch r.Status {
			case http.StatusOK:
				sent++
				if form.Amount != mustInt(t, amounts[i]) {
					t.Fatalf("round %d: amount=%s told sent, but amount=%d was recorded", round, amounts[i], form.Amount)
				}
			case http.StatusConflict:
			default:
				t.Fatalf("round %d: amount=%s: status %d\n%s", round, amounts[i], r.Status, tail(r.Body))
			}
		}
		if sent != 1 {
			t.Fatalf("round %d: %d posts told sent, want exactly 1 (recorded amount=%d)", round, sent, form.Amount)
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}
