package review_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

var checkedRE = regexp.MustCompile(`name="option" value="([^"]+)" checked`)
var optionRE = regexp.MustCompile(`name="option" value="([^"]+)"`)

func values(re *regexp.Regexp, body string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestFilterRoundTrip: a long list's filter is a POST that decides nothing:
// the matches are shown, a pick the filter does not match stays on the page
// checked (in its own group), the comment is kept, Clear shows everything,
// and a filter on a decided request is refused like any POST.
func TestFilterRoundTrip(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "Pick", Options: options(40), MaxSelections: 3})
	short := e.selection(elicitation.Input{Message: "Pick", Options: options(elicitation.MaxOptions)[:5]})
	if r := e.get(short.Path()); strings.Contains(r.Body, `name="q"`) {
		t.Error("a 5-option list has a filter box")
	}
	page := e.get(c.Path())
	if !strings.Contains(page.Body, `name="q"`) || !strings.Contains(page.Body, "Filter the 40 options") {
		t.Fatal("no filter box on a 40-option list")
	}
	// "example-3" matches opt-3 and opt-30..39 (their domain); opt-7 is picked and does not match.
	r := e.post(c.Path(), url.Values{"filter": {"1"}, "q": {" Example-3 "}, "option": {"opt-7", "opt-31"}, "comment": {"keep me"}})
	if r.Status != 200 {
		t.Fatalf("filter: %d", r.Status)
	}
	if got := values(optionRE, r.Body); strings.Join(got, ",") != "opt-7,opt-3,opt-30,opt-31,opt-32,opt-33,opt-34,opt-35,opt-36,opt-37,opt-38,opt-39" {
		t.Errorf("filtered controls %v", got)
	}
	if got := values(checkedRE, r.Body); strings.Join(got, ",") != "opt-7,opt-31" {
		t.Errorf("checked after the filter %v, want the kept pick and the matching one", got)
	}
	for _, want := range []string{"Picked earlier, not matching “Example-3” (1)", "11 of 40 match “Example-3”", `value="Example-3"`, ">keep me</textarea>", "Showing 11 of 40"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("filtered page lacks %q", want)
		}
	}
	if st := e.state(c); st.Status != elicitation.StatusPending {
		t.Fatalf("a filter decided: %s", st.Status)
	}
	none := e.post(c.Path(), url.Values{"filter": {"1"}, "q": {"no such thing"}, "option": {"opt-7"}})
	if none.Status != 200 || !strings.Contains(none.Body, "No option matches") || strings.Join(values(checkedRE, none.Body), ",") != "opt-7" {
		t.Errorf("filter without matches: %d %v", none.Status, values(checkedRE, none.Body))
	}
	// A huge query is cut and its words beyond the bound ignored, not refused.
	huge := e.post(c.Path(), url.Values{"filter": {"1"}, "q": {"example-3 " + strings.Repeat("x ", 10000)}, "option": {"opt-7"}})
	if huge.Status != 200 || len(values(optionRE, huge.Body)) != 12 || strings.Count(huge.Body, "x x") > 200 {
		t.Errorf("huge query: %d, %d controls", huge.Status, len(values(optionRE, huge.Body)))
	}
	clear := e.post(c.Path(), url.Values{"filter": {"clear"}, "q": {"example-3"}, "option": {"opt-7"}})
	if n := len(values(optionRE, clear.Body)); clear.Status != 200 || n != 40 || strings.Contains(clear.Body, `value="example-3"`) {
		t.Errorf("clear: %d, %d controls", clear.Status, n)
	}
	// The filtered page's token submits what it shows.
	tok := tokenRE.FindStringSubmatch(r.Body)
	sent := e.post(c.Path(), url.Values{"token": {htmlUnescape(tok[1])}, "decision": {"submitted"}, "option": values(checkedRE, r.Body), "comment": {"keep me"}})
	if sent.Status != 200 || !strings.Contains(sent.Body, "Option 7") || !strings.Contains(sent.Body, "Option 31") {
		t.Fatalf("submit from the filtered page: %d", sent.Status)
	}
	res, err := e.svc.Result(context.Background(), "agent", c.ID)
	if err != nil || strings.Join(res.SelectedIDs, ",") != "opt-7,opt-31" || res.Comment != "keep me" {
		t.Fatalf("result %+v %v", res, err)
	}
	if late := e.post(c.Path(), url.Values{"filter": {"1"}, "q": {"x"}}); late.Status != 409 {
		t.Errorf("filter after the decision: %d, want 409", late.Status)
	}
	// Renders of filtered pages are audited as renders; the filter adds no refusal.
	var renders, refusals int
	for _, en := range e.audit(c).Entries {
		switch en.Action {
		case elicitation.ActionRendered:
			renders++
		case elicitation.ActionSubmissionRefused:
			refusals++
		}
	}
	if renders < 4 || refusals != 0 {
		t.Errorf("audit: %d renders, %d refusals", renders, refusals)
	}
}

