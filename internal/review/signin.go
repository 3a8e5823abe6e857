package review

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The pages of reviewer sign-in (internal/reviewauth puts the identity in
// the request's context; the Service decides who may decide).

// forbidden is the page for a signed-in reviewer who may not decide the
// request (not named, or its own creator): 403, with the reason.
func (h *Handler) forbidden(w http.ResponseWriter, err error) {
	msg := elicitation.PublicMessage(err)
	h.problem(w, http.StatusForbidden, "You cannot decide this request", strings.ToUpper(msg[:1])+msg[1:]+". Nothing was decided.")
}

// approvalCounted is the page after an approval that counts towards a
// quorum without completing it.
func (h *Handler) approvalCounted(st elicitation.State) *pageView {
	left := st.Quorum() - len(st.Approvers)
	more := "1 more reviewer"
	if left != 1 {
		more = fmt.Sprintf("%d more reviewers", left)
	}
	f := &finalView{Class: "done", Heading: "Your approval is counted",
		Text: []string{fmt.Sprintf("This request needs approvals from %d reviewers; %d of them approved so far. It is decided once %s approve the same answer, or when anyone declines.", st.Quorum(), len(st.Approvers), more)}}
	return &pageView{Title: f.Heading, Final: f}
}

// voteRefused is the page for an approval the quorum does not count: the
// reviewer's own second approval, or one with another answer (409).
func (h *Handler) voteRefused(w http.ResponseWriter, err error) {
	msg := elicitation.PublicMessage(err)
	h.problem(w, http.StatusConflict, "This approval was not counted", strings.ToUpper(msg[:1])+msg[1:]+".")
}

// signedIn shows the signed-in reviewer on v.
func signedIn(v *pageView, rv elicitation.Review) *pageView {
	if rv.Reviewer != elicitation.Reviewer {
		v.Reviewer = rv.Reviewer
	}
	return v
}
