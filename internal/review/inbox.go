package review

import (
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
)

// The reviewer's inbox: GET /review/ (the review path's root) lists, for
// the signed-in reviewer, the pending requests they may decide
// (Service.ReviewerInbox, which applies the one may-decide rule), most
// urgent first, narrowed by the query parameters agent (the principal that
// asked) and kind, a page of at most DefaultInboxRows rows at a time
// (after: the place the page ahead ended; before: where the page after
// began; inboxCursor). Each row links to
// /review/{id}, the page a signed-in reviewer opens without the review key
// (elicitation.NoKey). No script: the filter is a GET form.

// MaxAgentFilter bounds the agent query parameter, in characters.
const MaxAgentFilter = 256

// shell is what the inbox's pages (the "inbox", "batch" and "insights"
// templates) share: the title, the styles, who is signed in, and the
// problem shown instead of the page, if any.
type shell struct {
	Title                          string
	PageCSS, InboxCSS, InsightsCSS template.CSS
	Reviewer                       string
	Problem                        *inboxProblem
}

func (s *shell) base() *shell { return s }

// problemShell is a page that shows only a problem: its heading, its
// sentences and, unless nil, a link.
func problemShell(who, heading string, l *link, text ...string) shell {
	return shell{Title: heading, Reviewer: who, Problem: &inboxProblem{Heading: heading, Text: text, Link: l}}
}

// The links of the problem pages.
var (
	reloadLink = &link{Href: "", Text: "Reload the page"}
	inboxLink  = &link{Href: "./", Text: "Back to your inbox"}
)

// writeShell writes the template name with v, a view of the inbox's pages.
func (h *Handler) writeShell(w http.ResponseWriter, status int, name string, v interface{ base() *shell }) {
	s := v.base()
	s.PageCSS, s.InboxCSS, s.InsightsCSS = h.pageCSS, h.inboxCSS, h.insightsCSS
	h.execute(w, status, name, v)
}

// inboxView is what inbox.html renders.
type inboxView struct {
	shell

	Count    string // "12", or "3 of 12" when filtered
	Shown    string // how many rows, of how many
	Filtered bool
	// Next links to the page past this one, Prev to the page ahead of it
	// (the first page when that one is), First to the most urgent when
	// Prev does not lead there.
	Next, Prev, First string
	Agents            []choice
	Kinds             []choice
	Rows              []inboxRow
	// Standing lists the reviewer's standing approvals (inbox_rules.go).
	Standing *rulesView
	// Delegation is the out-of-office section (delegation.go).
	Delegation *delegationView
}

type inboxProblem struct {
	Heading string
	Text    []string
	Link    *link
}

type link struct{ Href, Text string }

type choice struct {
	Value, Label string
	Selected     bool
}

type inboxRow struct {
	Href, Headline, Kind string
	By                   string
	Anonymous            bool
	Left, ExpiresISO     string
	Soon                 bool
	Quorum               string
	// ID and Pick: the row's checkbox of a batch (batch.go), on the
	// approvals (a selection always needs its options picked).
	ID   string
	Pick bool
}

// soonLeft is the time left under which a row's deadline is marked.
const soonLeft = 10 * time.Minute

// kindLabels name the kinds as the review page does.
var kindLabels = []choice{
	{Value: "", Label: "All kinds"},
	{Value: string(elicitation.KindApproval), Label: "Approve or decline"},
	{Value: string(elicitation.KindSelection), Label: "Choose for the agent"},
}

