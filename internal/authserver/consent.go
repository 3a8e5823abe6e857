package authserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/templates"
)

// ConsentView is what the consent page shows.
type ConsentView struct {
	Title, Message string
	Person         string
	ClientName     string
	ClientID       string // shown when it says more than the name: a metadata document's URL
	RedirectHost   string
	Can            []string
	ID, Token      string
	PageCSS        template.CSS
	// redirectScheme is the private-use scheme the answer sends the
	// browser to, if any: the page's form-action must allow it.
	redirectScheme string
}

// ConsentPage writes the consent page (or its outcome, when Message is
// set) with status.
type ConsentPage func(w http.ResponseWriter, status int, v ConsentView)

var consentTemplate = sync.OnceValues(func() (*template.Template, error) {
	return template.ParseFS(templates.FS, "consent.html")
})

var pageCSS = sync.OnceValue(func() template.CSS {
	b, _ := templates.FS.ReadFile("page.css")
	return template.CSS(b) // #nosec G203 -- our own embedded stylesheet
})

func defaultConsent(w http.ResponseWriter, status int, v ConsentView) {
	t, err := consentTemplate()
	if err != nil {
		http.Error(w, "The consent page is unavailable.", http.StatusInternalServerError)
		return
	}
	v.PageCSS = pageCSS()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// form-action covers the redirect that follows the form's POST (as
	// Chromium enforces it): to the client, over https, loopback http or
	// its private-use scheme.
	formAction := "'self' https: http:"
	if v.redirectScheme != "" {
		formAction += " " + v.redirectScheme + ":"
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_ = t.ExecuteTemplate(w, "consent", v)
}

// scopeText says what a scope lets a client do, in the person's words.
var scopeText = map[string]string{
	"elicitation":           "ask you (and the reviewers you name) to approve, fill in or choose, and read the answers",
	oidc.ScopeOfflineAccess: "stay connected until you revoke it or 30 days pass",
	oidc.ScopeOpenID:        "know who you are",
	oidc.ScopeEmail:         "see your e-mail address",
	oidc.ScopeProfile:       "see your name",
}

// consent serves ConsentPath behind reviewer sign-in: GET shows what the
// client asks, POST (from this origin, by the person it was shown to)
// allows or denies it (decision "allow" or "deny"; anything else decides
// nothing) and sends the browser back to the client.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	who, ok := elicitation.IdentityFrom(r.Context())
	switch {
	case r.Method != http.MethodGet && r.Method != http.MethodPost:
		w.Header().Set("Allow", "GET, POST")
		s.cfg.Consent(w, http.StatusMethodNotAllowed, ConsentView{Title: "Not here", Message: "This address only shows a consent page."})
		return
	case !ok:
		s.cfg.Consent(w, http.StatusUnauthorized, ConsentView{Title: "Sign in first", Message: "Open the link from your application again to sign in."})
		return
	case review.CheckOrigin(r, nil) != nil:
		s.cfg.Consent(w, http.StatusForbidden, ConsentView{Title: "Refused", Message: "This answer came from another site: nothing was changed."})
		return
	}
	person := who.Principal()
	l, err := s.login(r.Context(), r.FormValue("id"))
	switch {
	case errors.As(err, new(*oidc.Error)) || (err == nil && l.Consented): // s.login's unknown or expired
		s.cfg.Consent(w, http.StatusBadRequest, ConsentView{Title: "This sign-in has ended", Message: "It expired or was already answered. Start again from your application."})
		return
	case err != nil:
		s.unreadable(w, r, person, fmt.Errorf("read the sign-in: %w", err))
		return
	}
	c, err := s.cfg.Clients(r.Context(), l.ClientID)
	switch {
	case errors.Is(err, ErrUnknownClient):
		s.cfg.Consent(w, http.StatusBadRequest, ConsentView{Title: "Unknown application", Message: "The application is no longer registered. Start again from it."})
		return
	case err != nil:
		s.unreadable(w, r, person, fmt.Errorf("find the sign-in's client: %w", err))
		return
	}
	if r.Method == http.MethodGet {
		s.cfg.Consent(w, http.StatusOK, s.consentView(l, c, person))
		return
	}
	if !hmac.Equal([]byte(r.PostFormValue("t")), []byte(s.consentToken(l.ID, person))) {
		s.cfg.Consent(w, http.StatusForbidden, ConsentView{Title: "Refused", Message: "This page was shown to someone else, or is out of date: nothing was changed.", Person: person})
		return
	}
	decision := r.PostFormValue("decision")
	if decision != "allow" && decision != "deny" {
		s.cfg.Consent(w, http.StatusBadRequest, ConsentView{Title: "Not understood", Message: "The answer was neither Allow nor Deny: nothing was changed. Go back and press one of them.", Person: person})
		return
	}
	s.answer(w, r, l, who, decision == "allow")
}

