package review

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The pages of reviewer sign-in (internal/reviewauth puts the identity in
// the request's context; the Service decides who may decide). Their
// statuses are in the outcomes table (outForbidden, outCounted,
// outVoteRefused).

// approvalCounted is the page after an approval that counts towards a
// quorum without completing it.
func approvalCounted(st elicitation.State) *pageView {
	left := st.Quorum() - len(st.Approvers)
	more := "1 more reviewer"
	if left != 1 {
		more = fmt.Sprintf("%d more reviewers", left)
	}
	f := &finalView{Class: "done", Heading: "Your approval is counted",
		Text: []string{fmt.Sprintf("This request needs approvals from %d reviewers; %d of them approved so far. It is decided once %s approve the same answer, or when anyone declines.", st.Quorum(), len(st.Approvers), more)}}
	return &pageView{Title: f.Heading, Final: f}
}

// signedIn shows the signed-in reviewer on v.
func signedIn(v *pageView, rv elicitation.Review) *pageView {
	if rv.Reviewer != "" && rv.Reviewer != elicitation.Reviewer {
		v.Reviewer = rv.Reviewer
	}
	if st := rv.State; st.Status == elicitation.StatusPending && st.Quorum() > 1 && v.Final == nil {
		v.Quorum = fmt.Sprintf("This request is decided when %d reviewers approve the same answer (any decline declines it).", st.Quorum())
		if n := len(st.Approvers); n > 0 {
			by := make([]string, n)
			for i, a := range st.Approvers {
				by[i] = a.By
			}
			v.Quorum += fmt.Sprintf(" Approved so far by %s.", strings.Join(by, ", "))
		}
	}
	return v
}

// switchAccountURL is the link of the 403 page that signs in with another
// account and comes back: internal/reviewauth's SwitchPath, relative to
// the review page (so that it keeps any path prefix, such as a stage).
func switchAccountURL(id, key string) string {
	return "../oidc/switch?next=" + url.QueryEscape(Path(id, key))
}
