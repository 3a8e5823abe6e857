// Package attest issues approval receipts (the format and its verifier
// are package receipt, which third parties import): a JWT signed with the
// deployment's signing keyring (internal/signing) that says, for one
// decided request, who asked, what the reviewers saw and answered, who
// decided, where and when, so that a third party can check an approval
// offline against the deployment's key set (signing.JWKSPath).
//
// A receipt is issued for the two outcomes a reviewer decides: approved
// (submitted: approved, filled or picked) and declined. A canceled request
// (the agent withdrew it) and an expired one (nobody decided) have no
// result and no receipt: there is no human decision to attest.
//
// The digests are receipt.Digest's: SHA-256 over the RFC 8785 canonical
// form of the JSON, so that any language reproduces them.
package attest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// callOf is the call a context names, if it names one.
func callOf(context json.RawMessage) (receipt.Call, bool) {
	var c receipt.Call
	if json.Unmarshal(context, &c) != nil || c.Tool == "" || len(c.ArgumentsSHA256) != sha256.Size*2 {
		return receipt.Call{}, false
	}
	if _, err := hex.DecodeString(c.ArgumentsSHA256); err != nil || strings.ToLower(c.ArgumentsSHA256) != c.ArgumentsSHA256 {
		return receipt.Call{}, false
	}
	return c, true
}

// Outcome is what a receipt is built from: what the Service returned for
// a decided request (elicitation.Service.Result and Audit), and the
// upstream call it approves, if any.
type Outcome struct {
	Result elicitation.Result
	Trail  elicitation.AuditTrail
	// Tool and Arguments: the upstream call, if any; without Tool, the
	// call the request's context names (receipt.Call), if it names one.
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

// Sign signs c with key as a receipt (header alg ES256, typ receipt.Type, kid).
func Sign(key signing.Key, c receipt.Claims) (string, error) {
	opts := (&jose.SignerOptions{}).WithType(receipt.Type).WithHeader("kid", key.ID)
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
func claimsOf(o Outcome) (receipt.Claims, error) {
	r, st := o.Result, o.Result.State
	outcome := map[elicitation.Decision]string{elicitation.DecisionSubmitted: receipt.OutcomeApproved, elicitation.DecisionDeclined: receipt.OutcomeDeclined}[st.Decision]
	if outcome == "" || st.DecidedAt.IsZero() {
		return receipt.Claims{}, fmt.Errorf("receipt of %s: %w", st.ID, ErrNotFinal)
	}
	d := receipt.Detail{Type: receipt.DetailType, Kind: string(st.Kind), Message: r.Message, Tool: o.Tool}
	var err error
	if d.ContextSHA256, err = receipt.Digest(r.Context); err != nil {
		return receipt.Claims{}, fmt.Errorf("receipt of %s: context: %w", st.ID, err)
	}
	if d.FormSHA256, err = receipt.Digest(r.Form); err != nil {
		return receipt.Claims{}, fmt.Errorf("receipt of %s: form: %w", st.ID, err)
	}
	if d.ArgumentsSHA256, err = receipt.Digest(o.Arguments); err != nil {
		return receipt.Claims{}, fmt.Errorf("receipt of %s: arguments: %w", st.ID, err)
	}
	if call, ok := callOf(r.Context); ok && o.Tool == "" {
		d.Tool, d.ArgumentsSHA256 = call.Tool, call.ArgumentsSHA256
		if call.Upstream != "" {
			d.Locations = []string{call.Upstream}
		}
	}
	c := receipt.Claims{Txn: st.ID, Requester: st.Owner, Outcome: outcome, Quorum: st.Quorum(), Approvers: approvers(st, o.Trail), AuthorizationDetails: []receipt.Detail{d}}
	if !r.AuditHead.IsZero() {
		c.AuditHead = r.AuditHead.String()
	}
	if outcome == receipt.OutcomeApproved {
		c.SelectedIDs = r.SelectedIDs
	}
	return c, nil
}

// approvers are the decisions counted on st: the quorum's approvals, and
// the decision that ended it unless it is the last of them. Where and
// through which issuer each was made is in its audit entry.
func approvers(st elicitation.State, trail elicitation.AuditTrail) []receipt.Approver {
	out := make([]receipt.Approver, 0, len(st.Approvers)+1)
	for _, a := range st.Approvers {
		out = append(out, approver(a.By, a.At, receipt.OutcomeApproved, trail))
	}
	if st.Decision == elicitation.DecisionDeclined || len(st.Approvers) == 0 {
		d := receipt.OutcomeApproved
		if st.Decision == elicitation.DecisionDeclined {
			d = receipt.OutcomeDeclined
		}
		out = append(out, approver(st.DecidedBy, st.DecidedAt, d, trail))
		if st.DecidedVia == elicitation.ViaRule {
			out[len(out)-1].Rule = st.DecidedRule
		}
	}
	return out
}

func approver(by string, at time.Time, decision string, trail elicitation.AuditTrail) receipt.Approver {
	a := receipt.Approver{At: at.Unix(), Decision: decision}
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
