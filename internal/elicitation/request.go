package elicitation

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"time"
)

// Kind is what the reviewer is asked to do.
type Kind string

const (
	// KindApproval asks to approve (optionally filling a form) or decline.
	KindApproval Kind = "approval"
	// KindSelection asks to pick between MinSelections and MaxSelections options, or decline.
	KindSelection Kind = "selection"
)

// Status is where a request stands. The vocabulary is exact (SPEC §2).
type Status string

const (
	StatusPending   Status = "pending"
	StatusSubmitted Status = "submitted"
	StatusDeclined  Status = "declined"
	StatusCanceled  Status = "canceled"
	// StatusExpired is never stored: it is derived from a pending request
	// read at or after its ExpiresAt.
	StatusExpired Status = "expired"
	// StatusConsumed: a submitted or declined request whose result was read.
	StatusConsumed Status = "consumed"
)

// Terminal reports whether no further decision can land.
func (s Status) Terminal() bool { return s != StatusPending }

// Decision is the reviewer's answer.
type Decision string

const (
	DecisionSubmitted Decision = "submitted" // approved, filled or picked
	DecisionDeclined  Decision = "declined"  // an explicit no; for a selection, "none of these, refine"
)

// Anonymous is the principal of a caller on an endpoint with no credentials.
const Anonymous = "anonymous"

// Reviewer is the principal recorded for an anonymous reviewer.
const Reviewer = "reviewer"

