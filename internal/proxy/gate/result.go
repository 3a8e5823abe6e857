package gate

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// Payload is the structured result the gate returns instead of forwarding a
// call. Its first six fields are the proxy's other structured results' (the
// Python original's, plan.Outcome); the rest say which review to follow.
type Payload struct {
	plan.Outcome
	// ElicitationID, ReviewURL and ExpiresAt name the review request a
	// pending or decided call belongs to.
	ElicitationID string `json:"elicitationId,omitempty"`
	ReviewURL     string `json:"reviewUrl,omitempty"`
	ExpiresAt     string `json:"expiresAt,omitempty"`
	// Comment is the reviewer's note on a decline, when they left one.
	Comment *string `json:"comment,omitempty"`
	// ArgumentsDigest is the digest the approval was asked for.
	ArgumentsDigest string `json:"argumentsDigest,omitempty"`
}

// Errors, statuses and reasons of the gate's results.
const (
	ErrorPending  = "elicitation_pending"
	ErrorBlocked  = "tool_call_blocked"
	ErrorRequired = "elicitation_required"

	StatusPending   = "pending"
	StatusReject    = "reject"
	StatusNeeds     = "needs_elicitation"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"

	ReasonAwaitingReview        = "awaiting_review"
	ReasonConfirmationDeclined  = "confirmation_declined"
	ReasonConfirmationCancelled = "confirmation_cancelled"
	ReasonConfirmationRequired  = "confirmation_required"
	ReasonAmbiguous             = "ambiguous_argument"
	ReasonSelectionDeclined     = "selection_declined"
	ReasonReviewFailed          = "elicitation_failed"
	// ReasonTooManyReviews refuses a review past the gate's bound on one
	// client's open reviews, or on all clients'.
	ReasonTooManyReviews = "too_many_open_reviews"
	// ReasonArgumentsNotObject and ReasonInvalidText refuse a call the
	// gate could hold whose arguments no reviewer could be shown as they
	// would be forwarded.
	ReasonArgumentsNotObject = "arguments_not_object"
	ReasonInvalidText        = "arguments_invalid_text"
)

// Result renders the payload as an ordinary tool result (structured content
// and the same JSON as text, not isError), so that a client that raises on
// tool errors still reads it.
func (p *Payload) Result() *mcp.CallToolResult {
	if p.MissingOrAmbiguous == nil {
		p.MissingOrAmbiguous = []string{}
	}
	return plan.PayloadResult(p)
}

func pendingPayload(tool string, fields []string, t Ticket, what string) *Payload {
	return &Payload{
		Outcome: plan.Outcome{Error: ErrorPending, Tool: tool, Status: StatusPending, Reason: ReasonAwaitingReview,
			MissingOrAmbiguous: fields,
			Message: fmt.Sprintf("The tool %s was not called yet: %s on a review page. Give the user the reviewUrl (%s); "+
				"once they have answered, call the tool again with the same arguments and the answer is picked up.", tool, what, t.ReviewURL)},
		ElicitationID: t.ID, ReviewURL: t.ReviewURL, ExpiresAt: t.ExpiresAt,
	}
}
