package elicitation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits of the reviewers input.
const (
	MaxReviewers     = 50
	MaxReviewerChars = 254
	// GroupPrefix marks a reviewers entry that names a group claim value.
	GroupPrefix = "group:"
)

// Named errors of the reviewers and approvals inputs.
var (
	ErrReviewersInvalid = errors.New("reviewers is not a list of e-mail addresses and group:NAME entries")
	ErrApprovalsInvalid = errors.New("approvals out of range")
	ErrSignInRequired   = errors.New("reviewers and approvals need reviewer sign-in, which this server does not have")
	// ErrNotReviewer and ErrOwnerBarred are the forbidden decisions (both
	// match ErrForbidden).
	ErrNotReviewer = fmt.Errorf("not a named reviewer: %w", ErrForbidden)
	ErrOwnerBarred = fmt.Errorf("the request's own principal: %w", ErrForbidden)
)

// Identity is a signed-in reviewer as the identity provider vouched for
// them: the issuer and subject (the stable key of the account), the e-mail
// address if the provider verified it, and the groups of its group claim.
type Identity struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Groups        []string
}

// Principal is the name recorded for the reviewer in the audit trail and
// in decidedBy: the verified e-mail address, else "sub:" and the subject.
// Quorums count distinct principals.
func (id Identity) Principal() string {
	if id.EmailVerified && id.Email != "" {
		return strings.ToLower(id.Email)
	}
	return "sub:" + id.Subject
}

type identityKey struct{}

// WithIdentity returns ctx carrying the signed-in reviewer, as the sign-in
// middleware (internal/reviewauth) sets it for the review handlers.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the signed-in reviewer carried by ctx, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok && id.Subject != ""
}

// ReviewerPolicy is a deployment's rule of who may decide, applied when
// reviewers sign in (Config.SignIn).
type ReviewerPolicy struct {
	// Reviewers is the default list for requests that name none; empty
	// means any signed-in reviewer.
	Reviewers []string
	// BarOwner refuses a reviewer whose principal, e-mail or subject is
	// the principal that created the request (the agent's own identity).
	BarOwner bool
}

// ParseReviewers validates a reviewers list: e-mail addresses (compared
// without regard to case) and "group:NAME" entries, at most MaxReviewers,
// without duplicates. It returns them normalised (e-mails lower-cased).
func ParseReviewers(list []string) ([]string, error) {
	if len(list) > MaxReviewers {
		return nil, invalid(ErrReviewersInvalid, "reviewers", "reviewers lists %d entries; at most %d are allowed", len(list), MaxReviewers)
	}
	out := make([]string, 0, len(list))
	for i, r := range list {
		field := fmt.Sprintf("reviewers[%d]", i)
		r = strings.TrimSpace(r)
		if r == "" || utf8.RuneCountInString(r) > MaxReviewerChars || hasControl(r) {
			return nil, invalid(ErrReviewersInvalid, field, "%s must be an e-mail address or group:NAME of 1 to %d characters", field, MaxReviewerChars)
		}
		if g, ok := strings.CutPrefix(r, GroupPrefix); ok {
			if strings.TrimSpace(g) == "" {
				return nil, invalid(ErrReviewersInvalid, field, "%s names no group; write group:NAME", field)
			}
		} else {
			at := strings.LastIndexByte(r, '@')
			if at <= 0 || at == len(r)-1 || strings.ContainsAny(r, " ,;<>") {
				return nil, invalid(ErrReviewersInvalid, field, "%s (%q) is not an e-mail address; name a group as group:NAME", field, truncate(r, 64))
			}
			r = strings.ToLower(r)
		}
		if slices.Contains(out, r) {
			return nil, invalid(ErrReviewersInvalid, field, "%s (%q) is listed twice", field, truncate(r, 64))
		}
		out = append(out, r)
	}
	return out, nil
}

// checkApprovals validates a quorum against the reviewers who may reach it.
func checkApprovals(n int, reviewers []string) error {
	if n < 0 || n > MaxApprovals {
		return invalid(ErrApprovalsInvalid, "approvals", "approvals must be 1 to %d distinct reviewers, not %d", MaxApprovals, n)
	}
	if n <= 1 || len(reviewers) == 0 || slices.ContainsFunc(reviewers, func(r string) bool { return strings.HasPrefix(r, GroupPrefix) }) {
		return nil
	}
	if len(reviewers) < n {
		return invalid(ErrApprovalsInvalid, "approvals", "approvals %d needs at least %d distinct reviewers; reviewers lists %d", n, n, len(reviewers))
	}
	return nil
}

