// Package review serves the review page (GET /review/{id}/{key}) and the
// submission endpoint (POST /review/{id}/{key}) of SPEC §4: the default
// rendering, the agent's Liquid templates inside sandboxed frames, the
// per-render page token, validation errors shown to the reviewer, the
// terminal pages and the hardening headers. The page runs no script.
//
// The two handlers are independent, so that each can be mounted alone (the
// review function serves GET, the submit function POST).
package review

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/templates"
)

// Service is what the handlers need of the elicitation service;
// *elicitation.Service implements it.
type Service interface {
	// OpenReview checks the review key and reads the request, auditing the render.
	OpenReview(ctx context.Context, id, key string) (elicitation.Review, error)
	// Receipt checks the review key and reads the request without auditing
	// a render: what the page shows after a decision.
	Receipt(ctx context.Context, id, key string) (elicitation.Review, error)
	// Submit validates a submission and lands it exactly once.
	Submit(ctx context.Context, id, key string, sub elicitation.Submission) (elicitation.State, error)
	// ApprovalRefusal says whether the signed-in reviewer's approval of a
	// request read by Receipt would be refused by its quorum
	// (elicitation.ErrAlreadyApproved, ErrSeatApproved), recording nothing.
	ApprovalRefusal(ctx context.Context, rec elicitation.Record) error
	// RefuseSubmission audits a submission refused before Submit.
	RefuseSubmission(ctx context.Context, id, key, by, reason string) error
	// ReviewerInbox lists the pending requests a signed-in reviewer may
	// decide.
	ReviewerInbox(ctx context.Context, id elicitation.Identity, f elicitation.InboxFilter) (elicitation.InboxListing, error)
	// Rules lists the signed-in reviewer's standing approvals; RevokeRule
	// revokes one of them; StandingMaxTTL is how long one may last.
	Rules(ctx context.Context) ([]elicitation.Rule, error)
	RevokeRule(ctx context.Context, id string) (elicitation.Rule, error)
	StandingMaxTTL() time.Duration
	// Delegate, EndDelegation and ReviewerDelegations are the inbox's
	// out-of-office section (delegation.go).
	Delegate(ctx context.Context, id elicitation.Identity, in elicitation.DelegationInput) (elicitation.Delegation, error)
	EndDelegation(ctx context.Context, id elicitation.Identity, delegationID string) (elicitation.Delegation, error)
	ReviewerDelegations(ctx context.Context, id elicitation.Identity) (from, to []elicitation.Delegation, err error)
}

// Tokens seals and opens page tokens; *pagetoken.Keyring implements it.
type Tokens interface {
	Seal(c pagetoken.Claims) (string, error)
	Open(token string, now time.Time) (pagetoken.Claims, error)
}

// Options configure the handlers. Service and Tokens are required; zero
// values of the others mean the defaults named.
type Options struct {
	Service Service
	Tokens  Tokens
	// Logger receives internal errors (never review keys, tokens or
	// submitted values); default: discard.
	Logger *slog.Logger
	// Now is the clock of page tokens and of the "answer by" line; default
	// time.Now. Give it the Service's clock.
	Now func() time.Time
	// NewRenderID names each render (the page token's render id, used as
	// the submission id); default pagetoken.NewRenderID.
	NewRenderID func() string
	// TokenTTL is how long a rendered page can be submitted; never beyond
	// the request's expiresAt. Default 1 h.
	TokenTTL time.Duration
	// MaxBodyBytes caps a submission's body; default 512 KiB.
	MaxBodyBytes int64
	// MaxValueBytes caps any one submitted value; default 32 KiB.
	MaxValueBytes int
	// Templates renders the agent's Liquid templates; default
	// NewTemplateChecker(). Use the checker given to the Service.
	Templates *TemplateChecker
	// FrameImageSources is the CSP source list for images in template
	// frames; default "https: data:". "'none'" disallows them.
	FrameImageSources string
	// TrustedOrigins are origins besides the request's own host that a
	// submission may come from (CheckOrigin): the public URL's origin,
	// when a proxy or tunnel in front changes the Host header.
	TrustedOrigins []string
	// Insights computes the signed-in reviewers' Insights page
	// (/review/insights, insights.go); nil: the page is not found.
	Insights InsightsSource
	// Decisions counts the signed-in reviewers' POSTs that change
	// something, per reviewer (their principal) and in all (limit.go);
	// nil: none are counted.
	Decisions *ratelimit.Limiter
	// InboxReads counts the signed-in reviewers' inbox views (each reads
	// up to elicitation.MaxInbox+1 pending entries), per reviewer and in
	// all; default DefaultInboxReadsPerReviewer and DefaultInboxReads.
	InboxReads *ratelimit.Limiter
}

