package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// The batch tests sign in with the fake of inbox_test.go and go over real
// HTTP to the review routes.

var (
	batchIDRE   = regexp.MustCompile(`<input type="hidden" name="id" value="([^"]+)">`)
	outcomeRE   = regexp.MustCompile(`<a class="open" href="\./([^"]+)">[^<]*</a>\n<p class="outcome[^"]*">([^<]*)</p>`)
	batchTokRE  = regexp.MustCompile(`name="token" value="([^"]+)"`)
	finalHeadRE = regexp.MustCompile(`<h1[^>]*>([^<]*)</h1>`)
)

// batch is a confirmation page as step 1 returned it.
type batch struct {
	status   int
	body     string
	token    string
	ids      []string          // to decide, in order
	outcomes map[string]string // left out: id → reason
}

// selectBatch is step 1 as name: the inbox form with ids ticked (or all
// of a filter).
func (e *env) selectBatch(name string, form url.Values) batch {
	e.t.Helper()
	r := e.postAs(name, "/review/", form)
	b := batch{status: r.Status, body: r.Body, outcomes: map[string]string{}}
	if m := batchTokRE.FindStringSubmatch(r.Body); m != nil {
		b.token = htmlUnescape(m[1])
	}
	for _, m := range batchIDRE.FindAllStringSubmatch(r.Body, -1) {
		b.ids = append(b.ids, m[1])
	}
	for _, m := range outcomeRE.FindAllStringSubmatch(r.Body, -1) {
		b.outcomes[m[1]] = htmlUnescape(m[2])
	}
	return b
}

// confirm is step 2: the confirmation page's form sent as name.
func (e *env) confirm(name string, b batch, decision, comment string) response {
	e.t.Helper()
	return e.postAs(name, "/review/", url.Values{"token": {b.token}, "decision": {decision}, "id": b.ids, "comment": {comment}})
}

// outcomes are the per-request results of a confirmed batch: id → text.
func outcomes(body string) map[string]string {
	out := map[string]string{}
	for _, m := range outcomeRE.FindAllStringSubmatch(body, -1) {
		out[m[1]] = htmlUnescape(m[2])
	}
	return out
}

