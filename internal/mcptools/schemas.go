package mcptools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The tools' JSON schemas, written out by hand so that they say exactly
// what the tools accept (the limits of SPEC §2 in words a model can
// follow) and stay small: the SDK re-reads the called tool's input schema
// on every 2026-07-28 tools/call, so the hot tools (elicit_status,
// elicit_await) have tiny ones. Placeholders in braces are the limits of
// package elicitation; schema compacts each document once, at start-up.

var limits = strings.NewReplacer(
	"{MaxMessageBytes}", strconv.Itoa(elicitation.MaxMessageBytes),
	"{MaxContextBytes}", strconv.Itoa(elicitation.MaxContextBytes),
	"{MaxSchemaBytes}", strconv.Itoa(elicitation.MaxSchemaBytes),
	"{MaxSchemaFields}", strconv.Itoa(elicitation.MaxSchemaFields),
	"{MaxTemplateBytes}", strconv.Itoa(elicitation.MaxTemplateBytes),
	"{MaxOptions}", strconv.Itoa(elicitation.MaxOptions),
	"{MaxOptionIDChars}", strconv.Itoa(elicitation.MaxOptionIDChars),
	"{MaxOptionBytes}", strconv.Itoa(elicitation.MaxOptionBytes),
	"{MaxLabelChars}", strconv.Itoa(elicitation.MaxLabelChars),
	"{MaxRequestBytes}", strconv.Itoa(elicitation.MaxRequestBytes),
	"{MaxReviewers}", strconv.Itoa(elicitation.MaxReviewers),
	"{MaxReviewerChars}", strconv.Itoa(elicitation.MaxReviewerChars),
	"{MaxApprovals}", strconv.Itoa(elicitation.MaxApprovals),
	"{DefaultTimeout}", strconv.Itoa(int(elicitation.DefaultTimeout.Seconds())),
	"{MinTimeout}", strconv.Itoa(int(elicitation.MinTimeout.Seconds())),
	"{MaxTimeout}", strconv.Itoa(int(elicitation.MaxTimeout.Seconds())),
)

// schema fills in the limits and compacts doc; it panics on invalid JSON
// (a programming error, caught by every test).
func schema(doc string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(limits.Replace(doc))); err != nil {
		panic("mcptools: bad schema: " + err.Error() + "\n" + doc)
	}
	return b.Bytes()
}

const commonCreateProps = `
	"css": {"type": "string", "description": "CSS applied inside the sandboxed frames that show your templates' output (never to the page around them). At most {MaxTemplateBytes} bytes."},
	"labels": {
		"type": "object",
		"description": "Renames the two buttons; their fixed meaning (submit / decline) stays visible beside a custom label.",
		"properties": {
			"submit": {"type": "string", "minLength": 1, "maxLength": {MaxLabelChars}, "description": "Label of the approve/submit button, 1 to {MaxLabelChars} characters."},
			"decline": {"type": "string", "minLength": 1, "maxLength": {MaxLabelChars}, "description": "Label of the decline button, 1 to {MaxLabelChars} characters."}
		},
		"additionalProperties": false
	},
	"timeoutSeconds": {"type": "integer", "description": "How long the reviewer has to answer, in seconds. Default {DefaultTimeout}; values outside {MinTimeout}..{MaxTimeout} (zero and negative ones too) are clamped. After it the request is expired."},
	"notify": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 16, "description": "Names of notification targets the operator configured (for example [\"oncall\"]) to tell of this request, in addition to the deployment's defaults: they get the review link, and later the outcome if they ask for it. Names only, never URLs or addresses; an unknown name is refused."},
	"escalate": {"type": "array", "maxItems": 5, "items": {"type": "object", "properties": {"after": {"type": "string", "description": "A duration after creation, such as \"30m\" or \"1h30m\": positive and before the request expires."}, "notify": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 4, "description": "Names of notification targets the operator configured that are told of new requests (or are in the deployment's escalation chain): a target told of outcomes only is refused."}}, "required": ["after", "notify"], "additionalProperties": false}, "description": "Escalation chain: if the request is still pending after each step's after, its targets are notified once, with the review link (replacing the deployment's chain). Example: [{\"after\": \"30m\", \"notify\": [\"oncall-lead\"]}]."},
	"reviewers": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": {MaxReviewerChars}}, "maxItems": {MaxReviewers}, "description": "Who may decide: e-mail addresses (matched against the signed-in reviewer's verified address) and group:NAME entries (members of that group). Default: the deployment's policy (any signed-in reviewer unless the operator set a list). Needs a server with reviewer sign-in; without it the review link alone decides and this is refused."},
	"approvals": {"type": "integer", "minimum": 1, "maximum": {MaxApprovals}, "description": "How many distinct signed-in reviewers must approve (the same answer) before the request is submitted; any one decline declines it. Default 1. Needs reviewer sign-in."},
	"push": {"type": "boolean", "default": true, "description": "Whether the server may also offer the review link to your host as a URL-mode elicitation, where the host declared it can show one (default true; the deployment may turn it off). The reviewUrl in the result is the same either way."},
	"askInHost": {"type": "boolean", "default": false, "description": "Ask for the answer in your host's own form as well, where the deployment allows it and your host declared form elicitation: the next elicit_await (for a task, its input request) shows the form (for a selection, the options as a single- or multi-select within the bounds) with accept, decline and an optional comment. Only when the person at your host is the one who should decide. Never for requests with reviewers or approvals, or on a server with reviewer sign-in. The result's hostForm says whether it will be asked, or why not; the reviewUrl stays open and the first answer wins."}`