// MayDecide reports whether the signed-in reviewer id may decide a request
// created by owner whose payload names reviewers (else the policy's
// default list), also for another reviewer through one of ds, the
// delegations to id active now (delegation.go). The error, an *Error with
// CodeForbidden, says why not in words the reviewer can act on.
func (pol ReviewerPolicy) MayDecide(id Identity, owner string, reviewers []string, ds ...Delegation) error {
	_, err := pol.DecidesFor(id, owner, reviewers, ds)
	return err
}

// DecidesFor is MayDecide that also says for whom id would decide: "" for
// themselves, else the delegator of the first of ds (delegations to id,
// active now) who may decide the request because it names their address.
// A delegation never lifts the owner bar, from either side.
func (pol ReviewerPolicy) DecidesFor(id Identity, owner string, reviewers []string, ds []Delegation) (string, error) {
	err := pol.mayDecideSelf(id, owner, reviewers)
	if err == nil || errors.Is(err, ErrOwnerBarred) {
		return "", err
	}
	for _, d := range ds {
		if d.To != id.Principal() {
			continue
		}
		// The delegator as the rule sees them: their address, no groups.
		if pol.mayDecideSelf(Identity{Subject: "delegator", Email: d.From, EmailVerified: true}, owner, reviewers) == nil {
			return d.From, nil
		}
	}
	return "", err
}

func (pol ReviewerPolicy) mayDecideSelf(id Identity, owner string, reviewers []string) error {
	if pol.BarOwner && isOwner(id, owner) {
		return &Error{Code: CodeForbidden, Kind: ErrOwnerBarred, Field: "reviewer",
			Message: "you created this request (through your agent), so you cannot decide it; ask another reviewer"}
	}
	if len(reviewers) == 0 {
		reviewers = pol.Reviewers
	}
	if len(reviewers) == 0 {
		return nil
	}
	email := ""
	if id.EmailVerified {
		email = strings.ToLower(id.Email)
	}
	for _, r := range reviewers {
		if g, ok := strings.CutPrefix(r, GroupPrefix); ok {
			if slices.Contains(id.Groups, g) {
				return nil
			}
		} else if email != "" && r == email {
			return nil
		}
	}
	return &Error{Code: CodeForbidden, Kind: ErrNotReviewer, Field: "reviewer",
		Message: "you are not one of the reviewers this request names; ask the agent's owner to add you, or sign in with another account"}
}

func isOwner(id Identity, owner string) bool {
	if owner == "" || owner == Anonymous {
		return false
	}
	o := strings.ToLower(owner)
	return o == id.Principal() || o == strings.ToLower(id.Subject) || (id.Email != "" && o == strings.ToLower(id.Email))
}

// reachable refuses, at creation, a request the reviewers who may decide
// it can never decide once the creator is barred: a reviewers list (the
// request's, else the deployment's default) of addresses only that names
// fewer people besides the creator than the quorum needs (one, for a
// request without a quorum). A group may hold anyone, so a list with a
// group is always reachable.
func (pol ReviewerPolicy) reachable(owner string, reviewers []string, approvals int) error {
	what := "reviewers names"
	if len(reviewers) == 0 {
		what, reviewers = "the deployment's reviewers (--reviewers) name", pol.Reviewers
	}
	if !pol.BarOwner || len(reviewers) == 0 || slices.ContainsFunc(reviewers, func(r string) bool { return strings.HasPrefix(r, GroupPrefix) }) {
		return nil
	}
	others := 0
	for _, r := range reviewers {
		if r != strings.ToLower(owner) {
			others++
		}
	}
	switch need := max(approvals, 1); {
	case others == 0:
		return invalid(ErrReviewersInvalid, "reviewers", "%s only you, the request's creator, and the creator may not decide (the owner bar): nobody could ever decide this request; name another reviewer or a group:NAME", what)
	case others < need:
		return invalid(ErrApprovalsInvalid, "approvals", "approvals %d needs %d distinct reviewers besides you (the creator may not decide); %s %d", need, need, what, others)
	}
	return nil
}
