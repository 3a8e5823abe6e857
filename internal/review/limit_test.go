package review_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// TestDecisionShare: signed-in reviewers' POSTs that may change something
// spend from their own share and from everyone's (Options.Decisions), a
// batch's confirmation one for each request it names. Past bob's share a
// decision on a page and an inbox form are refused (429, Retry-After),
// nothing decided, changed or audited, while carol still decides until
// everyone's share is spent; an hour later bob decides again.
func TestDecisionShare(t *testing.T) {
	t.Parallel()
	e := newSignedInEnv(t, func(o *review.Options) {
		o.Decisions = ratelimit.New(ratelimit.Rate{Count: 5, Per: time.Hour}, ratelimit.Rate{Count: 8, Per: time.Hour}, 100)
	})
	var cs []created
	for range 8 {
		cs = append(cs, e.create("agent", elicitation.Input{Message: "Deploy?", TimeoutSeconds: 7200}))
	}
	// bob: a batch of three (1 for its first step, 3 for the confirmation),
	// then one on its page: his five.
	b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": {cs[0].ID, cs[1].ID, cs[2].ID}})
	if r := e.confirm("bob", b, "submitted", ""); r.Status != http.StatusOK || len(outcomes(r.Body)) != 3 {
		t.Fatalf("bob's batch: %d %v", r.Status, outcomes(r.Body))
	}
	if r := e.decideAs("bob", cs[3], "submitted"); r.Status != http.StatusOK {
		t.Fatalf("bob's fifth: %d", r.Status)
	}
	refused := func(who string, r response) {
		t.Helper()
		s, _ := strconv.Atoi(r.Header.Get("Retry-After"))
		if r.Status != http.StatusTooManyRequests || s <= 0 || !strings.Contains(r.Body, "Too many decisions") {
			t.Errorf("%s past the share: %d, Retry-After %q", who, r.Status, r.Header.Get("Retry-After"))
		}
	}
	refused("bob's page", e.decideAs("bob", cs[4], "submitted"))
	refused("bob's delegation", e.postAs("bob", "/review/", e.withInboxToken("bob", url.Values{"delegate": {"1"}, "to": {"eve@example.com"}, "end": {e.clock.Now().Add(time.Hour).Format("2006-01-02T15:04")}})))
	refused("bob's batch", e.confirm("bob", b, "submitted", ""))
	if st := e.state(cs[4]); st.Status != elicitation.StatusPending || lastRefusal(e.audit(cs[4])) != "" {
		t.Fatalf("a refused decision: %s, refusal audited %q", st.Status, lastRefusal(e.audit(cs[4])))
	}
	if ds, err := e.svc.OperatorDelegations(context.Background(), false); err != nil || len(ds) != 0 {
		t.Fatalf("a refused delegation wrote %v, %v", ds, err)
	}
	// carol has her own share, until everyone's eight are spent.
	for i, c := range cs[4:7] {
		if r := e.decideAs("carol", c, "submitted"); r.Status != http.StatusOK {
			t.Fatalf("carol's decision %d: %d", i+1, r.Status)
		}
	}
	refused("carol past everyone's share", e.decideAs("carol", cs[7], "submitted"))
	e.clock.Add(time.Hour)
	if r := e.decideAs("bob", cs[7], "submitted"); r.Status != http.StatusOK {
		t.Errorf("bob an hour later: %d", r.Status)
	}
}