// Defaults of Options.
const (
	DefaultTokenTTL      = time.Hour
	DefaultMaxBodyBytes  = 512 << 10
	DefaultMaxValueBytes = 32 << 10
	// DefaultInboxReadsPerReviewer and DefaultInboxReads bound the inbox
	// views (Options.InboxReads), each coming back evenly over a minute:
	// one reviewer's, and everyone's.
	DefaultInboxReadsPerReviewer = 60
	DefaultInboxReads            = 300
)

// Handler serves the review page and the submission endpoint: its
// Options, with the defaults in place, and what New builds of them.
type Handler struct {
	Options
	csp                            string
	page                           *template.Template
	pageCSS, inboxCSS, insightsCSS template.CSS
	insightsCache                  insightsCache
}

// New returns a Handler for o.
func New(o Options) *Handler {
	h := &Handler{Options: o}
	h.Logger = cmp.Or(h.Logger, slog.New(slog.DiscardHandler))
	if h.Now == nil {
		h.Now = time.Now
	}
	if h.NewRenderID == nil {
		h.NewRenderID = pagetoken.NewRenderID
	}
	if h.InboxReads == nil {
		h.InboxReads = ratelimit.New(ratelimit.Rate{Count: DefaultInboxReadsPerReviewer, Per: time.Minute},
			ratelimit.Rate{Count: DefaultInboxReads, Per: time.Minute}, 10000)
	}
	h.TokenTTL = orDefault(h.TokenTTL, DefaultTokenTTL)
	h.MaxBodyBytes = orDefault(h.MaxBodyBytes, DefaultMaxBodyBytes)
	h.MaxValueBytes = orDefault(h.MaxValueBytes, DefaultMaxValueBytes)
	if h.Templates == nil {
		h.Templates = NewTemplateChecker()
	}
	img := o.FrameImageSources
	if strings.TrimSpace(img) == "" {
		img = "https: data:"
	}
	h.csp = csp(img)
	h.page = template.Must(template.New("").ParseFS(templates.FS, "page.html", "inbox.html", "insights.html"))
	h.pageCSS = template.CSS(mustRead("page.css"))
	h.inboxCSS = template.CSS(mustRead("inbox.css"))
	h.insightsCSS = template.CSS(mustRead("insights.css"))
	return h
}

// orDefault is v, or def when v is not positive (an Options field left
// zero).
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// csp is the page's Content-Security-Policy. No script at all; styles
// inline only (the page's own and, inside the frames, the agent's css and
// style attributes: CSS cannot run script); images only in the frames'
// allowed sources; no fetches, fonts, media, objects or workers; forms post
// only to this server; no <base>; the page may not be framed. srcdoc frames
// inherit this policy, and frame-src 'none' stops a link in a frame from
// loading another page into it.
func csp(img string) string {
	return "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src " + img +
		"; frame-src 'none'; child-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// Path is the review page's path for a request: GET renders it, POST
// submits. With key elicitation.NoKey it is the signed-in reviewer's path,
// /review/{id}, which the inbox links to.
func Path(id, key string) string {
	if key == elicitation.NoKey {
		return "/review/" + url.PathEscape(id)
	}
	return "/review/" + url.PathEscape(id) + "/" + url.PathEscape(key)
}

// Routes registers the review routes on mux: GET and POST
// /review/{id}/{key} (the review link) and /review/{id} (the same page for
// a signed-in reviewer who may decide, without the key), and GET /review/
// (the signed-in reviewer's inbox).
func (h *Handler) Routes(mux *http.ServeMux) {
	// The inbox's POSTs are its forms: a batch, out of office, revoking a
	// standing approval.
	for _, p := range []string{"/review/{id}/{key}", "/review/{id}", "/review/{$}"} {
		mux.Handle("GET "+p, h.PageHandler())
		mux.Handle("POST "+p, h.SubmitHandler())
		// Any other method: the mux's own 405 would go out without the
		// page's headers (CSP, no-store, the same-origin referrer policy).
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD, POST")
			h.respond(w, r, outMethod, reply{})
		})
	}
	// A truncated or extended review link: the not-found page, with the
	// page's headers, rather than the mux's bare 404.
	mux.HandleFunc("/review/", func(w http.ResponseWriter, r *http.Request) { h.respond(w, r, outNotFound, reply{}) })
}

