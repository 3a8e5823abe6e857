// Package elicitation holds the domain of human-in-the-loop elicitation: the
// requests an agent makes (approvals and selections), their status machine,
// the limits every request must respect, the decisions a reviewer can make,
// the audit trail, and the Store interface that persists all of it.
//
// It knows nothing of AWS, HTTP or MCP. Adapters (the MCP tools, the review
// pages, the DynamoDB and embedded stores) import this package; it imports
// none of them.
//
// The Service type is the one place where the rules are applied: it creates
// requests, derives expiry from its clock on every read, decides exactly once
// through the Store, and records the audit trail.
package elicitation
