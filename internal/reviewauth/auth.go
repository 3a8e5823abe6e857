// Package reviewauth signs reviewers in with OpenID Connect (the
// authorization code flow with PKCE, against any issuer: Google, Entra ID,
// Okta, Cognito, Keycloak) in front of the review routes, and keeps who
// they are in one signed, short-lived cookie scoped to the review path.
//
// Wrap the review handlers with Auth.Wrap: a GET without a session is
// redirected to the issuer and, once signed in, back to the page it asked
// for; every request with a valid session carries the reviewer's
// elicitation.Identity in its context, where the Service decides whether
// they may decide (named reviewers, the deployment's policy, the agent's
// own principal barred, quorums). A POST without a session goes on without
// an identity, so that the Service refuses it and audits the refusal.
//
// The session cookie ("elicitation_review") is HttpOnly, Secure,
// SameSite=Lax, Path=<base>/review, signed with keys derived from the
// page-token keyring (so the review and submit Lambda functions share it
// with nothing more than the secret they already read), and bound to the
// issuer and the subject; it lives SessionTTL (default 30 minutes) and is
// never renewed. Each sign-in in progress has its own cookie,
// "elicitation_signin_<state>" on Path=<base>/review for ten minutes (at
// most MaxLogins at once), sealed (encrypted) under keys of the same keyring: its nonce and
// PKCE verifier. A callback that fails touches neither the session nor any
// other sign-in, so a stray or stale callback signs nobody out and two
// tabs can sign in at once.
package reviewauth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/sealer"
)

// CookieName is the name of the one cookie the product sets.
const CookieName = "elicitation_review"

// CallbackPath is where the issuer sends the reviewer back, under the
// review routes' base URL: register <base>/review/oidc/callback as the
// client's redirect URI. (The review package, which owns the review
// routes, defines it.)
const CallbackPath = review.CallbackPath

// SwitchPath starts a fresh sign-in that asks the issuer to sign in again
// (prompt=login), then returns to the review path in its "next" query
// parameter: the 403 page's "Sign in with another account".
const SwitchPath = review.SwitchPath

// Defaults of Config.
const (
	DefaultSessionTTL  = 30 * time.Minute
	DefaultGroupsClaim = "groups"
	// LoginTTL is how long a sign-in may take, from the redirect to the
	// issuer to the return.
	LoginTTL = 10 * time.Minute
	// MaxGroups bounds the groups kept in the session.
	MaxGroups = 64
	// DefaultExchangesPerSource and DefaultExchanges bound the callbacks
	// that redeem a code at the issuer (Config.Exchanges): a state costs
	// one GET and its cookie opens for LoginTTL, so without a bound a
	// replayed callback would spend the client's limits at the issuer.
	// 60 from one address and 600 in all, each coming back evenly over 10
	// minutes: a reviewer signs in about once a SessionTTL.
	DefaultExchangesPerSource = 60
	DefaultExchanges          = 600
	// MaxLogins bounds the sign-ins in progress one browser keeps (tabs):
	// a new one beyond it removes the oldest, so that a flood of sign-ins
	// cannot grow the browser's cookies, and every request's headers,
	// without bound.
	MaxLogins = 4
)