// TestCommentAndReceipt: the comment goes with either button; one that is
// too long decides nothing and is shown again; the receipt shows what was
// recorded, read back from the store.
func TestCommentAndReceipt(t *testing.T) {
	e := newEnv(t)
	c := e.selection(elicitation.Input{Message: "Pick", Options: guggenheim})
	long := strings.Repeat("x", elicitation.MaxCommentChars+1)
	r := e.post(c.Path(), url.Values{"token": {e.token(c)}, "decision": {"declined"}, "comment": {long}})
	if r.Status != 422 || !strings.Contains(r.Body, "The comment is 2001 characters; at most 2000 are allowed.") || !strings.Contains(r.Body, ">"+long+"</textarea>") {
		t.Fatalf("long comment: %d", r.Status)
	}
	if st := e.state(c); st.Status != elicitation.StatusPending {
		t.Fatalf("a refused comment decided: %s", st.Status)
	}
	note := "None fit <the brief>:\r\nsomething in Venice & cheaper"
	r = e.post(c.Path(), url.Values{"token": {e.token(c)}, "decision": {"declined"}, "comment": {note}, "option": {"gugg-nyc"}})
	if r.Status != 200 {
		t.Fatalf("decline with comment: %d", r.Status)
	}
	for _, want := range []string{"Sent: none of these", "What was recorded", "Sat 14 Mar 2026, 09:26 UTC", "None fit &lt;the brief&gt;:\nsomething in Venice &amp; cheaper"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("receipt lacks %q", want)
		}
	}
	if strings.Contains(r.Body, "<dt>Picked</dt>") {
		t.Error("a decline's receipt lists picks")
	}
	// Opened again later, the page says what was recorded, and records the render.
	again := e.get(c.Path())
	for _, want := range []string{"This request has been answered", "What was recorded", "None fit &lt;the brief&gt;:\nsomething in Venice &amp; cheaper"} {
		if again.Status != 200 || !strings.Contains(again.Body, want) {
			t.Errorf("GET after the decision (%d) lacks %q", again.Status, want)
		}
	}
	if strings.Contains(again.Body, "<form") {
		t.Error("the decided page still has a form")
	}

	a := e.approval(elicitation.Input{Message: "Deploy?", RequestedSchema: formSchema})
	r = e.post(a.Path(), url.Values{"token": {e.token(a)}, "decision": {"submitted"}, "f.email": {"ops@example.com"}, "f.count": {"3"}, "f.tags": {"a", "c"}, "f.notify": {"true"}})
	if r.Status != 200 {
		t.Fatalf("approve: %d", r.Status)
	}
	for _, want := range []string{"<dt>Email</dt><dd>ops@example.com</dd>", "<dt>Count</dt><dd>3</dd>", "<dt>notify</dt><dd>Yes</dd>", "<dt>tags</dt><dd>a, c</dd>", "<dt>Comment</dt><dd>None</dd>"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("approval receipt lacks %q", want)
		}
	}
	// A receipt reads, it does not render: no render entry after the decision.
	tr := e.audit(a)
	if last := tr.Entries[len(tr.Entries)-1]; last.Action != elicitation.ActionDecided {
		t.Errorf("last audit entry %s, want decided", last.Action)
	}
}

// TestWhoAskedAndMessage: the page says who asked, with which client, when,
// and how long is left; the message is the Markdown subset.
func TestWhoAskedAndMessage(t *testing.T) {
	e := newEnv(t)
	c, err := e.svc.Create(context.Background(), "ci-bot", elicitation.KindApproval, elicitation.Input{
		Message: "Ship **v2**? <script>alert(1)</script>", Context: []byte(`{"a":"b \u0026 c"}`), TimeoutSeconds: 1800,
		Client: elicitation.Client{Name: "claude-code", Version: "2.1.0"},
	})

	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(5 * 60e9)
	r := e.get(created{c.State.ID, c.ReviewKey}.Path())
	for _, want := range []string{
		`Asked by <strong>ci-bot</strong> using <span class="client">claude-code 2.1.0</span>, <time datetime="2026-03-14T09:26:53Z">Sat 14 Mar 2026, 09:26 UTC</time>.`,
		"(<strong>25 minutes left</strong>)",
		"<p>Ship <strong>v2</strong>? &lt;script&gt;alert(1)&lt;/script&gt;</p>",
		`&#34;a&#34;: &#34;b &amp; c&#34;`,
	} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(r.Body, `\u0026`) {
		t.Error(`the page shows \u0026`)
	}
}
