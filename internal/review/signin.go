package review

import (
	"fmt"
	"net/http"
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

// The addresses of reviewer sign-in under the review routes (this package
// owns every /review/ route; internal/reviewauth serves these two).
const (
	// CallbackPath is where the issuer sends the reviewer back: register
	// <base>/review/oidc/callback as the client's redirect URI.
	CallbackPath = "/review/oidc/callback"
	// SwitchPath starts a fresh sign-in that asks the issuer to sign in
	// again (prompt=login), then returns to the review path in its "next"
	// query parameter: the 403 page's "Sign in with another account".
	SwitchPath = "/review/oidc/switch"
)

// switchAccountURL is the link of the 403 page that signs in with another
// account and comes back: SwitchPath, relative to the review page
// /review/{id}/{key} (so that it keeps any path prefix, such as a stage).
func switchAccountURL(id, key string) string {
	return "../" + strings.TrimPrefix(SwitchPath, "/review/") + "?next=" + url.QueryEscape(Path(id, key))
}

// SignInOutcome is how a step of reviewer sign-in (internal/reviewauth)
// ends when it does not redirect; SignInPage answers it through the
// outcomes table, as every page of the review routes is answered.
type SignInOutcome int

// The sign-in outcomes.
const (
	SignInMethod          SignInOutcome = iota + 1 // a method the sign-in addresses do not answer (set Allow first)
	SignInMisconfigured                            // this address cannot sign reviewers in
	SignInUnavailable                              // the identity provider cannot be reached
	SignInFailed                                   // a sign-in could not be started
	SignInIncomplete                               // a callback that completes no sign-in
	SignInRefusedByIssuer                          // the identity provider answered with an error
	SignInTooMany                                  // a callback past the bound on code exchanges (set Retry-After first)
)

var signInOutcomes = map[SignInOutcome]outcome{
	SignInMethod: outSignInMethod, SignInMisconfigured: outSignInMisconfigured, SignInUnavailable: outSignInUnavailable,
	SignInFailed: outSignInFailed, SignInIncomplete: outSignInIncomplete, SignInRefusedByIssuer: outSignInRefused,
	SignInTooMany: outSignInTooMany,
}

// SignInPage writes the page of sign-in outcome o: its status and page
// from the outcomes table, with the review page's headers.
func (h *Handler) SignInPage(w http.ResponseWriter, r *http.Request, o SignInOutcome) {
	out, ok := signInOutcomes[o]
	if !ok {
		out = outInternal
	}
	h.respond(w, r, out, reply{})
}