// serveInbox serves GET /review/ (servePage: the review path's root): the
// signed-in reviewer's inbox.
func (h *Handler) serveInbox(w http.ResponseWriter, r *http.Request) {
	id, signedIn := elicitation.IdentityFrom(r.Context())
	if !signedIn {
		// Without sign-in on this server (or, behind sign-in, a request
		// that reached the handler without a session).
		h.writeShell(w, http.StatusNotFound, "inbox", &inboxView{shell: problemShell("", "The inbox needs reviewer sign-in", nil,
			"This page lists the requests waiting for you, which needs to know who you are: this server does not sign reviewers in, so there is no inbox to show.",
			"Open the review link you were sent to answer a request. To have an inbox, the operator turns on reviewer sign-in.")})
		return
	}
	f, bad := inboxFilter(r.URL.Query())
	if bad != "" {
		h.writeShell(w, http.StatusBadRequest, "inbox", &inboxView{shell: problemShell(id.Principal(), "This filter cannot be read",
			&link{Href: "./", Text: "Show every request waiting for you, most urgent first"}, bad)})
		return
	}
	if wait := h.InboxReads.Take(id.Principal(), h.Now()); wait > 0 {
		h.Logger.WarnContext(r.Context(), "review inbox refused", "reason", "reviewer over their share of inbox views")
		ratelimit.RetryAfter(w.Header(), wait)
		h.writeShell(w, http.StatusTooManyRequests, "inbox", &inboxView{shell: problemShell(id.Principal(), "Too many views of the inbox", reloadLink,
			fmt.Sprintf("You have opened your inbox more often than this server takes in this time (or everyone has). Try again in %s.", elicitation.HumanDuration(wait)))})
		return
	}
	l, err := h.Service.ReviewerInbox(r.Context(), id, f)
	if err != nil {
		if elicitation.CodeOf(err) == elicitation.CodeInvalidArgument {
			// The Service has no sign-in: the same page as without a session.
			h.writeShell(w, http.StatusNotFound, "inbox", &inboxView{shell: problemShell("", "The inbox needs reviewer sign-in", nil,
				"This server does not sign reviewers in, so there is no inbox to show. Open the review link you were sent to answer a request.")})
			return
		}
		h.Logger.ErrorContext(r.Context(), "review inbox", "err", err)
		h.writeShell(w, http.StatusInternalServerError, "inbox", &inboxView{shell: problemShell(id.Principal(), "Something went wrong", reloadLink,
			"The server could not list the requests waiting for you. Try again in a moment.")})
		return
	}
	v := inboxPage(l, f, id.Principal())
	v.Standing = h.standingRules(r.Context())
	v.Delegation = h.delegationSection(r.Context(), id)
	h.writeShell(w, http.StatusOK, "inbox", v)
}

// inboxFilter reads the filter's query parameters, or says what is wrong
// with them.
func inboxFilter(q url.Values) (elicitation.InboxFilter, string) {
	f := elicitation.InboxFilter{Owner: strings.TrimSpace(q.Get("agent")), Kind: elicitation.Kind(q.Get("kind"))}
	switch {
	case len(q["agent"]) > 1 || len(q["kind"]) > 1:
		return f, "Give at most one agent and one kind."
	case utf8.RuneCountInString(f.Owner) > MaxAgentFilter || !utf8.ValidString(f.Owner):
		return f, fmt.Sprintf("The agent must be a principal of at most %d characters.", MaxAgentFilter)
	case f.Kind != "" && f.Kind != elicitation.KindApproval && f.Kind != elicitation.KindSelection:
		return f, "The kind must be “approval” or “selection”."
	case len(q["after"])+len(q["before"]) > 1:
		return f, "Give at most one place for the page to start after or end before."
	}
	for param, c := range map[string]*elicitation.InboxCursor{"after": &f.After, "before": &f.Before} {
		if a := q.Get(param); a != "" {
			var ok bool
			if *c, ok = parseInboxCursor(a); !ok {
				return f, "The link to this page of the inbox is damaged: start again from the most urgent."
			}
		}
	}
	return f, ""
}

// The after and before parameters: a cursor as the expiry's Unix
// nanoseconds and the id, "1796400000000000000.ID". It names a place in
// the order, not a request: it opens nothing, and every row past it is
// still one the reviewer may decide (ReviewerInbox's rule), so it needs no
// signature.
func inboxCursor(c elicitation.InboxCursor) string {
	return strconv.FormatInt(c.ExpiresAt.UnixNano(), 10) + "." + c.ID
}