// Config configures an Auth.
type Config struct {
	// Issuer is the OpenID provider's issuer URL, exactly as its discovery
	// document says (https://accounts.google.com, https://login.microsoftonline.com/TENANT/v2.0, …).
	Issuer string
	// ClientID is this deployment's client at the issuer.
	ClientID string
	// ClientSecret returns the client's secret, read when the first
	// sign-in completes (Secrets Manager on Lambda); nil, or an empty
	// secret, for a public client that relies on PKCE alone.
	ClientSecret func(ctx context.Context) (string, error)
	// Scopes requested; default openid, email, profile.
	Scopes []string
	// GroupsClaim names the claim listing the reviewer's groups (for
	// "group:NAME" reviewers); default "groups".
	GroupsClaim string
	// SessionTTL is how long a session lasts; default 30 minutes.
	SessionTTL time.Duration
	// Keys sign the cookie, the first one current: derive them from the
	// page-token keyring (pagetoken.Keyring.Derive) so that every function
	// of a deployment shares them.
	Keys []pagetoken.Key
	// Base returns the public base URL of the review routes for a request
	// (scheme, host and any path prefix such as an API Gateway stage, no
	// trailing slash): the redirect URI is Base + CallbackPath, the
	// cookie's path Base's path + "/review". Required.
	Base func(r *http.Request) string
	// HTTPClient talks to the issuer; default a client with a 5 s timeout.
	HTTPClient *http.Client
	// Now is the clock of sessions; default time.Now.
	Now func() time.Time
	// Logger receives sign-in failures (never tokens or codes).
	Logger *slog.Logger
	// Pages answers every sign-in step that does not redirect through
	// the review routes' outcomes table (*review.Handler). Required.
	Pages Pages
	// Exchanges bounds the callbacks that redeem a code at the issuer, per
	// source address (ratelimit.RemoteIP) and in all; default
	// DefaultExchangesPerSource and DefaultExchanges.
	Exchanges *ratelimit.Limiter
}

// Pages writes the page of a sign-in outcome; *review.Handler implements it.
type Pages interface {
	SignInPage(w http.ResponseWriter, r *http.Request, o review.SignInOutcome)
}

// Auth is reviewer sign-in. It is safe for concurrent use.
type Auth struct {
	cfg   Config
	seal  signer          // the session cookie (Sign, Verify)
	flows *sealer.Keyring // the sign-in cookies (Seal, Open)
	log   *slog.Logger

	mu       sync.Mutex
	provider *oidc.Provider // discovered at the first sign-in
	secret   *string
}

// New returns an Auth for cfg; it checks cfg but does not contact the
// issuer (discovery happens at the first sign-in, so that a function that
// only checks sessions never does).
func New(cfg Config) (*Auth, error) {
	var errs []error
	u, err := url.Parse(cfg.Issuer)
	if cfg.Issuer == "" || err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		errs = append(errs, fmt.Errorf("the issuer %q must be an https URL (http only on loopback, for tests)", cfg.Issuer))
	}
	if strings.TrimSpace(cfg.ClientID) == "" {
		errs = append(errs, errors.New("the client id is empty"))
	}
	if len(cfg.Keys) == 0 {
		errs = append(errs, errors.New("no keys to sign the session cookie"))
	}
	if cfg.Base == nil {
		errs = append(errs, errors.New("no Base for the redirect URI"))
	}
	if cfg.Pages == nil {
		errs = append(errs, errors.New("no Pages to answer with"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("reviewer sign-in: %w", err)
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "email", "profile"}
	}
	cfg.GroupsClaim = cmp.Or(cfg.GroupsClaim, DefaultGroupsClaim)
	cfg.HTTPClient = cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 5 * time.Second})
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Exchanges == nil {
		cfg.Exchanges = ratelimit.New(ratelimit.Rate{Count: DefaultExchangesPerSource, Per: 10 * time.Minute},
			ratelimit.Rate{Count: DefaultExchanges, Per: 10 * time.Minute}, 10000)
	}
	ring, err := sealer.NewKeyring(cfg.Keys...)
	if err != nil {
		return nil, fmt.Errorf("reviewer sign-in: %w", err)
	}
	return &Auth{cfg: cfg, seal: signer{ring: ring}, flows: ring, log: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))}, nil
}

// CheckBase refuses a public base URL a session cookie could not be kept
// safe on: plain http beyond loopback (the cookie is Secure; a phone on a
// LAN address needs https, for example through a tunnel).
func CheckBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("reviewer sign-in: the public URL %q is not an absolute URL", base)
	}
	if u.Scheme != "https" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("reviewer sign-in needs an https public URL (or a loopback address, for one machine): %q would send the session cookie in the clear", base)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Wrap serves next behind sign-in: the callback, a session's identity in