func (e *env) load(id string) elicitation.Record {
	e.t.Helper()
	rec, err := e.store.Load(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

// decidedEntries are the decided and approved entries of a request's trail.
func (e *env) decidedEntries(id string) []elicitation.AuditEntry {
	e.t.Helper()
	tr, err := e.svc.OperatorAudit(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []elicitation.AuditEntry
	for _, a := range tr.Entries {
		if a.Action == elicitation.ActionDecided || a.Action == elicitation.ActionApproved {
			out = append(out, a)
		}
	}
	return out
}

// TestBatchApprove: bob ticks two approvals, a selection, an approval with
// a form and one already decided; the confirmation lists exactly the two
// to decide and leaves the others out with their reasons; confirming
// decides each on its own (its state, its decided audit entry by bob,
// its comment), as the single decision on its page would; sending the
// confirmation again decides nothing twice. Goldens of both pages.
func TestBatchApprove(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	f["form"] = e.create("deploy-bot", elicitation.Input{Message: "Fill me", TimeoutSeconds: 3000,
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)})
	f["gone"] = e.create("deploy-bot", elicitation.Input{Message: "Answered already", TimeoutSeconds: 3300})
	if r := e.decideAs("carol", f["gone"], "declined"); r.Status != http.StatusOK {
		t.Fatal(r.Status)
	}

	b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": f.ids("urgent", "later", "region", "form", "gone", "urgent")})
	if b.status != http.StatusOK || !slices.Equal(b.ids, f.ids("urgent", "later")) || b.token == "" {
		t.Fatalf("confirmation: %d, ids %v, token %q\n%s", b.status, b.ids, b.token, b.body)
	}
	for name, want := range map[string]string{"region": "options", "form": "form to fill", "gone": "already been answered"} {
		if got := b.outcomes[f[name].ID]; !strings.Contains(got, want) {
			t.Errorf("%s left out with %q, want %q", name, got, want)
		}
	}
	if h := finalHeadRE.FindStringSubmatch(b.body); h == nil || h[1] != "Approve 2 requests?" {
		t.Errorf("heading %v", h)
	}
	compareGolden(t, "batch-confirm", tokenValueRE.ReplaceAllString(f.normalize(b.body), "BATCH-TOKEN"))
	for _, n := range []string{"urgent", "later"} {
		if st := e.load(f[n].ID).State; st.Status != elicitation.StatusPending || len(e.decidedEntries(f[n].ID)) != 0 {
			t.Fatalf("step 1 decided %s: %s", n, st.Status)
		}
	}

	r := e.confirm("bob", b, "submitted", "batch ok")
	got := outcomes(r.Body)
	if r.Status != http.StatusOK || got[f["urgent"].ID] != "Approved." || got[f["later"].ID] != "Approved." || len(got) != 2 {
		t.Fatalf("confirm: %d %v\n%s", r.Status, got, r.Body)
	}
	compareGolden(t, "batch-done", f.normalize(r.Body))
	for _, n := range []string{"urgent", "later"} {
		rec := e.load(f[n].ID)
		if rec.State.Status != elicitation.StatusSubmitted || rec.State.DecidedBy != "bob@example.com" || rec.State.DecidedVia != elicitation.ViaPage || elicitation.CommentOf(rec.Answer) != "batch ok" {
			t.Errorf("%s: %+v", n, rec.State)
		}
		if d := e.decidedEntries(f[n].ID); len(d) != 1 || d[0].Principal != "bob@example.com" || d[0].Issuer != "https://idp.test" {
			t.Errorf("%s: decided entries %+v", n, d)
		}
	}
	for _, n := range []string{"region", "form"} {
		if st := e.load(f[n].ID).State; st.Status != elicitation.StatusPending {
			t.Errorf("left-out %s decided: %s", n, st.Status)
		}
	}
	// The same confirmation again (a double tap): each answered with the
	// success it was, nothing decided twice.
	if r := e.confirm("bob", b, "submitted", "batch ok"); r.Status != http.StatusOK || outcomes(r.Body)[f["later"].ID] != "Approved." {
		t.Errorf("resent: %d %v", r.Status, outcomes(r.Body))
	}
	if d := e.decidedEntries(f["later"].ID); len(d) != 1 {
		t.Errorf("resent confirmation: %d decided entries", len(d))
	}
}

// TestBatchDecline: a decline goes through the same path; a quorum's
// approval in a batch is counted as the reviewer's vote.
func TestBatchDeclineAndQuorum(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	b := e.selectBatch("bob", url.Values{"decision": {"declined"}, "id": f.ids("later")})
	r := e.confirm("bob", b, "declined", "")
	if st := e.load(f["later"].ID).State; r.Status != http.StatusOK || outcomes(r.Body)[f["later"].ID] != "Declined." || st.Status != elicitation.StatusDeclined {
		t.Fatalf("decline: %d %v %s", r.Status, outcomes(r.Body), st.Status)
	}
	b = e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": f.ids("quorum")})
	r = e.confirm("bob", b, "submitted", "")
	if got := outcomes(r.Body)[f["quorum"].ID]; !strings.Contains(got, "counted (1 of 2)") {
		t.Fatalf("quorum: %q", got)
	}
	if d := e.decidedEntries(f["quorum"].ID); len(d) != 1 || d[0].Action != elicitation.ActionApproved || d[0].Principal != "bob@example.com" {
		t.Errorf("quorum entries %+v", d)
	}
	// Bob's approval is counted: a second batch leaves it out.
	b = e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": f.ids("quorum")})
	if len(b.ids) != 0 || !strings.Contains(b.outcomes[f["quorum"].ID], "already counted") || b.token != "" {
		t.Errorf("second batch of the quorum: %v %v", b.ids, b.outcomes)
	}
}

// TestBatchRefusesAnotherReviewersRequest: a batch naming a request the
// reviewer may not decide (named reviewers, the owner bar, an unknown id)
// is refused whole with a clear reason, at either step; nothing is
// decided and nothing recorded on any request.
func TestBatchRefusesAnotherReviewersRequest(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	trails := map[string]int{}
	for n := range f {
		trails[n] = len(e.audit(f[n]).Entries)
	}
	for _, tc := range []struct{ name, other string }{
		{"another reviewer's (carol named)", f["carols"].ID},
		{"his own agent's (owner bar)", f["bobs"].ID},
		{"no such request", "AAAAAAAAAAAAAAAAAAAAAA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": {f["later"].ID, tc.other}})
			if b.status != http.StatusForbidden || !strings.Contains(b.body, "You cannot decide this batch") || !strings.Contains(b.body, "Nothing was decided") || b.token != "" {
				t.Errorf("step 1: %d\n%s", b.status, b.body)
			}
			// Step 2 with a token bob got for "later" alone, the other id
			// added: the token does not cover it.
			ok := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": {f["later"].ID}})
			ok.ids = append(ok.ids, tc.other)
			if r := e.confirm("bob", ok, "submitted", ""); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "nothing was decided") {
				t.Errorf("step 2, a token without it: %d", r.Status)
			}
			// A token that does cover it (minted here: step 1 never gives
			// one): step 2 checks again, and refuses the batch whole.
			ctx := elicitation.WithIdentity(context.Background(), reviewers["bob"])
			tok, err := e.keys.Seal(pagetoken.Claims{ElicitationID: review.BatchSubject(elicitation.DecisionSubmitted, ok.ids), RenderID: "minted",
				Expires: e.clock.Now().Add(time.Minute), Reviewer: review.TokenReviewer(ctx)})
			if err != nil {
				t.Fatal(err)
			}
			ok.token = tok
			if r := e.confirm("bob", ok, "submitted", ""); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "You cannot decide this batch") || !strings.Contains(r.Body, "Nothing was decided") {
				t.Errorf("step 2, a token with it: %d\n%s", r.Status, r.Body)
			}
		})
	}
	for n := range f {
		if st := e.load(f[n].ID).State; st.Status != elicitation.StatusPending {
			t.Errorf("%s decided: %s", n, st.Status)
		}
		if got := len(e.audit(f[n]).Entries); got != trails[n] {
			t.Errorf("%s: %d audit entries, was %d", n, got, trails[n])
		}
	}
}