// PageHandler serves GET /review/{id}/{key} and /review/{id}: the
// request's page while it is pending, its final state after (200), 404 for
// an unknown id, a wrong key, or, without the key, a reviewer who may not
// decide it. It writes audit entries (the render) but never decisions.
// Mounted alone (the review function), it serves the inbox at /review/
// too.
func (h *Handler) PageHandler() http.Handler { return http.HandlerFunc(h.servePage) }

// SubmitHandler serves POST /review/{id}/{key} and /review/{id}.
func (h *Handler) SubmitHandler() http.Handler { return http.HandlerFunc(h.serveSubmit) }

// pathIDs reads the id and the key (elicitation.NoKey for /review/{id})
// from the route's wildcards, or, when the handler is mounted alone, from
// the segments after the first "review" one; root says the path is the
// review path's root itself (the inbox).
func pathIDs(r *http.Request) (id, key string, ok, root bool) {
	if id = r.PathValue("id"); id != "" {
		return id, r.PathValue("key"), true, false
	}
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	i := slices.Index(segs, "review")
	if i < 0 {
		return "", "", false, false
	}
	switch rest := segs[i+1:]; {
	case len(rest) == 0 || len(rest) == 1 && rest[0] == "":
		return "", "", false, true
	case len(rest) == 1:
		return rest[0], elicitation.NoKey, true, false
	case len(rest) == 2 && rest[0] != "" && rest[1] != "":
		return rest[0], rest[1], true, false
	}
	return "", "", false, false
}

// headers sets the hardening headers of every page the review routes serve
// (the review page's own and, through SignInPage, the sign-in pages of
// internal/reviewauth): HTML, the page's Content-Security-Policy, never
// framed, cached, indexed or sent a referrer.
func (h *Handler) headers(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Pragma", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
	hd.Set("X-Robots-Tag", "noindex, nofollow")
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.respond(w, r, outMethod, reply{})
		return
	}
	id, key, ok, root := pathIDs(r)
	switch {
	case root && !strings.HasSuffix(r.URL.Path, "/"):
		// /review: the inbox's relative links need the slash. A relative
		// Location (http.Redirect would resolve it against the path the
		// handler sees, without a stage the gateway stripped).
		h.headers(w)
		w.Header().Set("Location", "review/")
		w.WriteHeader(http.StatusFound)
		return
	case root:
		h.serveInbox(w, r)
		return
	case !ok:
		h.respond(w, r, outNotFound, reply{})
		return
	case id == InsightsPath && key == elicitation.NoKey:
		h.serveInsights(w, r)
		return
	}
	rv, err := h.Service.OpenReview(r.Context(), id, key)
	if err != nil {
		h.respond(w, r, failed(err), reply{id: id, key: key, err: err})
		return
	}
	h.respond(w, r, shown(rv.State, false), reply{id: id, key: key, review: rv})
}

// failed is the outcome of a read that failed.
func failed(err error) outcome {
	switch {
	case errors.Is(err, elicitation.ErrNotFound):
		return outNotFound
	case elicitation.CodeOf(err) == elicitation.CodeForbidden:
		return outForbidden
	}
	return outInternal
}

func (h *Handler) write(w http.ResponseWriter, status int, v *pageView) {
	v.PageCSS = h.pageCSS
	h.execute(w, status, "page", v)
}

// execute writes the page template name with v, or a bare 500 when the
// template fails.
func (h *Handler) execute(w http.ResponseWriter, status int, name string, v any) {
	h.headers(w)
	var b strings.Builder
	if err := h.page.ExecuteTemplate(&b, name, v); err != nil {
		h.Logger.Error("review "+name+" template", "err", err)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal error\n"))
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}
