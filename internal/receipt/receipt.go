// Package receipt signs and verifies approval receipts: a JWT (ES256,
// typ approval-receipt+jwt, signed with the deployment's signing keyring,
// internal/signing) that says, for one decided request, who asked, what
// the reviewers saw and answered, who decided, where and when, so that a
// third party can check an approval offline against the deployment's key
// set (signing.JWKSPath).
//
// A receipt is issued for the two outcomes a reviewer decides: approved
// (submitted: approved, filled or picked) and declined. A canceled request
// (the agent withdrew it) and an expired one (nobody decided) have no
// result and no receipt: there is no human decision to attest.
//
// The digests of the context, the form submission and a tool's arguments
// are SHA-256 over the RFC 8785 canonical form of the JSON (lowercase
// hex), so that any language reproduces them from the values alone.
package receipt

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

// Type is the JOSE header "typ" of a receipt.
const Type = "approval-receipt+jwt"

// DetailType is the RFC 9396 authorization_details type of what was
// approved.
const DetailType = "elicitation"

// Outcomes of a receipt.
const (
	OutcomeApproved = "approved"
	OutcomeDeclined = "declined"
)

// Claims are a receipt's claims, every one covered by the signature.
type Claims struct {
	// Issuer is the deployment's public URL.
	Issuer string `json:"iss"`
	// IssuedAt and Expiry are NumericDates (seconds since the epoch).
	IssuedAt int64 `json:"iat"`
	Expiry   int64 `json:"exp"`
	// ID is the receipt's own id (each elicit_result issues a new one).
	ID string `json:"jti"`
	// Txn is the elicitationId.
	Txn string `json:"txn"`
	// Requester is the principal that created the request (the API key's,
	// the OAuth token's person, or "anonymous").
	Requester string `json:"requester"`
	// Outcome is OutcomeApproved or OutcomeDeclined.
	Outcome string `json:"outcome"`
	// SelectedIDs are the picked options of an approved selection.
	SelectedIDs []string `json:"selected_ids,omitempty"`
	// Quorum is how many distinct reviewers had to approve (at least 1).
	Quorum int `json:"quorum"`
	// Approvers are the decisions counted, oldest first: the approvals of
	// the quorum and, for a decline, who declined.
	Approvers []Approver `json:"approvers"`
	// AuthorizationDetails (RFC 9396) hold what was approved: one Detail.
	AuthorizationDetails []Detail `json:"authorization_details"`
	// AuditHead is the request's audit chain at the entry that recorded
	// the outcome, "seq:hash" (elicitation.AuditHead): "elicitation
	// audit verify --head" finds an entry up to it edited, removed,
	// reordered or inserted. Empty for an outcome recorded before the
	// chain.
	AuditHead string `json:"audit_head,omitempty"`
}

// Approver is one counted decision.
type Approver struct {
	// Principal names the reviewer as decidedBy does (a verified e-mail
	// address, else "sub:" and the subject); empty when the reviewer was
	// not signed in, and then Anonymous is true: the review link decided.
	Principal string `json:"principal,omitempty"`
	Anonymous bool   `json:"anonymous,omitempty"`
	// Issuer is the issuer that signed Principal in (the OIDC issuer of
	// reviewer sign-in, https://slack.com for a Slack account); empty when
	// not recorded.
	Issuer string `json:"issuer,omitempty"`
	// At is when the decision landed (NumericDate).
	At int64 `json:"at"`
	// Via is where: page, app, host-form, slack or rule (a standing
	// approval the reviewer made decided, in their name).
	Via string `json:"via,omitempty"`
	// Rule names the standing approval that decided (Via rule).
	Rule string `json:"rule,omitempty"`
	// Decision is OutcomeApproved or OutcomeDeclined.
	Decision string `json:"decision"`
}

// Detail is what was approved, as an RFC 9396 authorization detail of
// type DetailType. A digest is absent when its value is (no context, no
// form).
type Detail struct {
	Type string `json:"type"`
	// Kind is approval or selection.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// ContextSHA256 and FormSHA256 digest the context the agent sent and
	// the form values submitted (Digest).
	ContextSHA256 string `json:"context_sha256,omitempty"`
	FormSHA256    string `json:"form_sha256,omitempty"`
	// Tool and ArgumentsSHA256 name an upstream tool call the approval
	// was for (the proxy's gate) and digest its arguments.
	Tool            string `json:"tool,omitempty"`
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
}