// the request's context, and a redirect to the issuer for a GET without
// one.
func (a *Auth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case CallbackPath:
			a.callback(w, r)
			return
		case SwitchPath:
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				w.Header().Set("Allow", "GET")
				a.cfg.Pages.SignInPage(w, r, review.SignInMethod)
				return
			}
			a.login(w, r, returnPath(r.URL.Query().Get("next")), oauth2.SetAuthURLParam("prompt", "login"))
			return
		}
		if id, ok := a.Session(r); ok {
			next.ServeHTTP(w, r.WithContext(elicitation.WithIdentity(r.Context(), id)))
			return
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			a.login(w, r, r.URL.RequestURI())
			return
		}
		// No session: the Service refuses the submission (and audits it).
		next.ServeHTTP(w, r)
	})
}

// Session returns the identity of the request's session, if it has a
// valid one: authentic, not expired, of this issuer.
func (a *Auth) Session(r *http.Request) (elicitation.Identity, bool) {
	ck, err := r.Cookie(CookieName)
	if err != nil {
		return elicitation.Identity{}, false
	}
	c, err := a.seal.open(ck.Value, kindSession, a.cfg.Now())
	if err != nil || c.Issuer != a.cfg.Issuer || c.Subject == "" {
		return elicitation.Identity{}, false
	}
	return elicitation.Identity{Issuer: c.Issuer, Subject: c.Subject, Email: c.Email, EmailVerified: c.EmailVerified, Groups: c.Groups}, true
}

func (a *Auth) base(r *http.Request) (string, string, error) {
	base := strings.TrimRight(a.cfg.Base(r), "/")
	if err := CheckBase(base); err != nil {
		return "", "", err
	}
	u, _ := url.Parse(base)
	return base, strings.TrimRight(u.Path, "/") + "/review", nil
}

// setCookie sets cookie name for maxAge; a negative maxAge removes it
// (Max-Age=0).
func (a *Auth) setCookie(w http.ResponseWriter, name, path, value string, maxAge time.Duration) {
	age := int(maxAge / time.Second)
	if maxAge < 0 {
		age = -1
	}
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: age,
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	})
}

func random() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// discover returns the provider, discovering it on first use (a failed
// discovery is tried again by the next sign-in).
func (a *Auth) discover(ctx context.Context) (*oidc.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.provider != nil {
		return a.provider, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, a.cfg.HTTPClient), 5*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, a.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("discover the OpenID provider %s: %w", a.cfg.Issuer, err)
	}
	a.provider = p
	return p, nil
}

func (a *Auth) clientSecret(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.secret != nil {
		return *a.secret, nil
	}
	s := ""
	if a.cfg.ClientSecret != nil {
		var err error
		if s, err = a.cfg.ClientSecret(ctx); err != nil {
			return "", fmt.Errorf("read the OpenID client secret: %w", err)
		}
	}
	a.secret = &s
	return s, nil
}

func (a *Auth) oauth2(p *oidc.Provider, base, secret string) *oauth2.Config {
	return &oauth2.Config{
		ClientID: a.cfg.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(),
		RedirectURL: base + CallbackPath, Scopes: a.cfg.Scopes,
	}
}

// login starts a sign-in: a fresh state, nonce and PKCE verifier in the
// cookie, and a redirect to the issuer.
func (a *Auth) login(w http.ResponseWriter, r *http.Request, ret string, opts ...oauth2.AuthCodeOption) {
	base, path, err := a.base(r)
	if err != nil {
		a.failed(w, r, review.SignInMisconfigured, err)
		return
	}
	p, err := a.discover(r.Context())
	if err != nil {
		a.failed(w, r, review.SignInUnavailable, err)
		return
	}
	state := random()
	c := loginClaims{Expires: a.cfg.Now().Add(LoginTTL), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Return: ret}
	v, err := a.sealLogin(state, c)
	if err != nil {
		a.failed(w, r, review.SignInFailed, err)
		return
	}
	a.dropOldLogins(w, r, path)
	a.setCookie(w, LoginCookiePrefix+state, path, v, LoginTTL)
	noStore(w)
	// The secret is not needed to build the authorization URL.
	opts = append(opts, oidc.Nonce(c.Nonce), oauth2.S256ChallengeOption(c.Verifier))
	http.Redirect(w, r, a.oauth2(p, base, "").AuthCodeURL(state, opts...), http.StatusFound)
}