var approvalInputSchema = schema(`{
	"type": "object",
	"properties": {
		"message": {"type": "string", "minLength": 1, "description": "What you ask the reviewer to approve, shown at the top of the review page. Required; at most {MaxMessageBytes} bytes."},
		"context": {"description": "JSON mode: the payload to approve (any JSON value), shown read-only and echoed back by elicit_result. At most {MaxContextBytes} bytes serialized. Give context, requestedSchema, or both."},
		"requestedSchema": {
			"type": "object",
			"description": "Form mode: a form for the reviewer to fill, as a flat JSON schema (the MCP elicitation form subset): {\"type\": \"object\", \"properties\": {...}, \"required\": [...]}. Each property is one of: a string (optional format email, uri, date or date-time; minLength, maxLength); a number or integer (minimum, maximum); a boolean; a single-select enum (string with enum, optional enumNames, or oneOf of {const, title}); a multi-select (array with items of such an enum; minItems, maxItems). Each may have title, description and default. No nesting, no $ref. At most {MaxSchemaFields} fields and {MaxSchemaBytes} bytes. The values come back typed in elicit_result's formSubmission."
		},
		"displayTemplate": {"type": "string", "description": "Optional Liquid template that renders context (bound as the variable context, every value HTML-escaped) instead of the default JSON view. At most {MaxTemplateBytes} bytes; a template error is reported now, not to the reviewer."},
		` + commonCreateProps + `
	},
	"required": ["message"],
	"additionalProperties": false
}`)

var selectionInputSchema = schema(`{
	"type": "object",
	"properties": {
		"message": {"type": "string", "minLength": 1, "description": "What the reviewer should pick and why, shown above the options. Required; at most {MaxMessageBytes} bytes."},
		"options": {
			"type": "array",
			"minItems": 1,
			"maxItems": {MaxOptions},
			"description": "The choices, 1 to {MaxOptions}. Each is an object with a unique string id (1 to {MaxOptionIDChars} characters) and any other keys your templates use; label, when present, is what the default table shows (else the id). At most {MaxOptionBytes} bytes per option serialized.",
			"items": {
				"type": "object",
				"properties": {
					"id": {"type": "string", "minLength": 1, "maxLength": {MaxOptionIDChars}},
					"label": {"type": "string"}
				},
				"required": ["id"]
			}
		},
		"minSelections": {"type": "integer", "minimum": 1, "description": "Fewest options the reviewer must pick. Default 1."},
		"maxSelections": {"type": "integer", "minimum": 1, "description": "Most options the reviewer may pick. Default 1 (a single choice), or minSelections if larger. Need 1 <= minSelections <= maxSelections <= number of options."},
		"rowTemplate": {"type": "string", "description": "Optional Liquid template for one option's row; sees option (that option's keys, HTML-escaped). At most {MaxTemplateBytes} bytes."},
		"headingTemplate": {"type": "string", "description": "Optional Liquid template above the options; sees options, message, minSelections, maxSelections. At most {MaxTemplateBytes} bytes."},
		"footerTemplate": {"type": "string", "description": "Optional Liquid template below the options; sees the same as headingTemplate. At most {MaxTemplateBytes} bytes."},
		"hoverTemplate": {"type": "string", "description": "Optional Liquid template for one option's details; sees option. At most {MaxTemplateBytes} bytes."},
		` + commonCreateProps + `
	},
	"required": ["message", "options"],
	"additionalProperties": false
}`)

var createdOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string", "description": "Names the request in elicit_await, elicit_status, elicit_result and elicit_cancel."},
		"status": {"type": "string", "enum": ["pending"]},
		"reviewUrl": {"type": "string", "format": "uri", "description": "The page where the human decides. Give it to them; it is their capability, do not publish it."},
		"expiresAt": {"type": "string", "format": "date-time", "description": "When the request expires if still undecided (RFC 3339)."},
		"hostForm": {"type": "string", "description": "With askInHost: whether your host will be asked (at the next elicit_await), or why not. Absent without askInHost."}
	},
	"required": ["elicitationId", "status", "reviewUrl", "expiresAt"]
}`)

// idInputSchema is elicit_status', elicit_result's and elicit_cancel's.
var idInputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string", "minLength": 1, "description": "The id elicit_approval or elicit_selection returned."}
	},
	"required": ["elicitationId"],
	"additionalProperties": false
}`)

var awaitInputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string", "minLength": 1, "description": "The id elicit_approval or elicit_selection returned."},
		"waitSeconds": {"type": "number", "exclusiveMinimum": 0, "description": "Wait at most this long. Optional: it can only shorten the server's own bound (default 20 s), never lengthen it."}
	},
	"required": ["elicitationId"],
	"additionalProperties": false
}`)

const statusEnum = `["pending", "submitted", "declined", "canceled", "expired", "consumed"]`

var awaitOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"status": {"type": "string", "enum": ` + statusEnum + `, "description": "pending: still undecided when the wait bound elapsed; call elicit_await again. submitted or declined: call elicit_result. canceled, expired: no answer will come. consumed: the result was already read."}
	},
	"required": ["status"]
}`)

// statusInputSchema is elicit_status': the id, and whether to include the
// audit trail.
var statusInputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string", "minLength": 1, "description": "The id elicit_approval or elicit_selection returned."},
		"includeAudit": {"type": "boolean", "description": "Also return the request's audit trail (creation, page renders, submission attempts, the decision, result fetches)."}
	},
	"required": ["elicitationId"],
	"additionalProperties": false
}`)

var statusOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"status": {"type": "string", "enum": ` + statusEnum + `},
		"expiresAt": {"type": "string", "format": "date-time"},
		"audit": {
			"type": "object",
			"description": "With includeAudit: the audit trail, oldest first. Renders and refused submissions beyond a cap are counted in omitted, not listed.",
			"properties": {
				"entries": {"type": "array", "items": {"type": "object", "properties": {
					"at": {"type": "string", "format": "date-time"},
					"action": {"type": "string", "enum": ["created", "rendered", "submission_refused", "approved", "decided", "canceled", "result_fetched", "notified"]},
					"principal": {"type": "string"},
					"detail": {"type": "string"},
					"via": {"type": "string", "enum": ["page", "app", "host-form", "slack", "rule"], "description": "Decided and approved entries: where the answer was given."}
				}, "required": ["at", "action", "principal"]}},
				"omitted": {"type": "object", "additionalProperties": {"type": "integer"}}
			},
			"required": ["entries"]
		}
	},
	"required": ["status", "expiresAt"]
}`)

var resultOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"status": {"type": "string", "enum": ["consumed"]},
		"decision": {"type": "string", "enum": ["submitted", "declined"], "description": "submitted: approved, filled or picked. declined: the reviewer said no (for a selection: none of these, refine)."},
		"context": {"description": "The context you sent, echoed (null if none)."},
		"formSubmission": {"type": ["object", "null"], "description": "The form values, typed as requestedSchema says (approval with a form, submitted), else null."},
		"selectedIds": {"type": ["array", "null"], "items": {"type": "string"}, "description": "The ids of the picked options (selection, submitted), else null."},
		"comment": {"type": ["string", "null"], "maxLength": ` + strconv.Itoa(elicitation.MaxCommentChars) + `, "description": "The reviewer's optional plain-text note, sent with either decision (with a decline: what to change or refine), else null."},
		"decidedBy": {"type": ["string", "null"], "description": "Who decided: the signed-in reviewer's verified e-mail address (else sub: and their subject) on a server with reviewer sign-in; null where the reviewer is not known (the review link alone decided)."},
		"decidedVia": {"type": "string", "enum": ["page", "app", "host-form", "slack", "rule"], "description": "Where the decision was made: page (the review page), app (the MCP App in the host), host-form (the host's own form), slack (a Slack message's buttons), rule (a standing approval the reviewer decidedBy made earlier decided it at once). Absent for decisions recorded before it was kept."},
		"decidedRule": {"type": "string", "description": "With decidedVia rule: the id of the standing approval that decided."},
		"approvedBy": {"type": "array", "items": {"type": "string"}, "description": "With approvals above 1: the distinct reviewers whose approvals were counted, in order. Absent otherwise."},
		"receipt": {"type": "string", "description": "A signed approval receipt: a JWT (ES256, typ approval-receipt+jwt) that anyone can check offline against the deployment's key set at /.well-known/jwks.json. It names the request (txn), who asked, the outcome, each reviewer counted (identity, issuer, time, channel; anonymous without sign-in), the quorum, and SHA-256 digests of the context and the form over RFC 8785 canonical JSON. Pass it on to whoever must know the human decided. Absent where the deployment has no signing keys."}
	},
	"required": ["status", "decision", "context", "formSubmission", "selectedIds", "comment", "decidedBy"]
}`)

var cancelOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"status": {"type": "string", "enum": ["canceled"]}
	},
	"required": ["status"]
}`)