// Digest is the lowercase hex SHA-256 of v's RFC 8785 canonical form; ""
// for no value (empty or JSON null).
func Digest(v json.RawMessage) (string, error) {
	if len(v) == 0 || string(v) == "null" {
		return "", nil
	}
	c, err := jcs.Transform(v)
	if err != nil {
		return "", fmt.Errorf("canonicalize: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Outcome is what a receipt is built from: what the Service returned for
// a decided request (elicitation.Service.Result and Audit), and for the
// gate the upstream call it approves.
type Outcome struct {
	Result elicitation.Result
	Trail  elicitation.AuditTrail
	// Tool and Arguments: the upstream call, if any.
	Tool      string
	Arguments json.RawMessage
}

// Issuer signs receipts with the current key of a signing keyring.
type Issuer struct {
	// Keys is the keyring; the first signs.
	Keys []signing.Key
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// ErrNotFinal: the request was not decided by a reviewer (pending,
// canceled or expired), so there is nothing to attest.
var ErrNotFinal = errors.New("no reviewer's decision to attest")

// Issue signs a receipt of o for the deployment at iss. It expires when
// the deployment may forget the request (State.RetainUntil): past it the
// record the receipt attests is gone, and a rotated key need be kept only
// that long.
func (is Issuer) Issue(iss string, o Outcome) (string, error) {
	if len(is.Keys) == 0 {
		return "", errors.New("receipt: no signing key")
	}
	c, err := claimsOf(o)
	if err != nil {
		return "", err
	}
	now := time.Now
	if is.Now != nil {
		now = is.Now
	}
	c.Issuer, c.IssuedAt, c.ID = iss, now().Unix(), newID()
	c.Expiry = max(o.Result.State.RetainUntil.Unix(), c.IssuedAt+1)
	return Sign(is.Keys[0], c)
}

// Sign signs c with key as a receipt (header alg ES256, typ Type, kid).
func Sign(key signing.Key, c Claims) (string, error) {
	opts := (&jose.SignerOptions{}).WithType(Type).WithHeader("kid", key.ID)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key.Private}, opts)
	if err != nil {
		return "", fmt.Errorf("receipt signer: %w", err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode receipt: %w", err)
	}
	jws, err := signer.Sign(b)
	if err != nil {
		return "", fmt.Errorf("sign receipt: %w", err)
	}
	return jws.CompactSerialize()
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// claimsOf is o's claims without issuer, times and id.
func claimsOf(o Outcome) (Claims, error) {
	r, st := o.Result, o.Result.State
	outcome := map[elicitation.Decision]string{elicitation.DecisionSubmitted: OutcomeApproved, elicitation.DecisionDeclined: OutcomeDeclined}[st.Decision]
	if outcome == "" || st.DecidedAt.IsZero() {
		return Claims{}, fmt.Errorf("receipt of %s: %w", st.ID, ErrNotFinal)
	}
	d := Detail{Type: DetailType, Kind: string(st.Kind), Message: r.Message, Tool: o.Tool}
	var err error
	if d.ContextSHA256, err = Digest(r.Context); err != nil {
		return Claims{}, fmt.Errorf("receipt of %s: context: %w", st.ID, err)
	}
	if d.FormSHA256, err = Digest(r.Form); err != nil {
		return Claims{}, fmt.Errorf("receipt of %s: form: %w", st.ID, err)
	}
	if d.ArgumentsSHA256, err = Digest(o.Arguments); err != nil {
		return Claims{}, fmt.Errorf("receipt of %s: arguments: %w", st.ID, err)
	}
	c := Claims{Txn: st.ID, Requester: st.Owner, Outcome: outcome, Quorum: st.Quorum(), Approvers: approvers(st, o.Trail), AuthorizationDetails: []Detail{d}}
	if !r.AuditHead.IsZero() {
		c.AuditHead = r.AuditHead.String()
	}
	if outcome == OutcomeApproved {
		c.SelectedIDs = r.SelectedIDs
	}
	return c, nil
}

// approvers are the decisions counted on st: the quorum's approvals, and
// the decision that ended it unless it is the last of them. Where and
// through which issuer each was made is in its audit entry.
func approvers(st elicitation.State, trail elicitation.AuditTrail) []Approver {
	out := make([]Approver, 0, len(st.Approvers)+1)
	for _, a := range st.Approvers {
		out = append(out, approver(a.By, a.At, OutcomeApproved, trail))
	}
	if st.Decision == elicitation.DecisionDeclined || len(st.Approvers) == 0 {
		d := OutcomeApproved
		if st.Decision == elicitation.DecisionDeclined {
			d = OutcomeDeclined
		}
		out = append(out, approver(st.DecidedBy, st.DecidedAt, d, trail))
		if st.DecidedVia == elicitation.ViaRule {
			out[len(out)-1].Rule = st.DecidedRule
		}
	}
	return out
}

func approver(by string, at time.Time, decision string, trail elicitation.AuditTrail) Approver {
	a := Approver{At: at.Unix(), Decision: decision}
	if by == "" || by == elicitation.Reviewer {
		a.Anonymous = true
	} else {
		a.Principal = by
	}
	for _, e := range trail.Entries {
		if (e.Action == elicitation.ActionDecided || e.Action == elicitation.ActionApproved) && e.Principal == by && e.At.Equal(at) {
			a.Via, a.Issuer = string(e.Via), e.Issuer
		}
	}
	if a.Anonymous {
		a.Issuer = ""
	}
	return a
}
