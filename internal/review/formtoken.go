package review

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// The inbox's forms that change something carry a page token, as a
// request's page and a batch's confirmation do: revoking a standing
// approval (inbox_rules.go), making or ending a delegation (delegation.go).
// Its subject names the form and what it acts on (formSubject: a rule's
// or a delegation's id; nothing for a new delegation), and it is bound to
// the signed-in reviewer the inbox was rendered for, so that a browser
// sending neither Sec-Fetch-Site nor Origin cannot be made to post one
// from another site, nor one reviewer's page be sent from another's
// session.

// The forms of the inbox that carry a token.
const (
	formRevoke        = "revoke"
	formDelegate      = "delegate"
	formEndDelegation = "end-delegation"
)

// formSubject is what an inbox form's token binds in place of a request
// id: the form and its target, as a digest (a request id has no '.').
func formSubject(form, target string) string {
	sum := sha256.Sum256([]byte("elicitation inbox form\x00" + form + "\x00" + target))
	return form + "." + base64.RawURLEncoding.EncodeToString(sum[:])
}

// formToken seals the token of an inbox form acting on subject for the
// signed-in reviewer in ctx; "" (logged) when it cannot, and the form is
// then refused when sent.
func (h *Handler) formToken(ctx context.Context, subject string) string {
	tok, err := h.sealFormToken(ctx, subject, h.TokenTTL)
	if err != nil {
		h.Logger.ErrorContext(ctx, "review inbox form token", "err", err)
		return ""
	}
	return tok
}

// sealFormToken seals the token of a form acting on subject (an inbox
// form's, a batch's confirmation's) for the signed-in reviewer in ctx,
// for ttl.
func (h *Handler) sealFormToken(ctx context.Context, subject string, ttl time.Duration) (string, error) {
	return h.Tokens.Seal(pagetoken.Claims{ElicitationID: subject, RenderID: h.NewRenderID(),
		Expires: h.Now().Add(ttl), Reviewer: tokenReviewer(ctx)})
}

// tokenCheck is what openFormToken found.
type tokenCheck int

const (
	tokenOK tokenCheck = iota
	tokenInvalid
	tokenExpired
)

// openFormToken checks the token sent with an inbox form (a batch's
// confirmation included): one token, authentic, for subject, rendered
// for the signed-in reviewer in ctx, not expired.
func (h *Handler) openFormToken(ctx context.Context, tokens []string, subject string) (pagetoken.Claims, tokenCheck) {
	if len(tokens) != 1 || tokens[0] == "" {
		return pagetoken.Claims{}, tokenInvalid
	}
	c, err := h.Tokens.Open(tokens[0], h.Now())
	switch {
	case err != nil && !errors.Is(err, pagetoken.ErrExpired), c.ElicitationID != subject,
		subtle.ConstantTimeCompare([]byte(c.Reviewer), []byte(tokenReviewer(ctx))) != 1:
		return pagetoken.Claims{}, tokenInvalid
	case err != nil:
		return pagetoken.Claims{}, tokenExpired
	}
	return c, tokenOK
}

// formRefusal is the sentence that refuses an inbox form whose token
// openFormToken did not take, "" when it did.
func (h *Handler) formRefusal(ctx context.Context, tokens []string, subject string) string {
	switch _, check := h.openFormToken(ctx, tokens, subject); check {
	case tokenExpired:
		return "This page is too old to send. Nothing was changed. Reload your inbox and do it again."
	case tokenInvalid:
		h.Logger.WarnContext(ctx, "review inbox form refused", "reason", "security token missing or not valid")
		return "The form's security token is missing, or not valid for this or for you, so nothing was changed. Reload your inbox and do it again."
	}
	return ""
}
