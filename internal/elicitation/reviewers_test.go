package elicitation_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

func signedIn(email string, groups ...string) context.Context {
	return elicitation.WithIdentity(context.Background(), elicitation.Identity{
		Issuer: "https://id.example.com/", Subject: "sub-" + email, Email: email, EmailVerified: true, Groups: groups,
	})
}

func newSignInService(t *testing.T, pol elicitation.ReviewerPolicy) *elicitation.Service {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	return elicitation.NewService(elicitation.Config{Store: st, Now: c.Now, SignIn: true, Policy: pol})
}

func TestParseReviewers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string // normalised, or the error's field
		err  bool
	}{
		{[]string{"Alice@Example.com", "group:ops"}, "alice@example.com,group:ops", false},
		{[]string{" bob@example.com "}, "bob@example.com", false},
		{[]string{"alice"}, "reviewers[0]", true},
		{[]string{"a@b.c", "A@B.C"}, "reviewers[1]", true},
		{[]string{"group:"}, "reviewers[0]", true},
		{[]string{"a@b.c", "x\n@y.z"}, "reviewers[1]", true},
		{[]string{"@example.com"}, "reviewers[0]", true},
	} {
		got, err := elicitation.ParseReviewers(tc.in)
		var e *elicitation.Error
		switch {
		case tc.err && (!errors.As(err, &e) || e.Field != tc.want || e.Code != elicitation.CodeInvalidArgument):
			t.Errorf("ParseReviewers(%q) = %v, %v; want an invalid_argument on %s", tc.in, got, err, tc.want)
		case !tc.err && (err != nil || strings.Join(got, ",") != tc.want):
			t.Errorf("ParseReviewers(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestMayDecide(t *testing.T) {
	t.Parallel()
	alice := elicitation.Identity{Subject: "a1", Email: "Alice@Example.com", EmailVerified: true, Groups: []string{"ops"}}
	unverified := elicitation.Identity{Subject: "m1", Email: "bob@example.com"}
	for _, tc := range []struct {
		name      string
		pol       elicitation.ReviewerPolicy
		id        elicitation.Identity
		owner     string
		reviewers []string
		want      error
	}{
		{"anyone signed in", elicitation.ReviewerPolicy{}, alice, "agent", nil, nil},
		{"named by e-mail", elicitation.ReviewerPolicy{}, alice, "agent", []string{"alice@example.com"}, nil},
		{"named by group", elicitation.ReviewerPolicy{}, alice, "agent", []string{"group:ops"}, nil},
		{"not named", elicitation.ReviewerPolicy{}, alice, "agent", []string{"bob@example.com", "group:admins"}, elicitation.ErrNotReviewer},
		{"unverified e-mail does not match", elicitation.ReviewerPolicy{}, unverified, "agent", []string{"bob@example.com"}, elicitation.ErrNotReviewer},
		{"deployment default list", elicitation.ReviewerPolicy{Reviewers: []string{"bob@example.com"}}, alice, "agent", nil, elicitation.ErrNotReviewer},
		{"request's list wins over the default", elicitation.ReviewerPolicy{Reviewers: []string{"bob@example.com"}}, alice, "agent", []string{"group:ops"}, nil},
		{"owner barred", elicitation.ReviewerPolicy{BarOwner: true}, alice, "ALICE@example.com", nil, elicitation.ErrOwnerBarred},
		{"owner barred by subject", elicitation.ReviewerPolicy{BarOwner: true}, alice, "a1", []string{"group:ops"}, elicitation.ErrOwnerBarred},
		{"owner barred by unverified e-mail too", elicitation.ReviewerPolicy{BarOwner: true}, unverified, "bob@example.com", nil, elicitation.ErrOwnerBarred},
		{"owner not barred without the policy", elicitation.ReviewerPolicy{}, alice, "alice@example.com", nil, nil},
		{"anonymous owner is nobody", elicitation.ReviewerPolicy{BarOwner: true}, alice, elicitation.Anonymous, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.pol.MayDecide(tc.id, tc.owner, tc.reviewers)
			if tc.want == nil && err != nil || tc.want != nil && (!errors.Is(err, tc.want) || elicitation.CodeOf(err) != elicitation.CodeForbidden) {
				t.Fatalf("MayDecide = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReviewersNeedSignIn(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := context.Background()
	_, err := svc.Create(ctx, "agent", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: []byte(`{}`), Reviewers: []string{"alice@example.com"}})
	var e *elicitation.Error
	if !errors.As(err, &e) || e.Field != "reviewers" || !errors.Is(err, elicitation.ErrSignInRequired) {
		t.Fatalf("reviewers without sign-in: %v", err)
	}
	_, err = svc.Create(ctx, "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), Approvals: 2})
	if !errors.As(err, &e) || e.Field != "approvals" {
		t.Fatalf("approvals without sign-in: %v", err)
	}
	// approvals: 1 is what every request has.
	if _, err := svc.Create(ctx, "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), Approvals: 1}); err != nil {
		t.Fatalf("approvals 1 without sign-in: %v", err)
	}
	svc2 := newSignInService(t, elicitation.ReviewerPolicy{})
	for _, in := range []elicitation.Input{
		{Message: "Which?", Options: options(3), Approvals: 11},
		{Message: "Which?", Options: options(3), Approvals: 3, Reviewers: []string{"a@x.org", "b@x.org"}},
		{Message: "Which?", Options: options(3), Approvals: -1},
	} {
		if _, err := svc2.Create(ctx, "agent", elicitation.KindSelection, in); !errors.Is(err, elicitation.ErrApprovalsInvalid) {
			t.Errorf("approvals %d with %v: %v, want ErrApprovalsInvalid", in.Approvals, in.Reviewers, err)
		}
	}
}

// A quorum the named reviewers cannot reach without the barred creator is
// refused at creation.
func TestQuorumReachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	barred := newSignInService(t, elicitation.ReviewerPolicy{BarOwner: true})
	in := elicitation.Input{Message: "Which?", Options: options(3), Approvals: 2, Reviewers: []string{"carol@example.com", "alice@example.com"}}
	if _, err := barred.Create(ctx, "Carol@example.com", elicitation.KindSelection, in); !errors.Is(err, elicitation.ErrApprovalsInvalid) {
		t.Fatalf("unreachable quorum: %v", err)
	}
	if _, err := barred.Create(ctx, "bob@example.com", elicitation.KindSelection, in); err != nil {
		t.Fatalf("another creator: %v", err)
	}
	in.Reviewers = append(in.Reviewers, "group:ops")
	if _, err := barred.Create(ctx, "carol@example.com", elicitation.KindSelection, in); err != nil {
		t.Fatalf("with a group: %v", err)
	}
	// Without a quorum: reviewers naming only the creator could never
	// decide, whether the request names them or the deployment does.
	var e *elicitation.Error
	only := elicitation.Input{Message: "Which?", Options: options(3), Reviewers: []string{"carol@example.com"}}
	if _, err := barred.Create(ctx, "Carol@example.com", elicitation.KindSelection, only); !errors.Is(err, elicitation.ErrReviewersInvalid) || !errors.As(err, &e) ||
		e.Code != elicitation.CodeInvalidArgument || e.Field != "reviewers" || !strings.Contains(e.Message, "nobody could ever decide this request") {
		t.Fatalf("reviewers naming only the barred creator: %v", err)
	}
	deflt := newSignInService(t, elicitation.ReviewerPolicy{BarOwner: true, Reviewers: []string{"carol@example.com"}})
	if _, err := deflt.Create(ctx, "carol@example.com", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3)}); !errors.Is(err, elicitation.ErrReviewersInvalid) {
		t.Fatalf("the deployment's reviewers naming only the barred creator: %v", err)
	}
	if _, err := deflt.Create(ctx, "bob@example.com", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3)}); err != nil {
		t.Fatalf("another creator under the deployment's list: %v", err)
	}
	if _, err := newSignInService(t, elicitation.ReviewerPolicy{}).Create(ctx, "carol@example.com", elicitation.KindSelection, only); err != nil {
		t.Fatalf("only the creator, without the bar: %v", err)
	}
	open := newSignInService(t, elicitation.ReviewerPolicy{})
	in.Reviewers = in.Reviewers[:2]
	if _, err := open.Create(ctx, "carol@example.com", elicitation.KindSelection, in); err != nil {
		t.Fatalf("without the bar: %v", err)
	}
}

func TestSignedInReview(t *testing.T) {
	t.Parallel()
	svc := newSignInService(t, elicitation.ReviewerPolicy{BarOwner: true})
	ctx := context.Background()
	cr, err := svc.Create(ctx, "carol@example.com", elicitation.KindSelection, elicitation.Input{
		Message: "Which?", Options: options(3), Approvals: 2, Reviewers: []string{"alice@example.com", "bob@example.com", "group:ops", "carol@example.com"},
	})

	if err != nil {
		t.Fatal(err)
	}
	id, key := cr.State.ID, cr.ReviewKey
	pick := func(sub string) elicitation.Submission {
		return elicitation.Submission{ID: sub, Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{"o1"}}
	}
	// Not signed in, not named, the owner: refused, audited under their names.
	if _, err := svc.OpenReview(ctx, id, key); !errors.Is(err, elicitation.ErrForbidden) {
		t.Fatalf("unsigned render: %v", err)
	}
	if _, err := svc.OpenReview(signedIn("mallory@example.com"), id, key); !errors.Is(err, elicitation.ErrNotReviewer) {
		t.Fatalf("render by mallory: %v", err)
	}
	if _, err := svc.Submit(signedIn("mallory@example.com"), id, key, pick("m1")); !errors.Is(err, elicitation.ErrNotReviewer) {
		t.Fatalf("submission by mallory: %v", err)
	}
	if _, err := svc.Submit(signedIn("carol@example.com"), id, key, pick("c1")); !errors.Is(err, elicitation.ErrOwnerBarred) {
		t.Fatalf("submission by the owner: %v", err)
	}
	rv, err := svc.OpenReview(signedIn("alice@example.com"), id, key)
	if err != nil || rv.Reviewer != "alice@example.com" {
		t.Fatalf("render by alice: %+v, %v", rv.Reviewer, err)
	}
	// Alice approves; alice again does not reach the quorum.
	st, err := svc.Submit(signedIn("alice@example.com"), id, key, pick("a1"))
	if err != nil || st.Status != elicitation.StatusPending || len(st.Approvers) != 1 {
		t.Fatalf("alice's approval: %+v, %v", st, err)
	}
	if st, err := svc.Submit(signedIn("alice@example.com"), id, key, pick("a1")); err != nil || st.Status != elicitation.StatusPending {
		t.Fatalf("alice's retried approval: %+v, %v", st, err)
	}
	if _, err := svc.Submit(signedIn("alice@example.com"), id, key, pick("a2")); !errors.Is(err, elicitation.ErrAlreadyApproved) || elicitation.CodeOf(err) != elicitation.CodeConflict {
		t.Fatalf("alice's second approval: %v", err)
	}
	// Dave, of the ops group, completes it.
	st, err = svc.Submit(signedIn("dave@example.com", "ops"), id, key, pick("d1"))
	if err != nil || st.Status != elicitation.StatusSubmitted || st.DecidedBy != "dave@example.com" {
		t.Fatalf("dave's approval: %+v, %v", st, err)
	}
	res, err := svc.Result(ctx, "carol@example.com", id)
	if err != nil || res.DecidedBy != "dave@example.com" || strings.Join(res.ApprovedBy, ",") != "alice@example.com,dave@example.com" {
		t.Fatalf("result: %+v, %v", res, err)
	}
	tr, _ := svc.OperatorAudit(ctx, id)
	var lines []string
	for _, e := range tr.Entries {
		lines = append(lines, string(e.Action)+" "+e.Principal+" "+e.Detail)
	}
	want := []string{
		"created carol@example.com selection",
		"rendered reviewer refused: forbidden: not signed in: not allowed",
		"rendered mallory@example.com refused: forbidden: not a named reviewer: not allowed",
		"submission_refused mallory@example.com forbidden: not a named reviewer: not allowed",
		"submission_refused carol@example.com forbidden: the request's own principal: not allowed",
		"rendered alice@example.com pending",
		"approved alice@example.com 1 of 2 approvals",
		"submission_refused alice@example.com already approved by this reviewer",
		"decided dave@example.com submitted",
		"result_fetched carol@example.com ",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit trail:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestResultWithoutSignIn(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	ctx := context.Background()
	cr, err := svc.Create(ctx, "agent", elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// An identity in the context is ignored without sign-in: the link decides.
	if _, err := svc.Submit(signedIn("alice@example.com"), cr.State.ID, cr.ReviewKey, elicitation.Submission{ID: "r1", Decision: elicitation.DecisionSubmitted}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Result(ctx, "agent", cr.State.ID)
	if err != nil || res.DecidedBy != "" || res.ApprovedBy != nil {
		t.Fatalf("result: %+v, %v; want no decidedBy", res, err)
	}
}