// State is the small, frequently polled part of a request: a few hundred
// bytes, read by every status check and every wait.
type State struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Owner     string    `json:"owner"`
	Status    Status    `json:"status"` // as stored: never StatusExpired
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// RetainUntil is when the store may remove the request and its audit
	// trail: ExpiresAt plus the retention period.
	RetainUntil time.Time `json:"retainUntil"`

	Decision  Decision  `json:"decision,omitempty"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	DecidedBy string    `json:"decidedBy,omitempty"`
	// DecidedVia says where the decision was made (empty for cancels and
	// for decisions stored before it was recorded).
	DecidedVia Via `json:"decidedVia,omitempty"`
	// DecidedRule names the standing approval that decided (DecidedVia
	// ViaRule), else empty.
	DecidedRule  string `json:"decidedRule,omitempty"`
	SubmissionID string `json:"submissionId,omitempty"`
	// AnswerDigest names the decision and answer that won (see
	// Resolution.Digest): a resend of SubmissionID is a retry only with it.
	AnswerDigest string    `json:"answerDigest,omitempty"`
	ConsumedAt   time.Time `json:"consumedAt,omitzero"`

	// Approvals is the quorum: how many distinct reviewers must approve
	// (0 or 1: one approval decides). Approvers are the approvals counted
	// so far, oldest first; the store decides with the one that completes
	// the quorum (Resolution.Step).
	Approvals int        `json:"approvals,omitempty"`
	Approvers []Approval `json:"approvers,omitempty"`
}

// StatusAt is the status as seen at now: a request still pending at or after
// its ExpiresAt is expired, whatever the store's cleanup has done.
func (s State) StatusAt(now time.Time) Status {
	if s.Status == StatusPending && !now.Before(s.ExpiresAt) {
		return StatusExpired
	}
	return s.Status
}

// Option is one choice of a selection: an object with a unique "id" and any
// other keys. Raw is the object exactly as the agent sent it.
type Option struct {
	ID    string          `json:"id"`
	Label string          `json:"label,omitempty"`
	Raw   json.RawMessage `json:"raw"`
}

// DisplayLabel is what the default rendering shows: the label, else the id.
func (o Option) DisplayLabel() string { return cmp.Or(o.Label, o.ID) }

// Labels rename the two buttons; their fixed meaning stays visible beside them.
type Labels struct {
	Submit  string `json:"submit,omitempty"`
	Decline string `json:"decline,omitempty"`
}

// Templates are the Liquid templates an agent may supply.
type Templates struct {
	Display string `json:"display,omitempty"` // approval: renders context
	Row     string `json:"row,omitempty"`     // selection: one option
	Heading string `json:"heading,omitempty"` // selection: above the list
	Footer  string `json:"footer,omitempty"`  // selection: below the list
	Hover   string `json:"hover,omitempty"`   // selection: one option's details
}

// NamedTemplate is a template with the input name an agent gave it.
type NamedTemplate struct{ Name, Source string }

// Named lists the templates that are set, under their input names, in a
// fixed order.
func (t Templates) Named() []NamedTemplate {
	var out []NamedTemplate
	for _, n := range [...]NamedTemplate{
		{"displayTemplate", t.Display}, {"headingTemplate", t.Heading}, {"rowTemplate", t.Row},
		{"hoverTemplate", t.Hover}, {"footerTemplate", t.Footer},
	} {
		if n.Source != "" {
			out = append(out, n)
		}
	}
	return out
}

// Payload is the immutable part of a request, written once at creation.
type Payload struct {
	Message string `json:"message"`
	// Approval.
	Context json.RawMessage `json:"context,omitempty"`
	Schema  *FormSchema     `json:"requestedSchema,omitempty"`
	// Selection.
	Options       []Option `json:"options,omitempty"`
	MinSelections int      `json:"minSelections,omitempty"`
	MaxSelections int      `json:"maxSelections,omitempty"`

	Templates Templates `json:"templates"`
	CSS       string    `json:"css,omitempty"`
	Labels    Labels    `json:"labels"`

	// Client is the MCP client that created the request (its clientInfo,
	// where it sent one), shown to the reviewer; nil when unknown.
	Client *Client `json:"client,omitempty"`

	// ReviewKeyHash is the SHA-256 of the review key; the key itself is
	// only ever in the review URL handed to the agent (and in the created
	// notice's delivery until it is settled).
	ReviewKeyHash []byte `json:"reviewKeyHash"`

	// Notify names the notification targets chosen at creation (the
	// deployment's defaults, then the agent's notify), in order.
	Notify []string `json:"notify,omitempty"`
	// Scheduled lists the reminders and escalation notices the creation
	// wrote to the outbox (their resolution withdraws them), and Escalate
	// the escalation chain they came from.
	Scheduled []Scheduled      `json:"scheduled,omitempty"`
	Escalate  []EscalationStep `json:"escalate,omitempty"`
	// Reviewers names who may decide (verified e-mail addresses, and
	// "group:NAME" for members of a group); empty means any signed-in
	// reviewer. Only a deployment with reviewer sign-in accepts it.
	Reviewers []string `json:"reviewers,omitempty"`

	// PushLink is the review link sealed by the MCP adapter (confidential
	// and authenticated with its keys, never readable from the store
	// alone), kept so that a later elicit_await can push it to a host
	// without a session; empty when the request may not be pushed (push:
	// false, or the deployment pushes nothing).
	PushLink string `json:"pushLink,omitempty"`
	// HostLink is the review key sealed by the MCP adapter for decisions
	// made in the agent's host (its own form, Via ViaHostForm; the MCP App,
	// Via ViaApp); empty when the request may not be decided there.
	HostLink string `json:"hostLink,omitempty"`
	// AskInHost: the host's own form asks for the answer (askInHost).
	AskInHost bool `json:"askInHost,omitempty"`
}

// Client names the MCP client software that created a request, as its
// clientInfo (initialize, or a 2026-07-28 request's _meta) describes it.
type Client struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// String is "name version", or "" when the client is unknown.
func (c *Client) String() string {
	if c == nil || c.Name == "" {
		return ""
	}
	if c.Version == "" {
		return c.Name
	}
	return c.Name + " " + c.Version
}

// Answer is what the reviewer submitted, with the decision.
type Answer struct {
	SelectedIDs []string        `json:"selectedIds,omitempty"`
	Form        json.RawMessage `json:"formSubmission,omitempty"`
	// Comment is the reviewer's optional plain-text note (CleanComment),
	// sent with Submit or Decline.
	Comment string `json:"comment,omitempty"`
}

// CommentOf is a's comment; "" when a is nil.
func CommentOf(a *Answer) string {
	if a == nil {
		return ""
	}
	return a.Comment
}

// Request is a whole request as created.
type Request struct {
	State   State
	Payload Payload
	// Outbox holds the deliveries written with the request: the created
	// notices, and the expiry notices scheduled for ExpiresAt.
	Outbox []Delivery
	// MaxPending bounds how many requests its owner may have pending at
	// once, this one included (0: no bound); see Requests.Create.
	MaxPending int
}

// Record is a whole request as stored: Answer is nil until a submission
// lands, and stays nil for a decline without a comment.
type Record struct {
	State   State
	Payload Payload
	Answer  *Answer
}

// NewID returns a fresh elicitation id: 128 random bits, URL-safe.
func NewID() string { return randomToken(16) }

// NewReviewKey returns a fresh review key (256 random bits, URL-safe) and the
// hash to store.
func NewReviewKey() (key string, hash []byte) {
	key = randomToken(32)
	return key, HashReviewKey(key)
}

// HashReviewKey is the stored form of a review key.
func HashReviewKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// ReviewKeyMatches compares a presented key with the stored hash in constant time.
func (p Payload) ReviewKeyMatches(key string) bool {
	return len(p.ReviewKeyHash) == sha256.Size && subtle.ConstantTimeCompare(HashReviewKey(key), p.ReviewKeyHash) == 1
}

func randomToken(n int) string {
	b := make([]byte, n)
	// crypto/rand.Read never returns an error (Go 1.24+); it aborts the
	// program instead, which is right when the system has no randomness.
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