// maxCursorID bounds the id of a cursor or a batch, in bytes (ids are 22).
const maxCursorID = 64

// requestID reports whether s can be a request id: 1 to maxCursorID of
// base64url's characters.
func requestID(s string) bool {
	return s != "" && len(s) <= maxCursorID && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
}

func parseInboxCursor(s string) (elicitation.InboxCursor, bool) {
	at, id, ok := strings.Cut(s, ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || n <= 0 || !requestID(id) {
		return elicitation.InboxCursor{}, false
	}
	return elicitation.InboxCursor{ExpiresAt: time.Unix(0, n).UTC(), ID: id}, true
}

// pageHref is the inbox's address with f's filter and, unless c is zero,
// the page's place: param ("after" or "before") c.
func pageHref(f elicitation.InboxFilter, param string, c elicitation.InboxCursor) string {
	q := url.Values{}
	if f.Owner != "" {
		q.Set("agent", f.Owner)
	}
	if f.Kind != "" {
		q.Set("kind", string(f.Kind))
	}
	if !c.IsZero() {
		q.Set(param, inboxCursor(c))
	}
	if len(q) == 0 {
		return "./"
	}
	return "./?" + q.Encode()
}

// pager sets v's links to the pages around l's.
func pager(v *inboxView, l elicitation.InboxListing, f elicitation.InboxFilter) {
	first := pageHref(f, "", elicitation.InboxCursor{})
	if !l.Next.IsZero() {
		v.Next = pageHref(f, "after", l.Next)
	}
	switch {
	case l.Prev.IsZero() && l.Skipped > 0: // a page past the end
		v.First = first
	case l.Prev.IsZero():
	case l.Skipped <= f.Rows():
		v.Prev = first // the page ahead is the first, whole
	default:
		v.Prev, v.First = pageHref(f, "before", l.Prev), first
	}
}

// inboxPage builds the inbox of l, filtered by f, for reviewer.
func inboxPage(l elicitation.InboxListing, f elicitation.InboxFilter, reviewer string) *inboxView {
	v := &inboxView{shell: shell{Reviewer: reviewer}, Filtered: f.Owner != "" || f.Kind != ""}
	v.Count = fmt.Sprint(l.All)
	if v.Filtered {
		v.Count = fmt.Sprintf("%d of %d", l.Total, l.All)
	}
	v.Title = "Inbox (" + v.Count + "): requests waiting for you"
	for _, o := range l.Owners {
		v.Agents = append(v.Agents, choice{Value: o, Label: ownerLabel(o), Selected: o == f.Owner})
	}
	if f.Owner != "" && !slices.Contains(l.Owners, f.Owner) {
		// A filter by an agent with nothing waiting (an old link): shown,
		// so that the form says what the page shows.
		v.Agents = append(v.Agents, choice{Value: f.Owner, Label: ownerLabel(f.Owner), Selected: true})
	}
	for _, k := range kindLabels {
		k.Selected = k.Value == string(f.Kind)
		v.Kinds = append(v.Kinds, k)
	}
	v.Shown = shownText(l)
	pager(v, l, f)
	if l.Partial {
		v.Shown += fmt.Sprintf(" (Only the %d most urgent pending requests of the server were read.)", elicitation.MaxInbox)
	}
	for _, it := range l.Items {
		v.Rows = append(v.Rows, inboxRowOf(it))
	}
	return v
}

// shownText says which rows of how many a page shows.
func shownText(l elicitation.InboxListing) string {
	switch n := len(l.Items); {
	case l.All == 0:
		return "Nothing is waiting for you."
	case l.Total == 0:
		return "Nothing waiting for you matches this filter."
	case n == 0:
		return "Nothing waiting for you comes after the page you were on: the requests that did were decided or expired."
	case n == l.Total && n == 1:
		return "One request."
	case n == l.Total:
		return fmt.Sprintf("%d requests, most urgent first.", n)
	case n == 1:
		return fmt.Sprintf("Request %d of %d.", l.Skipped+1, l.Total)
	default:
		return fmt.Sprintf("Requests %d–%d of %d, most urgent first.", l.Skipped+1, l.Skipped+n, l.Total)
	}
}

func inboxRowOf(it elicitation.InboxItem) inboxRow {
	row := inboxRow{
		Href: "./" + url.PathEscape(it.ID), Headline: cmp.Or(headlineText(it.Headline), "(no message)"), By: it.Owner,
		Anonymous: it.Owner == "" || it.Owner == elicitation.Anonymous,
		Left:      elicitation.HumanDuration(it.Left) + " left", ExpiresISO: it.ExpiresAt.UTC().Format(time.RFC3339),
		Soon: it.Left < soonLeft, ID: it.ID, Pick: it.Kind == elicitation.KindApproval,
	}
	row.Kind = kindLabel(it.Kind)
	if it.Approvals > 1 {
		yours := "yours missing"
		if it.Voted {
			yours = "yours counted"
		}
		row.Quorum = fmt.Sprintf("%d of %d approvals, %s", it.Votes, it.Approvals, yours)
	}
	return row
}

// kindLabel names kind as the review page does.
func kindLabel(kind elicitation.Kind) string {
	if kind == elicitation.KindSelection {
		return kindLabels[2].Label
	}
	return kindLabels[1].Label
}

func ownerLabel(o string) string {
	if o == "" || o == elicitation.Anonymous {
		return "Agents without credentials"
	}
	return o
}

// headlineText is a headline (a message's first line) as the inbox shows
// it: the text of its Markdown, as the review page would show it but
// without the markup (emphasis, code and links as their words; raw HTML
// as written, as the page shows it), so a row is one plain line. A
// headline whose Markdown has no text (a rule, a bare marker) is shown as
// written.
func headlineText(h string) string {
	src := []byte(h)
	var b []byte
	_ = ast.Walk(markdown.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Text:
			b = append(b, t.Value(src)...)
			if t.SoftLineBreak() || t.HardLineBreak() {
				b = append(b, ' ')
			}
		case *ast.String:
			b = append(b, t.Value...)
		case *ast.RawHTML:
			for i := range t.Segments.Len() {
				seg := t.Segments.At(i)
				b = append(b, seg.Value(src)...)
			}
		}
		return ast.WalkContinue, nil
	})
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return h
}

