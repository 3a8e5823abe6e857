package elicitation_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

func TestCleanComment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		err      error
	}{
		{"", "", nil},
		{"   ", "", nil},
		{" too expensive \r\nask again\r", "too expensive \nask again", nil},
		{"tab\tok", "tab\tok", nil},
		{strings.Repeat("é", elicitation.MaxCommentChars), strings.Repeat("é", elicitation.MaxCommentChars), nil},
		{strings.Repeat("x", elicitation.MaxCommentChars+1), "", elicitation.ErrCommentTooLong},
		{"bell\a", "", elicitation.ErrCommentInvalid},
		{"nul\x00", "", elicitation.ErrCommentInvalid},
		{"bad \xff utf-8", "", elicitation.ErrCommentInvalid},
	} {
		got, err := elicitation.CleanComment(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("CleanComment(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
		if tc.err != nil && elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
			t.Errorf("CleanComment(%q): code %s", tc.in, elicitation.CodeOf(err))
		}
	}
}

// TestServiceComment: a comment travels with a submit and with a decline,
// reaches the result, and the audit says only that there was one. A comment
// over the limit decides nothing.
func TestServiceComment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t)
	for _, tc := range []struct {
		name     string
		decision elicitation.Decision
		ids      []string
		comment  string
		detail   string
	}{
		{"declined with comment", elicitation.DecisionDeclined, nil, "none of these: I need a 2-bed flat", "declined, with a comment"},
		{"submitted with comment", elicitation.DecisionSubmitted, []string{"o1"}, "o1, but book the late check-in", "submitted, with a comment"},
		{"declined without", elicitation.DecisionDeclined, nil, "  ", "declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr, err := svc.Create(ctx, "alice", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3)})
			if err != nil {
				t.Fatal(err)
			}
			id, key := cr.State.ID, cr.ReviewKey
			long := elicitation.Submission{ID: "r1", Decision: tc.decision, SelectedIDs: tc.ids, Comment: strings.Repeat("x", elicitation.MaxCommentChars+1)}
			if _, err := svc.Submit(ctx, id, key, long); !errors.Is(err, elicitation.ErrCommentTooLong) {
				t.Fatalf("long comment: %v", err)
			}
			if st, _ := svc.Status(ctx, "alice", id); st.Status != elicitation.StatusPending {
				t.Fatalf("a refused comment decided: %s", st.Status)
			}
			sub := elicitation.Submission{ID: "r2", Decision: tc.decision, SelectedIDs: tc.ids, Comment: tc.comment}
			if _, err := svc.Submit(ctx, id, key, sub); err != nil {
				t.Fatal(err)
			}
			// The same page resent with the same comment is the retry;
			// with another comment, a conflict.
			if _, err := svc.Submit(ctx, id, key, sub); err != nil {
				t.Fatalf("retry: %v", err)
			}
			other := sub
			other.Comment = "something else"
			if _, err := svc.Submit(ctx, id, key, other); !errors.Is(err, elicitation.ErrConflict) {
				t.Fatalf("resent with another comment: %v", err)
			}
			r, err := svc.Result(ctx, "alice", id)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimSpace(tc.comment); r.Comment != want || r.Decision != tc.decision {
				t.Fatalf("result comment %q decision %s; want %q %s", r.Comment, r.Decision, want, tc.decision)
			}
			tr, err := svc.Audit(ctx, "alice", id)
			if err != nil {
				t.Fatal(err)
			}
			var decided []string
			for _, e := range tr.Entries {
				if e.Action == elicitation.ActionDecided {
					decided = append(decided, e.Detail)
				}
				if strings.TrimSpace(tc.comment) != "" && strings.Contains(e.Detail, strings.TrimSpace(tc.comment)) {
					t.Errorf("the audit holds the comment's text: %+v", e)
				}
			}
			if len(decided) != 1 || decided[0] != tc.detail {
				t.Errorf("decided entries %q, want [%q]", decided, tc.detail)
			}
		})
	}
}

// TestServiceClient: the MCP client's name and version are kept with the
// request, bounded and without control characters; none is recorded as nil.
func TestServiceClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := newService(t)
	for _, tc := range []struct {
		in   elicitation.Client
		want string
	}{
		{elicitation.Client{Name: "claude-code", Version: "2.1.0"}, "claude-code 2.1.0"},
		{elicitation.Client{Name: " cursor\x1b[31m ", Version: ""}, "cursor[31m"},
		{elicitation.Client{Name: strings.Repeat("n", 300), Version: "1"}, strings.Repeat("n", elicitation.MaxClientChars) + " 1"},
		{elicitation.Client{}, ""},
		{elicitation.Client{Version: "1.0"}, ""},
	} {
		cr, err := svc.Create(ctx, "alice", elicitation.KindApproval, elicitation.Input{Message: "ok?", Context: []byte(`{"a":1}`), Client: tc.in})
		if err != nil {
			t.Fatal(err)
		}
		rv, err := svc.OpenReview(ctx, cr.State.ID, cr.ReviewKey)
		if err != nil {
			t.Fatal(err)
		}
		if got := rv.Payload.Client.String(); got != tc.want {
			t.Errorf("client %+v recorded as %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQuorumWithComments: reviewers of a quorum agree on the answer, not on
// their notes: two approvals of the same picks with different comments both
// count and decide; a different pick still does not count.
func TestQuorumWithComments(t *testing.T) {
	t.Parallel()
	svc := newSignInService(t, elicitation.ReviewerPolicy{})
	cr, err := svc.Create(context.Background(), "agent", elicitation.KindSelection, elicitation.Input{Message: "Which?", Options: options(3), Approvals: 2})
	if err != nil {
		t.Fatal(err)
	}
	id, key := cr.State.ID, cr.ReviewKey
	sub := func(rid, pick, comment string) elicitation.Submission {
		return elicitation.Submission{ID: rid, Decision: elicitation.DecisionSubmitted, SelectedIDs: []string{pick}, Comment: comment}
	}
	if st, err := svc.Submit(signedIn("alice@example.com"), id, key, sub("r1", "o1", "fine by me")); err != nil || st.Status != elicitation.StatusPending {
		t.Fatalf("first approval: %s %v", st.Status, err)
	}
	if _, err := svc.Submit(signedIn("carol@example.com"), id, key, sub("r3", "o2", "")); !errors.Is(err, elicitation.ErrAnswerDiffers) {
		t.Fatalf("another pick: %v, want ErrAnswerDiffers", err)
	}
	st, err := svc.Submit(signedIn("bob@example.com"), id, key, sub("r2", "o1", "only if it ships today"))
	if err != nil || st.Status != elicitation.StatusSubmitted {
		t.Fatalf("second approval with another comment: %s %v", st.Status, err)
	}
	// Each approver's resend of its own page is still its retry.
	if _, err := svc.Submit(signedIn("bob@example.com"), id, key, sub("r2", "o1", "only if it ships today")); err != nil {
		t.Fatalf("retry of the deciding approval: %v", err)
	}
}