// dropOldLogins removes the sign-in cookies of r beyond MaxLogins-1, the
// oldest (and any that no longer open) first, before a new sign-in adds
// its own.
func (a *Auth) dropOldLogins(w http.ResponseWriter, r *http.Request, path string) {
	type login struct {
		name    string
		expires time.Time
	}
	var logins []login
	for _, ck := range r.Cookies() {
		state, ok := strings.CutPrefix(ck.Name, LoginCookiePrefix)
		if !ok {
			continue
		}
		c, err := a.openLogin(state, ck.Value)
		if err != nil {
			c.Expires = time.Time{} // drop first
		}
		logins = append(logins, login{ck.Name, c.Expires})
	}
	// Stable: among equal expiries, the order the browser sends them in
	// (oldest first).
	slices.SortStableFunc(logins, func(x, y login) int { return x.expires.Compare(y.expires) })
	for i := 0; i < len(logins)-(MaxLogins-1); i++ {
		a.setCookie(w, logins[i].name, path, "", -1)
	}
}

// failed logs why a sign-in step failed and answers with the page of o.
func (a *Auth) failed(w http.ResponseWriter, r *http.Request, o review.SignInOutcome, err error) {
	a.log.ErrorContext(r.Context(), "reviewer sign-in", "err", err)
	a.cfg.Pages.SignInPage(w, r, o)
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "same-origin")
}

// callback completes a sign-in: the state names the sign-in's own cookie,
// whose sealed nonce and PKCE verifier serve the code exchange and the ID
// token's check (issuer, audience, expiry, signature, nonce); then the
// session is set and the sign-in's cookie removed. A callback that fails
// removes at most its own sign-in's cookie: an existing session and other
// sign-ins in progress (other tabs) stay as they were.
func (a *Auth) callback(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		a.cfg.Pages.SignInPage(w, r, review.SignInMethod)
		return
	}
	base, path, err := a.base(r)
	if err != nil {
		a.failed(w, r, review.SignInMisconfigured, err)
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	name := LoginCookiePrefix + state
	fail := func(o review.SignInOutcome, reason string, clear bool, err error) {
		a.log.WarnContext(r.Context(), "reviewer sign-in refused", "reason", reason, "err", err)
		if clear {
			a.setCookie(w, name, path, "", -1)
		}
		a.cfg.Pages.SignInPage(w, r, o)
	}
	if !validState(state) {
		fail(review.SignInIncomplete, "no state, or not one of ours", false, nil)
		return
	}
	ck, cerr := r.Cookie(name)
	if cerr != nil {
		fail(review.SignInIncomplete, "no sign-in in progress for this state", false, cerr)
		return
	}
	c, err := a.openLogin(state, ck.Value)
	if err != nil {
		fail(review.SignInIncomplete, "no valid sign-in in progress", true, err)
		return
	}
	if e := q.Get("error"); e != "" {
		fail(review.SignInRefusedByIssuer, "the issuer refused", true, fmt.Errorf("error=%.64q", e))
		return
	}
	if wait := a.cfg.Exchanges.Take(ratelimit.RemoteIP(r), a.cfg.Now()); wait > 0 {
		ratelimit.RetryAfter(w.Header(), wait)
		fail(review.SignInTooMany, "too many code exchanges from this address or in all", true, nil)
		return
	}
	id, err := a.exchange(r.Context(), base, q.Get("code"), c)
	if err != nil {
		fail(review.SignInIncomplete, "code exchange or token verification failed", true, err)
		return
	}
	s := cookieClaims{Kind: kindSession, Expires: a.cfg.Now().Add(a.cfg.SessionTTL), IssuedAt: a.cfg.Now(),
		Issuer: id.Issuer, Subject: id.Subject, Email: id.Email, EmailVerified: id.EmailVerified, Groups: id.Groups}
	v, err := a.seal.seal(s)
	if err != nil {
		fail(review.SignInIncomplete, "session too large", true, err)
		return
	}
	a.setCookie(w, CookieName, path, v, a.cfg.SessionTTL)
	a.setCookie(w, name, path, "", -1)
	noStore(w)
	http.Redirect(w, r, base+returnPath(c.Return), http.StatusSeeOther)
}

