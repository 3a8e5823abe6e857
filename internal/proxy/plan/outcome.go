package plan

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is the structured result the proxy returns instead of calling the
// upstream tool. Its fields, their order and its error, status and reason
// values are those of the Python original (v0.1.0), so that clients and
// agents written for it keep working; the messages are the port's own.
type Outcome struct {
	// Error is ErrorElicitationRequired when the proxy could not ask for
	// the missing fields, ErrorToolCallBlocked when it refused the call.
	Error string `json:"error"`
	Tool  string `json:"tool"`
	// Status is StatusNeedsElicitation or StatusReject.
	Status string `json:"status"`
	Reason string `json:"reason"`
	// MissingOrAmbiguous names the fields concerned: the missing ones,
	// or for a sensitive block only the sensitive ones.
	MissingOrAmbiguous []string `json:"missing_or_ambiguous"`
	// Message tells a model, in English, what happened and what to do.
	Message string `json:"message"`
}

// Error and status values, as the original spells them.
const (
	ErrorElicitationRequired = "elicitation_required"
	ErrorToolCallBlocked     = "tool_call_blocked"
	StatusNeedsElicitation   = "needs_elicitation"
	StatusReject             = "reject"
)

// Reasons. The first seven are the original's; ReasonNotElicitable and
// ReasonInvalidResponse are the port's, for fields the original would have
// asked for as text and passed on unchecked.
const (
	ReasonSensitive       = "sensitive_required_field"
	ReasonDisabled        = "elicitation_disabled"
	ReasonUnsupported     = "elicitation_unsupported"
	ReasonDeclined        = "elicitation_declined"
	ReasonCancelled       = "elicitation_cancelled"
	ReasonFailed          = "elicitation_failed"
	ReasonStillMissing    = "required_fields_missing_or_empty"
	ReasonNotElicitable   = "field_not_elicitable"
	ReasonInvalidResponse = "elicitation_invalid_response"
	// ReasonPolicyRejected is the original's reason for a refusal whose
	// issues have different reasons.
	ReasonPolicyRejected = "policy_rejected"
)

func list(fields []string) string { return strings.Join(fields, ", ") }

// Sensitive is the refusal of a call whose missing required fields look
// like secrets: it names only those fields.
func Sensitive(tool string, secret []string) *Outcome {
	msgs := make([]string, len(secret))
	for i, f := range secret {
		msgs[i] = fmt.Sprintf("The tool %s was not called: its required field %q looks like a credential or secret, which the proxy never asks for in a form; call the tool again with %q provided.", tool, f, f)
	}
	return &Outcome{
		Error: ErrorToolCallBlocked, Tool: tool, Status: StatusReject, Reason: ReasonSensitive,
		MissingOrAmbiguous: secret,
		Message:            strings.Join(msgs, " "),
	}
}

// StillMissing is the refusal of a call whose required fields are still
// missing after the user answered the form.
func StillMissing(tool string, missing []string) *Outcome {
	return &Outcome{
		Error: ErrorToolCallBlocked, Tool: tool, Status: StatusNeedsElicitation, Reason: ReasonStillMissing,
		MissingOrAmbiguous: missing,
		Message:            fmt.Sprintf("The tool %s was not called: it still needs input for %s.", tool, list(missing)),
	}
}

// NeedsElicitation is the result of a call the proxy could not complete by
// asking the user: why says why, in a clause ("the user declined").
func NeedsElicitation(tool, reason string, missing []string, why string) *Outcome {
	return &Outcome{
		Error: ErrorElicitationRequired, Tool: tool, Status: StatusNeedsElicitation, Reason: reason,
		MissingOrAmbiguous: missing,
		Message:            fmt.Sprintf("The tool %s was not called: %s. Call it again with the missing required field(s) provided: %s.", tool, why, list(missing)),
	}
}

// Result renders the outcome as the original does: an ordinary tool result
// (not isError, so a client that raises on tool errors still reads it)
// with the payload as structured content and the same JSON as text.
func (o *Outcome) Result() *mcp.CallToolResult {
	if o.MissingOrAmbiguous == nil {
		o.MissingOrAmbiguous = []string{}
	}
	return PayloadResult(o)
}

// PayloadResult renders a structured payload of the proxy's own (an
// outcome here, the gate's pending and refusal payloads) as an ordinary
// tool result: the payload as structured content and the same JSON, not
// HTML-escaped, as text.
func PayloadResult(payload any) *mcp.CallToolResult {
	b, _ := Marshal(payload)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}
