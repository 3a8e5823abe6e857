package elicitation

import (
	"slices"
	"time"
)

// Action is what an audit entry records.
type Action string

const (
	ActionCreated           Action = "created"
	ActionRendered          Action = "rendered"           // the review page was shown (bounded)
	ActionSubmissionRefused Action = "submission_refused" // a malformed or unauthorised attempt (bounded)
	ActionDecided           Action = "decided"            // a submission landed: Detail is the decision
	ActionApproved          Action = "approved"           // an approval counted towards a quorum, short of it
	ActionCanceled          Action = "canceled"
	ActionResultFetched     Action = "result_fetched"
	ActionPushed            Action = "pushed"        // the review link was offered to the agent's host: Detail says how
	ActionPushAnswered      Action = "push_answered" // the host came back from a sessionless push: Detail names its request state
)

// AuditCap is how many entries of a bounded action (renders and refused
// submissions) a request stores one by one; beyond it they are only counted.
const AuditCap = 50

// BoundedActions are the actions whose entries are capped at AuditCap.
var BoundedActions = []Action{ActionRendered, ActionSubmissionRefused}

// Bounded reports whether entries of this action are capped at AuditCap.
func (a Action) Bounded() bool { return slices.Contains(BoundedActions, a) }

// AuditEntry is one line of a request's audit trail.
type AuditEntry struct {
	At        time.Time `json:"at"`
	Action    Action    `json:"action"`
	Principal string    `json:"principal"`
	// Detail is a short, non-sensitive note: the decision, the reason a
	// submission was refused. Never argument values, keys or tokens.
	Detail string `json:"detail,omitempty"`
	// Via says where a decision was made (decided and approved entries).
	Via Via `json:"via,omitempty"`
	// Seq, Prev and Hash chain the entry into its request's trail (see
	// ChainEntry): its place from 1, the hash of the entry before it, its
	// own. A store sets them as it appends; all three are empty on an
	// entry stored before the chain existed.
	Seq  uint64 `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`
	Hash string `json:"hash,omitempty"`

	// Issuer is the issuer that signed Principal in (the identity
	// provider's, "https://slack.com" for a Slack account), for decided
	// and approved entries of a signed-in reviewer; empty without sign-in.
	Issuer string `json:"issuer,omitempty"`
}

// AuditTrail is a request's audit trail as read back.
type AuditTrail struct {
	// Entries in the order they happened: the unchained prefix (entries
	// stored before the chain) by At, then by append order; then the
	// chained entries in the order they were stored (by Seq, unless the
	// store was tampered with: VerifyAudit tells).
	Entries []AuditEntry `json:"entries"`
	// Omitted counts the entries of bounded actions beyond AuditCap that
	// were counted but not stored.
	Omitted map[Action]int `json:"omitted,omitempty"`
}

// Omit records, as a store reads a trail back, that n entries of the
// bounded action a were counted but not stored (nothing for n <= 0).
func (tr *AuditTrail) Omit(a Action, n int) {
	if n <= 0 {
		return
	}
	if tr.Omitted == nil {
		tr.Omitted = map[Action]int{}
	}
	tr.Omitted[a] = n
}