// returnPath is where a sign-in may return: a review path, never the
// sign-in's own addresses or another site.
func returnPath(p string) string {
	if !strings.HasPrefix(p, "/review/") || strings.HasPrefix(p, "/review/oidc/") || strings.ContainsAny(p, "\\") || strings.Contains(p, "//") {
		return "/review/"
	}
	return p
}

// exchange redeems the code with the verifier and reads the identity from
// the verified ID token, and from the UserInfo endpoint for what the token
// leaves out (many issuers put the e-mail address only there).
func (a *Auth) exchange(ctx context.Context, base, code string, c loginClaims) (elicitation.Identity, error) {
	if code == "" {
		return elicitation.Identity{}, errors.New("no code")
	}
	p, err := a.discover(ctx)
	if err != nil {
		return elicitation.Identity{}, err
	}
	secret, err := a.clientSecret(ctx)
	if err != nil {
		return elicitation.Identity{}, err
	}
	// Within the review function's 8 s (the invocation's deadline bounds
	// ctx too).
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, a.cfg.HTTPClient), 6*time.Second)
	defer cancel()
	conf := a.oauth2(p, base, secret)
	tok, err := conf.Exchange(ctx, code, oauth2.VerifierOption(c.Verifier))
	if err != nil {
		return elicitation.Identity{}, fmt.Errorf("exchange the code: %w", err)
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		return elicitation.Identity{}, errors.New("the token response has no id_token")
	}
	idt, err := p.VerifierContext(ctx, &oidc.Config{ClientID: a.cfg.ClientID, Now: a.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		return elicitation.Identity{}, fmt.Errorf("verify the ID token: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(c.Nonce)) != 1 {
		return elicitation.Identity{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return elicitation.Identity{}, fmt.Errorf("read the ID token's claims: %w", err)
	}
	id := elicitation.Identity{Issuer: idt.Issuer, Subject: idt.Subject}
	a.readClaims(&id, claims)
	if id.Email == "" {
		ui, err := p.UserInfo(ctx, conf.TokenSource(ctx, tok))
		if err != nil {
			return elicitation.Identity{}, fmt.Errorf("read the UserInfo: %w", err)
		}
		if ui.Subject != idt.Subject {
			return elicitation.Identity{}, errors.New("the UserInfo is of another subject")
		}
		var more map[string]any
		if err := ui.Claims(&more); err != nil {
			return elicitation.Identity{}, fmt.Errorf("read the UserInfo's claims: %w", err)
		}
		a.readClaims(&id, more)
	}
	return id, nil
}

// readClaims takes the e-mail address, whether it is verified (a boolean,
// or the string "true" as some issuers send it) and the groups claim.
func (a *Auth) readClaims(id *elicitation.Identity, claims map[string]any) {
	if e, ok := claims["email"].(string); ok && id.Email == "" {
		id.Email = e
		switch v := claims["email_verified"].(type) {
		case bool:
			id.EmailVerified = v
		case string:
			id.EmailVerified = v == "true"
		}
	}
	if len(id.Groups) > 0 {
		return
	}
	switch g := claims[a.cfg.GroupsClaim].(type) {
	case []any:
		for _, v := range g {
			if s, ok := v.(string); ok && s != "" && len(s) <= 256 && len(id.Groups) < MaxGroups {
				id.Groups = append(id.Groups, s)
			}
		}
	case string:
		for _, s := range strings.FieldsFunc(g, func(r rune) bool { return r == ',' || r == ' ' }) {
			if len(s) <= 256 && len(id.Groups) < MaxGroups {
				id.Groups = append(id.Groups, s)
			}
		}
	}
}
