package mcptools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaReviewURL is the _meta key under which a 2025-11-25 tasks/get of a
// working task carries the review link kept with its request. The
// specification's Task has no field for a link (its statusMessage is prose
// for a person or a model), and GetTaskResult is a Result, whose _meta is
// the place the specification gives implementations for their own data,
// under a prefixed key; a host reads it without parsing the sentence.
const MetaReviewURL = "elicitation/review-url"

// getCore answers a 2025-11-25 tasks/get: the task, and while it waits
// the review link kept with its request in _meta (none kept: none there).
func (t *tasks) getCore(ctx context.Context, tg target) *taskResult {
	r := &taskResult{coreTask: t.coreTask(tg.view)}
	if tg.view.pending {
		if link, _ := t.s.keptLink(ctx, tg.principal, tg.state.ID); link != "" {
			r.Meta = mcp.Meta{MetaReviewURL: link}
		}
	}
	return r
}