// TestBatchToken: the confirmation is bound to who, which requests and
// which decision, for a while; each refusal decides nothing.
func TestBatchToken(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": f.ids("later", "urgent")})
	page := tokenRE.FindStringSubmatch(e.getAs("bob", review.Path(f["later"].ID, elicitation.NoKey)).Body)
	for _, tc := range []struct {
		name, who, decision string
		mut                 func(batch) batch
		want                string
	}{
		{"carol sends bob's", "carol", "submitted", nil, "not valid"},
		{"another decision", "bob", "declined", nil, "not valid"},
		{"one request less", "bob", "submitted", func(b batch) batch { b.ids = b.ids[:1]; return b }, "not valid"},
		{"no token", "bob", "submitted", func(b batch) batch { b.token = ""; return b }, "not valid"},
		{"a forged token", "bob", "submitted", func(b batch) batch { b.token += "x"; return b }, "not valid"},
		{"a request's page token", "bob", "submitted", func(b batch) batch { b.token, b.ids = htmlUnescape(page[1]), b.ids[:1]; return b }, "not valid"},
	} {
		c := b
		if tc.mut != nil {
			c = tc.mut(b)
		}
		if r := e.confirm(tc.who, c, tc.decision, ""); r.Status != http.StatusForbidden || !strings.Contains(r.Body, tc.want) || !strings.Contains(r.Body, "nothing was decided") {
			t.Errorf("%s: %d\n%s", tc.name, r.Status, r.Body)
		}
	}
	// The confirmation itself sent from another site.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(url.Values{"token": {b.token}, "decision": {"submitted"}, "id": b.ids}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	res, err := e.as("bob").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, res); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "another site") {
		t.Errorf("cross-origin confirmation: %d", r.Status)
	}
	e.clock.Add(16 * time.Minute)
	if r := e.confirm("bob", b, "submitted", ""); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "too old") {
		t.Errorf("expired: %d", r.Status)
	}
	for _, n := range []string{"later", "urgent"} {
		if st := e.load(f[n].ID).State; st.Status != elicitation.StatusPending {
			t.Errorf("%s decided: %s", n, st.Status)
		}
	}
}

// TestBatchDecidedMeanwhile: a request decided between the confirmation
// page and its sending is reported as such; the others are decided.
func TestBatchDecidedMeanwhile(t *testing.T) {
	e := newSignedInEnv(t)
	f := newInboxFixture(e)
	b := e.selectBatch("bob", url.Values{"decision": {"submitted"}, "id": f.ids("later", "urgent")})
	if r := e.decideAs("eve", f["later"], "declined"); r.Status != http.StatusOK {
		t.Fatal(r.Status)
	}
	r := e.confirm("bob", b, "submitted", "")
	got := outcomes(r.Body)
	if r.Status != http.StatusOK || got[f["urgent"].ID] != "Approved." || !strings.Contains(got[f["later"].ID], "already been answered") || !strings.Contains(r.Body, "1 of 2 approved, 1 not decided") {
		t.Fatalf("%d %v", r.Status, got)
	}
	if st := e.load(f["later"].ID).State; st.Status != elicitation.StatusDeclined || st.DecidedBy != "eve@example.com" {
		t.Errorf("eve's decision changed: %+v", st)
	}
}