func (s *Server) consentView(l *login, c Client, person string) ConsentView {
	v := ConsentView{Title: "Connect an application", Person: person, ClientName: c.Name, ID: l.ID, Token: s.consentToken(l.ID, person)}
	if v.ClientName == "" {
		v.ClientName = "An application"
	}
	if strings.HasPrefix(c.ID, "https://") {
		v.ClientID = c.ID
	}
	if u, err := url.Parse(l.RedirectURI); err == nil {
		v.RedirectHost = u.Host
		if u.Scheme != "https" && u.Scheme != "http" {
			// url.Parse keeps a scheme of letters, digits, +, - and .
			// only: a CSP scheme-source as it is.
			v.redirectScheme = u.Scheme
		}
		if u.Host == "" {
			v.RedirectHost = u.Scheme + ":"
		}
	}
	for _, sc := range l.Scopes {
		if t, ok := scopeText[sc]; ok {
			v.Can = append(v.Can, t)
		}
	}
	return v
}

// consentToken binds the consent form to the sign-in and the person it
// was shown to.
func (s *Server) consentToken(loginID, person string) string {
	m := hmac.New(sha256.New, s.secret("consent form"))
	m.Write([]byte("consent\x00" + loginID + "\x00" + person))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// answer records the person's decision and sends the browser back to
// the client: a code (and RFC 9207's iss) when allowed, access_denied
// otherwise.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, l *login, who elicitation.Identity, allow bool) {
	ctx := op.ContextWithIssuer(r.Context(), s.cfg.Base(r))
	issuer := op.IssuerFromContext(ctx)
	var target string
	if allow {
		l.Principal, l.Person, l.AuthTime, l.Consented = who.Principal(), who, s.now(), true
		v, err := put(ctx, s.cfg.Store, kindLogin, l.ID, l, l.Created.Add(s.cfg.LoginTTL), l.version)
		if err == nil {
			l.version = v
			target, err = op.BuildAuthResponseCallbackURL(ctx, l, s.provider)
		}
		if absent(err) {
			s.cfg.Consent(w, http.StatusBadRequest, ConsentView{Title: "This sign-in has ended", Message: "It could not be completed. Start again from your application.", Person: who.Principal()})
			return
		}
		if err != nil {
			s.unreadable(w, r, who.Principal(), fmt.Errorf("complete an authorization: %w", err))
			return
		}
	} else {
		_ = storage{s}.DeleteAuthRequest(ctx, l.ID)
		q := url.Values{"error": {"access_denied"}, "error_description": {"the person denied the request"}}
		if l.State != "" {
			q.Set("state", l.State)
		}
		target = withQuery(l.RedirectURI, q)
	}
	http.Redirect(w, r, withQuery(target, url.Values{"iss": {issuer}}), http.StatusSeeOther)
}

// unreadable answers a consent page the store (or the client lookup)
// failed under: a 500 page asking the person to try again, since the
// sign-in may well be intact; err goes to the log, never to the page.
func (s *Server) unreadable(w http.ResponseWriter, r *http.Request, person string, err error) {
	s.log.ErrorContext(r.Context(), "consent page", "err", err)
	s.cfg.Consent(w, http.StatusInternalServerError, ConsentView{Title: "Could not read this sign-in", Message: "The server could not read this sign-in just now: try again in a moment.", Person: person})
}

// withQuery adds q to u's query.
func withQuery(u string, q url.Values) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	all := p.Query()
	for k, v := range q {
		all[k] = v
	}
	p.RawQuery = all.Encode()
	return p.String()
}
