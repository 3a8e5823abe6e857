// Package receipt is an approval receipt's format and its verifier, for
// anyone who checks an approval offline: an upstream MCP server the proxy's
// gate forwards an approved call to, an auditor, any system an agent acts
// on. A receipt is a JWT (ES256, header typ approval-receipt+jwt) that a
// deployment of the elicitation service issues for one decided request:
// who asked, what the reviewers saw and answered, who decided, where and
// when. Verify checks it against the deployment's key set (FetchKeys, from
// the deployment's /.well-known/jwks.json), and against the call it is
// meant to approve.
//
// The digests of the context, the form submission and a tool's arguments
// are SHA-256 over the RFC 8785 canonical form of the JSON (lowercase
// hex, Digest), so that any language reproduces them from the values
// alone. docs/gate.md shows the same check in TypeScript and Python.
package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Type is the JOSE header "typ" of a receipt.
const Type = "approval-receipt+jwt"

// DetailType is the RFC 9396 authorization_details type of what was
// approved.
const DetailType = "elicitation"

// MetaKey is the key of a forwarded tools/call's params._meta under which
// the proxy's gate hands the upstream the receipt of the call's approval
// (docs/gate.md).
const MetaKey = "io.github.mcp-elicitation/receipt"

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
	// was for (the proxy's gate) and digest its arguments; Locations (RFC
	// 9396) name the upstream server, by the URL the gate reaches it at,
	// when it is reached over HTTP.
	Tool            string   `json:"tool,omitempty"`
	ArgumentsSHA256 string   `json:"arguments_sha256,omitempty"`
	Locations       []string `json:"locations,omitempty"`
}

// Call is how a request's context names the upstream tool call it asks a
// reviewer to approve (the proxy's gate writes it into the context it
// shows): the tool, the Digest of the exact arguments that will be
// forwarded, and the upstream's URL if any. A receipt of a request whose
// context is a JSON object holding a tool and a well-formed digest names
// that call in its authorization detail. The receipt attests what the
// requester declared and the reviewer was shown, so an upstream trusts it
// as far as it trusts the requester (Claims.Requester).
type Call struct {
	Tool            string `json:"tool"`
	ArgumentsSHA256 string `json:"argumentsSha256,omitempty"`
	Upstream        string `json:"upstream,omitempty"`
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