// TestBatchAllMatching: "every request that matches" takes the filter's
// most urgent, at most review.MaxBatch, and says when the bound cut the
// list; more ticked ids than the bound, none, or a bad filter are a 400
// that decides nothing; so is a batch from another site (403).
func TestBatchAllMatching(t *testing.T) {
	e := newSignedInEnv(t)
	var made []string
	for i := range review.MaxBatch + 5 {
		made = append(made, e.create("bulk-bot", elicitation.Input{Message: fmt.Sprintf("bulk %d", i), TimeoutSeconds: 600 + i}).ID)
	}
	e.create("other-bot", elicitation.Input{Message: "other", TimeoutSeconds: 60})
	b := e.selectBatch("bob", url.Values{"decision": {"declined"}, "all": {"1"}, "agent": {"bulk-bot"}})
	if b.status != http.StatusOK || !slices.Equal(b.ids, made[:review.MaxBatch]) || !strings.Contains(b.body, fmt.Sprintf("%d requests match; only the %d most urgent", review.MaxBatch+5, review.MaxBatch)) {
		t.Fatalf("all matching: %d, %d ids\n%s", b.status, len(b.ids), b.body)
	}
	if r := e.confirm("bob", b, "declined", ""); r.Status != http.StatusOK || !strings.Contains(r.Body, fmt.Sprintf("%d of %d declined", review.MaxBatch, review.MaxBatch)) {
		t.Fatalf("confirm: %d", r.Status)
	}
	if st := e.load(made[review.MaxBatch]).State; st.Status != elicitation.StatusPending {
		t.Errorf("past the bound: %s", st.Status)
	}
	for name, form := range map[string]url.Values{
		"too many":      {"decision": {"submitted"}, "id": made},
		"none":          {"decision": {"submitted"}},
		"no decision":   {"id": made[:1]},
		"bad decision":  {"decision": {"maybe"}, "id": made[:1]},
		"bad id":        {"decision": {"submitted"}, "id": {"a/b"}},
		"a bad filter":  {"decision": {"submitted"}, "all": {"1"}, "kind": {"form"}},
		"nothing match": {"decision": {"submitted"}, "all": {"1"}, "agent": {"nobody"}},
	} {
		if b := e.selectBatch("bob", form); b.status != http.StatusBadRequest || !strings.Contains(b.body, "Back to your inbox") || b.token != "" {
			t.Errorf("%s: %d", name, b.status)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/review/", strings.NewReader(url.Values{"decision": {"submitted"}, "id": made[review.MaxBatch:]}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err := e.as("bob").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if r := read(t, res); r.Status != http.StatusForbidden || !strings.Contains(r.Body, "another site") {
		t.Errorf("cross-site: %d", r.Status)
	}
}

// TestBatchChromium: batch triage in headless Chromium on a 375 px phone
// (light and dark), without script, axe-clean at each step; the
// screenshots of docs/review-page.md are rewritten under -update.
func TestBatchChromium(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newSignedInEnv(t)
	for i, msg := range []string{"Deploy api v1.3 to staging", "Run the nightly export", "Restart the queue workers", "Rotate the signing key"} {
		e.create("deploy-bot", elicitation.Input{Message: msg, TimeoutSeconds: 600 + 300*i})
	}
	if _, err := e.svc.Create(context.Background(), "ci-bot", elicitation.KindSelection, elicitation.Input{Message: "Pick a region", Options: raws(`{"id":"eu"}`, `{"id":"us"}`), TimeoutSeconds: 2400}); err != nil {
		t.Fatal(err)
	}
	shots := t.TempDir()
	if *update {
		shots, _ = filepath.Abs(filepath.Join("..", "..", "docs", "screenshots"))
	}
	runBrowser(t, e, []flow{
		{"name": "batch-375-light", "do": "batch", "viewport": "p375", "scheme": "light", "as": "bob", "tick": 2, "decision": "submitted",
			"confirmHeading": "Approve 2 requests?", "doneHeading": "2 of 2 approved", "shots": []string{"review-batch-select-phone.png", "review-batch-confirm-phone.png"}},
		{"name": "batch-375-dark", "do": "batch", "viewport": "p375", "scheme": "dark", "as": "carol", "tick": 1, "decision": "declined",
			"confirmHeading": "Decline 1 request?", "doneHeading": "1 of 1 declined"},
	}, shots)
	l, err := e.svc.ReviewerInbox(context.Background(), reviewers["bob"], elicitation.InboxFilter{})
	if err != nil || l.All != 2 {
		t.Errorf("after the batches bob's inbox holds %d, %v; want 2", l.All, err)
	}
}
