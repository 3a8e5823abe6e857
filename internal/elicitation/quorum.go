package elicitation

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// MaxApprovals is the largest quorum a request may ask for.
const MaxApprovals = 10

// Errors of a quorum vote, matched with errors.Is. Both are conflicts: the
// request stays pending and nothing was written.
var (
	// ErrAlreadyApproved: this reviewer's approval is already counted; the
	// quorum needs approvals from other reviewers.
	ErrAlreadyApproved = errors.New("you have already approved this request; it needs approvals from other reviewers")
	// ErrAnswerDiffers: an earlier approval of the quorum carried another
	// answer (other picks, other form values); every approval must agree.
	ErrAnswerDiffers = errors.New("another reviewer approved a different answer; submit the same answer or decline")
	// ErrSeatApproved: the approval of the reviewer whose place on the
	// quorum this one would fill is already counted, given by them or by
	// their delegate (a delegate fills the delegator's place, never a
	// place of their own). It is ErrAlreadyApproved too (errors.Is).
	ErrSeatApproved error = seatApproved{}
)

type seatApproved struct{}

func (seatApproved) Error() string {
	return "an approval for this reviewer's place is already counted, given by them or by their delegate; it needs approvals from other reviewers"
}

func (seatApproved) Is(target error) bool { return target == ErrAlreadyApproved }

// Approval is one reviewer's approval counted towards a request's quorum.
type Approval struct {
	By           string    `json:"by"`
	SubmissionID string    `json:"submissionId"`
	At           time.Time `json:"at"`
	// AnswerDigest names the answer approved (Resolution.Agreement: the
	// answer without the reviewer's comment): every approval of one request
	// must carry the same answer; their comments may differ.
	AnswerDigest string `json:"answerDigest"`
	// For is the reviewer whose place By filled through a delegation
	// (Resolution.For; empty: By's own).
	For string `json:"for,omitempty"`
}

// Quorum is how many distinct reviewers must approve: at least 1.
func (s State) Quorum() int { return max(s.Approvals, 1) }

// approvalBy reports whether an approval of reviewer by is recorded.
func (s State) approvalBy(by string) bool {
	return slices.ContainsFunc(s.Approvers, func(a Approval) bool { return a.By == by })
}

// ApprovalRefused is the one rule of whether an approval by reviewer by
// (for forWhom through a delegation; "" for their own place) can still
// count towards s's quorum: ErrAlreadyApproved when by's approval is
// recorded, ErrSeatApproved when an approval already fills the place it
// would (forWhom's, else by's own), whoever gave it (the reviewer, or a
// delegate for them); nil when it can. Resolution.Check applies it to an
// approval; the inbox and a batch's first step ask it beforehand
// (Service.ApprovalRefusal).
func (s State) ApprovalRefused(by, forWhom string) error {
	seat := cmp.Or(forWhom, by)
	switch {
	case s.approvalBy(by):
		return ErrAlreadyApproved
	case slices.ContainsFunc(s.Approvers, func(a Approval) bool { return cmp.Or(a.For, a.By) == seat }):
		return ErrSeatApproved
	}
	return nil
}

// approvalOf returns the approval recorded under submission id sub, if any.
func (s State) approvalOf(sub string) (Approval, bool) {
	i := slices.IndexFunc(s.Approvers, func(a Approval) bool { return sub != "" && a.SubmissionID == sub })
	if i < 0 {
		return Approval{}, false
	}
	return s.Approvers[i], true
}

// isVote reports whether t is an approval that counts towards a quorum of
// more than one: it is recorded, and decides only when it completes it.
func (t Resolution) isVote(s State) bool {
	return t.Status == StatusSubmitted && s.Quorum() > 1
}

// Check is the one rule both stores apply before they write t on s. done
// reports that nothing is to be written: with a nil error, t repeats a
// resolution (or an approval) that already landed; else err says why t is
// refused (ErrConflict, ErrExpired, ErrAlreadyApproved, ErrAnswerDiffers).
func (t Resolution) Check(s State) (done bool, err error) {
	switch {
	case t.IsRetryOf(s):
		return true, nil
	case s.Status != StatusPending:
		return true, fmt.Errorf("status %s: %w", s.Status, ErrConflict)
	case !t.At.Before(s.ExpiresAt):
		return true, ErrExpired
	case !t.isVote(s):
		return false, nil
	}
	if err := s.ApprovalRefused(t.By, t.For); err != nil {
		return true, err
	}
	if len(s.Approvers) > 0 && s.Approvers[0].AnswerDigest != t.Agreement() {
		return true, ErrAnswerDiffers
	}
	return false, nil
}

// Step is what a store writes when Check lets t land on a state.
type Step struct {
	// Next is the state to write.
	Next State
	// Entry is the audit entry written with it.
	Entry AuditEntry
	// Answer is the answer to write, nil when there is none or when the
	// request stays pending (an approval short of its quorum).
	Answer *Answer
	// Outbox and Withdraw are the resolution's deliveries to write and to
	// remove: none for an approval short of its quorum (nothing was
	// decided yet).
	Outbox, Withdraw []Delivery
}

// Decides reports whether the step ends the request's pending state.
func (s Step) Decides() bool { return s.Next.Status != StatusPending }

// Step returns what landing t on s writes. Call it only after Check.
func (t Resolution) Step(s State) Step {
	if !t.isVote(s) {
		return Step{Next: t.Apply(s), Entry: t.AuditEntry(), Answer: t.Answer, Outbox: t.Outbox, Withdraw: t.Withdraw}
	}
	next := s
	next.Approvers = append(slices.Clip(s.Approvers), Approval{By: t.By, SubmissionID: t.SubmissionID, At: t.At, AnswerDigest: t.Agreement(), For: t.For})
	if len(next.Approvers) >= s.Quorum() {
		next = t.Apply(next)
		return Step{Next: next, Entry: t.AuditEntry(), Answer: t.Answer, Outbox: t.Outbox, Withdraw: t.Withdraw}
	}
	e := AuditEntry{At: t.At, Action: ActionApproved, Principal: t.By, Detail: t.ForNote(fmt.Sprintf("%d of %d approvals", len(next.Approvers), s.Quorum())), Via: t.Via, Issuer: t.Issuer}
	return Step{Next: next, Entry: e}
}
