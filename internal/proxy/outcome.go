package proxy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is the structured result the proxy returns instead of calling the
// upstream tool. Its fields and reason spellings are those of the Python
// original, so that agents written for it keep working.
type Outcome struct {
	// Error is "tool_call_blocked" when a secret was missing, otherwise
	// "missing_required_input".
	Error string `json:"error"`
	Tool  string `json:"tool"`
	// Status is "blocked", "needs_input", "declined", "cancelled" or
	// "failed".
	Status string `json:"status"`
	Reason string `json:"reason"`
	// MissingOrAmbiguous lists the required fields still missing.
	MissingOrAmbiguous []string `json:"missing_or_ambiguous"`
	// Message tells a model, in English, what happened and what to do.
	Message string `json:"message"`
}

// Reasons, kept as the original spelled them.
const (
	ReasonSensitive       = "sensitive_required_field"
	ReasonDisabled        = "elicitation_disabled"
	ReasonUnsupported     = "elicitation_unsupported"
	ReasonDeclined        = "elicitation_declined"
	ReasonCancelled       = "elicitation_cancelled"
	ReasonFailed          = "elicitation_failed"
	ReasonNotElicitable   = "field_not_elicitable"
	ReasonStillMissing    = "required_fields_still_missing"
	ReasonInvalidResponse = "elicitation_invalid_response"
)

func list(fields []string) string { return strings.Join(fields, ", ") }

func blocked(tool string, missing, secret []string) *Outcome {
	return &Outcome{
		Error: "tool_call_blocked", Tool: tool, Status: "blocked", Reason: ReasonSensitive,
		MissingOrAmbiguous: missing,
		Message: fmt.Sprintf("The tool %s was not called: the required field(s) %s look like credentials or secrets, which the proxy never asks for in a form. "+
			"Call the tool again with every required field provided explicitly (missing: %s).", tool, list(secret), list(missing)),
	}
}

func needsInput(tool, status, reason string, missing []string, why string) *Outcome {
	return &Outcome{
		Error: "missing_required_input", Tool: tool, Status: status, Reason: reason,
		MissingOrAmbiguous: missing,
		Message:            fmt.Sprintf("The tool %s was not called: %s. Call it again with the missing required field(s) provided: %s.", tool, why, list(missing)),
	}
}

// result renders the outcome as a tool result: structured content, the same
// JSON as text, and isError so that clients do not hold it to the tool's
// output schema.
func (o *Outcome) result() *mcp.CallToolResult {
	b, _ := json.Marshal(o)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           true,
	}
}