// serveInboxPost handles POST /review/, the inbox's forms, for the
// signed-in reviewer and from this site only: revoking a standing
// approval (revoke, inbox_rules.go), the out-of-office form (delegate,
// end-delegation: delegation.go) or a batch (batch.go).
func (h *Handler) serveInboxPost(w http.ResponseWriter, r *http.Request) {
	id, signedIn := elicitation.IdentityFrom(r.Context())
	if !signedIn {
		h.batchProblem(w, http.StatusNotFound, "", "The inbox needs reviewer sign-in",
			"Deciding several requests at once needs to know who you are: this server does not sign reviewers in. Open the review link you were sent to answer a request.")
		return
	}
	who := id.Principal()
	if err := CheckOrigin(r, h.TrustedOrigins); err != nil {
		h.Logger.WarnContext(r.Context(), "inbox form refused", "err", err)
		h.batchProblem(w, http.StatusForbidden, who, "This came from another site",
			"Nothing was changed. Open your inbox yourself and do it there.")
		return
	}
	form, o := h.readForm(w, r)
	switch {
	case o == outMalformed:
		h.batchProblem(w, http.StatusBadRequest, who, "This could not be read", "The submission is not a form. Nothing was decided.")
	case o != outRecorded: // too large: the sentence of the review page's refusal
		h.batchProblem(w, outcomes[o].status, who, "This could not be read", outcomes[o].text[0])
	case h.overShare(w, r, who, form):
	case form.Has("revoke"):
		h.serveRevoke(w, r, form)
	case form.Has("delegate") || form.Has("end-delegation"):
		h.serveDelegation(w, r, id, form)
	default:
		h.serveBatch(w, r, id, form)
	}
}
