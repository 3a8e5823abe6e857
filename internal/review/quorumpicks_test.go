package review_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// TestQuorumSamePicksAfterFilter: two reviewers of a selection that
// needs both their approvals pick the same two options. Bob sends them
// from the page as shown; carol, who picked "us" and then filtered for
// "eu", sends them in the order her filtered page holds them (the pick
// the filter does not match first). The same picks are the same answer:
// carol's approval completes the quorum with them.
func TestQuorumSamePicksAfterFilter(t *testing.T) {
	t.Parallel()
	e := newSignedInEnv(t)
	c, err := e.svc.Create(context.Background(), "ci-bot", elicitation.KindSelection, elicitation.Input{
		Message: "Pick two regions", Options: raws(`{"id":"eu"}`, `{"id":"us"}`, `{"id":"ap"}`),
		MinSelections: 2, MaxSelections: 2, TimeoutSeconds: 1800,
		Reviewers: []string{"bob@example.com", "carol@example.com"}, Approvals: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	path := review.Path(c.State.ID, elicitation.NoKey)
	tokenOf := func(body string) string {
		m := tokenRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no page token in\n%s", body)
		}
		return htmlUnescape(m[1])
	}
	bob := e.postAs("bob", path, url.Values{"token": {tokenOf(e.getAs("bob", path).Body)}, "decision": {"submitted"}, "option": {"eu", "us"}})
	if bob.Status != http.StatusOK || !strings.Contains(bob.Body, "Your approval is counted") {
		t.Fatalf("bob: %d\n%s", bob.Status, bob.Body)
	}
	filtered := e.postAs("carol", path, url.Values{"filter": {"1"}, "q": {"eu"}, "option": {"us"}})
	var picks []string
	for _, m := range checkedRE.FindAllStringSubmatch(filtered.Body, -1) {
		picks = append(picks, m[1])
	}
	if strings.Join(picks, ",") != "us" || !strings.Contains(filtered.Body, `value="eu"`) {
		t.Fatalf("carol's filtered page: %d, picks %v\n%s", filtered.Status, picks, filtered.Body)
	}
	// She ticks "eu" below her earlier pick: the form sends us, then eu.
	carol := e.postAs("carol", path, url.Values{"token": {tokenOf(filtered.Body)}, "decision": {"submitted"}, "option": {"us", "eu"}})
	if carol.Status != http.StatusOK {
		t.Errorf("carol, the same picks in another order: %d\n%s", carol.Status, carol.Body)
	}
	rec := e.load(c.State.ID)
	if rec.State.Status != elicitation.StatusSubmitted || rec.Answer == nil || strings.Join(slices.Sorted(slices.Values(rec.Answer.SelectedIDs)), ",") != "eu,us" {
		t.Errorf("after both approvals: %s, answer %+v", rec.State.Status, rec.Answer)
	}
}
