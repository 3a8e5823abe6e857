package review_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// TestInboxDelegation: carol delegates to bob from her inbox's form (a
// POST, origin-checked, for the signed-in reviewer only); bob's inbox
// then lists the request that names only carol and says he may decide
// for her; he approves it in a batch, which records the decision as his,
// for carol; carol ends the delegation and bob's inbox no longer lists
// what names her. Bad input is a clear 400 and writes nothing.
func TestInboxDelegation(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	later := e.create("deploy-bot", elicitation.Input{Message: "Carol again", TimeoutSeconds: 3500, Reviewers: []string{"carol@example.com"}})
	end := e.clock.Now().Add(2 * time.Hour).Format("2006-01-02T15:04")
	past := e.clock.Now().Add(-time.Hour).Format("2006-01-02T15:04")
	for name, form := range map[string]url.Values{
		"to herself":       {"delegate": {"1"}, "to": {"Carol@example.com"}, "end": {end}},
		"to a group":       {"delegate": {"1"}, "to": {"group:ops"}, "end": {end}},
		"to no address":    {"delegate": {"1"}, "to": {"bob"}, "end": {end}},
		"no end":           {"delegate": {"1"}, "to": {"bob@example.com"}},
		"an end past":      {"delegate": {"1"}, "to": {"bob@example.com"}, "end": {past}},
		"end before start": {"delegate": {"1"}, "to": {"bob@example.com"}, "start": {end}, "end": {e.clock.Now().Add(time.Hour).Format("2006-01-02T15:04")}},
		"a bad date":       {"delegate": {"1"}, "to": {"bob@example.com"}, "end": {"tomorrow"}},
	} {
		if r := e.postAs("carol", "/review/", e.withInboxToken("carol", form)); r.Status != http.StatusBadRequest || !strings.Contains(r.Body, "This delegation cannot be made") || !strings.Contains(r.Body, "Nothing was changed") {
			t.Errorf("%s: %d\n%s", name, r.Status, r.Body)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(url.Values{"delegate": {"1"}, "to": {"bob@example.com"}, "end": {end}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := e.as("carol").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, res); r.Status != http.StatusForbidden {
		t.Errorf("cross-site delegation: %d", r.Status)
	}
	if ds, err := e.svc.OperatorDelegations(context.Background(), true); err != nil || len(ds) != 0 {
		t.Fatalf("refused delegations wrote %v, %v", ds, err)
	}
	if got := rows(e.getAs("bob", "/review/").Body); strings.Contains(strings.Join(got, " "), f["carols"].ID) {
		t.Fatal("bob lists carol's request before any delegation")
	}

	noRedirect := e.as("carol")
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ = http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(e.withInboxToken("carol", url.Values{"delegate": {"1"}, "to": {"Bob@Example.com"}, "end": {end}}).Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	res, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, res); r.Status != http.StatusSeeOther || r.Header.Get("Location") != "./#delegation" {
		t.Fatalf("delegate: %d %q", r.Status, r.Header.Get("Location"))
	}
	carols := e.getAs("carol", "/review/").Body
	if !strings.Contains(carols, "<strong>bob@example.com</strong> decides for you until") {
		t.Errorf("carol's inbox does not list her delegation:\n%s", carols)
	}
	bobs := e.getAs("bob", "/review/")
	if !strings.Contains(strings.Join(rows(bobs.Body), " "), f["carols"].ID) || !strings.Contains(bobs.Body, "You may decide for <strong>carol@example.com</strong>") {
		t.Fatalf("bob's inbox after the delegation: %v", rows(bobs.Body))
	}
	b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": {f["carols"].ID}})
	if r := e.confirm("bob", b, "submitted", ""); r.Status != http.StatusOK || outcomes(r.Body)[f["carols"].ID] != "Approved." {
		t.Fatalf("bob's batch for carol: %d %v", r.Status, outcomes(r.Body))
	}
	rec := e.load(f["carols"].ID)
	d := e.decidedEntries(f["carols"].ID)
	if rec.State.DecidedBy != "bob@example.com" || len(d) != 1 || d[0].Principal != "bob@example.com" || d[0].Detail != "submitted, for carol@example.com" {
		t.Errorf("decided %q, entries %+v", rec.State.DecidedBy, d)
	}

	// Only the delegator ends a delegation, once.
	ds, err := e.svc.OperatorDelegations(context.Background(), false)
	if err != nil || len(ds) != 1 {
		t.Fatalf("delegations %v, %v", ds, err)
	}
	// Bob's inbox has no End form for it: a form from carol's page is
	// refused in his session (its token is hers), nothing ended.
	carolsEnd := e.withInboxToken("carol", url.Values{"end-delegation": {ds[0].ID}})
	if r := e.postAs("bob", "/review/", carolsEnd); r.Status != http.StatusForbidden {
		t.Errorf("bob ended carol's delegation: %d", r.Status)
	}
	if r := e.postAs("carol", "/review/", carolsEnd); r.Status != http.StatusOK || strings.Contains(r.Body, "decides for you") {
		t.Errorf("carol ends it: %d", r.Status)
	}
	if r := e.postAs("carol", "/review/", carolsEnd); r.Status != http.StatusConflict {
		t.Errorf("ended twice: %d", r.Status)
	}
	if got := strings.Join(rows(e.getAs("bob", "/review/").Body), " "); strings.Contains(got, later.ID) {
		t.Error("bob still lists what names carol after she ended the delegation")
	}
	if r := e.getAs("bob", "/review/"+later.ID); r.Status != http.StatusNotFound {
		t.Errorf("bob opens carol's request after the end: %d", r.Status)
	}
}

// TestDelegationQuorumOneSeat: a quorum counts each named reviewer's seat
// once, whoever fills it. Carol, named with bob on a request that needs
// two approvals, approves, then delegates to eve (named nowhere): eve's
// approval for carol is refused and the request stays pending; the other
// way round, eve's approval for carol first, carol's own is refused (her
// batch leaves the request out). Both their inboxes say the place is
// counted. Only bob's completes the quorum.
func TestDelegationQuorumOneSeat(t *testing.T) {
	t.Parallel()
	for _, carolFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("carol first %v", carolFirst), func(t *testing.T) {
			t.Parallel()
			e := newSignedInEnv(t)
			q := e.create("ci-bot", elicitation.Input{Message: "Two of us must agree", TimeoutSeconds: 1800,
				Reviewers: []string{"bob@example.com", "carol@example.com"}, Approvals: 2})
			end := e.clock.Now().Add(2 * time.Hour).Format("2006-01-02T15:04")
			if r := e.postAs("carol", "/review/", e.withInboxToken("carol", url.Values{"delegate": {"1"}, "to": {"eve@example.com"}, "end": {end}})); r.Status != http.StatusOK {
				t.Fatalf("carol delegates to eve: %d", r.Status)
			}
			approve := func(name string) string {
				b := e.selectBatch(name, url.Values{"decision": {"submitted"}, "id": {q.ID}})
				if b.token == "" {
					return b.outcomes[q.ID]
				}
				return outcomes(e.confirm(name, b, "submitted", "").Body)[q.ID]
			}
			first, second := "carol", "eve"
			if !carolFirst {
				first, second = second, first
			}
			if got := approve(first); !strings.HasPrefix(got, "Your approval is counted (1 of 2)") {
				t.Fatalf("%s approves: %q", first, got)
			}
			// Both inboxes say the place is filled.
			for _, name := range []string{"carol", "eve"} {
				if body := e.getAs(name, "/review/").Body; !strings.Contains(body, "1 of 2 approvals, yours counted") {
					t.Errorf("%s's inbox after %s's approval does not say it is counted:\n%s", name, first, body)
				}
			}
			// Left out of the second's batch at its first step, by the rule
			// the second step applies: the place is filled, whether by carol
			// or by eve for her.
			if b := e.selectBatch(second, url.Values{"decision": {"submitted"}, "id": {q.ID}}); b.token != "" || len(b.ids) != 0 ||
				!strings.HasPrefix(b.outcomes[q.ID], "Left out: an approval for this place is already counted") {
				t.Errorf("%s's batch after %s's approval: token %t, offered %v, outcome %q; want it left out", second, first, b.token != "", b.ids, b.outcomes[q.ID])
			}
			// Their pages offer Decline but not Approve, and say why, by
			// the same rule; bob's, whose place is open, offers both.
			for name, why := range map[string]string{
				first:  "Your approval would not count: your approval is already counted; it needs other reviewers&#39;.",
				second: "Your approval would not count: an approval for this place is already counted, given by the reviewer or their delegate; it needs other reviewers&#39;.",
				"bob":  "",
			} {
				body := e.getAs(name, review.Path(q.ID, elicitation.NoKey)).Body
				offered := strings.Contains(body, `name="decision" value="submitted"`)
				if offered != (why == "") || !strings.Contains(body, `name="decision" value="declined"`) || (why != "" && !strings.Contains(body, why)) {
					t.Errorf("%s's page after %s's approval: Approve offered %t, want %t, with Decline and %q:\n%s", name, first, offered, why == "", why, body)
				}
				if name == "eve" && carolFirst {
					compareGolden(t, "approval-quorum-place-filled", normalize(body, q))
				}
			}
			if st := e.load(q.ID).State; st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
				t.Fatalf("after carol's seat was filled twice: %s with %+v", st.Status, st.Approvers)
			}
			if got := approve("bob"); got != "Approved." {
				t.Errorf("bob completes the quorum: %q", got)
			}
		})
	}
}
