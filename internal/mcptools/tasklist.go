package mcptools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// ListPage is how many tasks one tasks/list answer holds at most.
const ListPage = 50

// listResult is a 2025-11-25 tasks/list result.
type listResult struct {
	mcp.ResultBase
	Tasks      []coreTask `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// list answers a 2025-11-25 tasks/list: the principal's own tasks (every
// request it created that the store still holds, whichever way it was
// created, since tasks/get reads each of them), newest first, a page at a
// time, read from the store's index of each principal's requests.
func (t *tasks) list(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	var after elicitation.OwnedPosition
	if p, ok := req.GetParams().(*taskParams); ok && p != nil && p.Cursor != nil && *p.Cursor != "" {
		var ok bool
		if after, ok = openCursor(*p.Cursor); !ok {
			return nil, errInvalid("tasks/list: the cursor is not one this server gave: pass nextCursor as it came, or no cursor to list from the newest task")
		}
	}
	principal := PrincipalOf(req.GetExtra())
	states, next, err := t.s.svc.ListOwned(ctx, principal, after, ListPage)
	if err != nil {
		if ctx.Err() == nil {
			t.s.log.ErrorContext(ctx, "listing tasks failed", "err", err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the tasks could not be listed; try again"}
	}
	res := &listResult{Tasks: make([]coreTask, 0, len(states))}
	for _, st := range states {
		res.Tasks = append(res.Tasks, t.coreTask(viewOf(st, eraCore)))
	}
	if !next.IsZero() {
		res.NextCursor = sealCursor(next)
	}
	return res, nil
}

// A cursor is a position in the principal's own listing, "v1." and the
// base64url of its JSON. It is not signed: the listing is always the
// asking principal's, so a made-up cursor can only move within it.
const cursorPrefix = "v1."

type cursorBody struct {
	CreatedAt int64  `json:"c"`
	ID        string `json:"i"`
}

func sealCursor(p elicitation.OwnedPosition) string {
	b, _ := json.Marshal(cursorBody{CreatedAt: p.CreatedAt.UnixNano(), ID: p.ID}) // cannot fail
	return cursorPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func openCursor(s string) (elicitation.OwnedPosition, bool) {
	rest, ok := strings.CutPrefix(s, cursorPrefix)
	if !ok || len(rest) > 1024 {
		return elicitation.OwnedPosition{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	var c cursorBody
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" || c.CreatedAt <= 0 {
		return elicitation.OwnedPosition{}, false
	}
	return elicitation.OwnedPosition{CreatedAt: time.Unix(0, c.CreatedAt).UTC(), ID: c.ID}, true
}
