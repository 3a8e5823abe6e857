package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Tasks (the task*.go files): a creating tool's call answers at once
// with a task, and the host polls the task (or is told) and reads the
// result when it is ready. Both flavours are served from one server, chosen
// per request by its protocol era (eraOf):
//
//   - 2025-11-25 (basic/utilities/tasks of that revision): the server
//     capability tasks.requests.tools.call, tasks.list and tasks.cancel,
//     execution.taskSupport on every tool ("optional" on the creating
//     tools, "forbidden" on the rest), a tools/call carrying params.task
//     answered with a CreateTaskResult, tasks/get, tasks/result (which
//     waits within the tools' own wait bound), tasks/list (the principal's
//     own tasks, from the store's index of each principal's requests) and
//     tasks/cancel.
//   - 2026-07-28, the extension io.modelcontextprotocol/tasks: declared in
//     server/discover's capabilities.extensions; a creating tool called by
//     a client that declares the extension in its per-request capabilities
//     answers with resultType "task"; tasks/get inlines the result once the
//     task is over and, while it waits, offers the host's own form (a
//     request created with askInHost, where elicit_await would show it) or
//     else the review link as a URL-mode input request to a host that
//     declared URL elicitation; tasks/update takes the host's answer to it
//     (the form's is submitted as the page would); tasks/cancel; and
//     notifications/tasks through subscriptions/listen.
//
// A task is the request its tool created: the task id is the request's id,
// and its status, lifetime and result are read from the store each time.
// Nothing about a task is held in memory, so a task created by one process
// can be polled through another, after a restart, or on a function invoked
// once per request. The task's result is exactly what elicit_result
// returns, from the same code (tasks.outcome: so it is consumed and audited
// the same way), with the request's id and review link added;
// tasks/result waits as elicit_await does (tasks.result).
//
// Only the go-sdk's extension points are used: receiving middleware,
// custom methods (AddReceivingCustomMethod), result types embedding
// ResultBase, and the capabilities' extensions map. Two things v1.8.0
// cannot carry are mended at their edges: the SDK drops params.task from
// tools/call (Lift moves it into _meta before the SDK decodes the
// request), and its types have no tasks capability or execution field
// (added when the initialize and tools/list results are encoded). The SDK
// offers a server no way to send a notification it does not know:
// notifications/tasks/status (on a 2025-11-25 session) and the 2026-07-28
// notifications/tasks (on a subscriptions/listen for task ids) travel as a
// carrier the SDK knows, which Uncarry turns back (tasknotify.go,
// tasklisten.go). A tasks request without params is given empty ones (the
// SDK panics reading the _meta of a nil custom params type).

// Extension is the 2026-07-28 Tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// First protocol versions of each Tasks flavour (version strings are
// dates, so they order as strings).
const (
	FirstCoreVersion      = "2025-11-25"
	FirstExtensionVersion = "2026-07-28"
)

// DefaultPollInterval is the polling interval suggested to hosts for a
// request's first minute: a human answers in minutes, and on AWS each poll
// is one short invocation and one read (docs/benchmarks.md has the cost).
// Later the suggestion grows with the request's age (PollInterval).
const DefaultPollInterval = 5 * time.Second

// MaxPollInterval is the most PollInterval suggests (unless the first
// interval is longer): an answer given after a long wait reaches a polling
// host at most this much later.
const MaxPollInterval = 30 * time.Second

// tasks serves MCP Tasks for one Server.
type tasks struct{ s *Server }

// installTasks offers MCP Tasks on the server: the tasks methods and the
// middleware that turns task-augmented calls of the creating tools into
// tasks, which wait as elicit_await does and whose results are
// elicit_result's, from the same code.
func (s *Server) installTasks() {
	t := &tasks{s: s}
	// The methods are registered so that the SDK accepts and decodes them;
	// the middleware answers them, because it alone sees the request's
	// extra (its principal) and the rest of the chain (the tools). Only a
	// method name clash with the SDK's own can fail: a bug.
	err := errors.Join(
		mcp.AddReceivingCustomMethod(s.mcp, methodGet, unreachable[*taskParams]),
		mcp.AddReceivingCustomMethod(s.mcp, methodResult, unreachable[*taskParams]),
		mcp.AddReceivingCustomMethod(s.mcp, methodCancel, unreachable[*taskParams]),
		mcp.AddReceivingCustomMethod(s.mcp, methodList, unreachable[*taskParams]),
		mcp.AddReceivingCustomMethod(s.mcp, methodUpdate, unreachable[*updateParams]))
	if err != nil {
		panic("mcptools: installing tasks: " + err.Error())
	}
	s.mcp.AddReceivingMiddleware(t.middleware)
}

// isTaskTool reports whether the tool name may run as a task: the
// creating tools.
func isTaskTool(name string) bool { return name == ToolApproval || name == ToolSelection }

// Method names.
const (
	methodGet    = "tasks/get"
	methodResult = "tasks/result"
	methodCancel = "tasks/cancel"
	methodList   = "tasks/list"
	methodUpdate = "tasks/update"
)

// taskParams are the params of tasks/get, tasks/result and tasks/cancel
// (and tasks/list's cursor).
type taskParams struct {
	mcp.ParamsBase
	TaskID *string `json:"taskId,omitempty"`
	Cursor *string `json:"cursor,omitempty"`
	// bad names the member that did not decode (paramsOf refuses it).
	bad string
}

// updateParams are the params of tasks/update.
type updateParams struct {
	mcp.ParamsBase
	TaskID         *string                    `json:"taskId,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	bad            string
}

// UnmarshalJSON never fails: a member that is not what it must be is
// named in bad, for the method to refuse in its own words (the SDK would
// answer the decoder's text, which names this package's types).
func (p *taskParams) UnmarshalJSON(b []byte) error {
	p.bad = decodeParams(b, map[string]any{"_meta": &p.Meta, "taskId": &p.TaskID, "cursor": &p.Cursor})
	return nil
}

func (p *updateParams) UnmarshalJSON(b []byte) error {
	p.bad = decodeParams(b, map[string]any{"_meta": &p.Meta, "taskId": &p.TaskID, "inputResponses": &p.InputResponses})
	return nil
}

// decodeParams decodes params b into members, by name, and returns the
// name of the first that does not decode ("" when all do, unknown
// members ignored).
func decodeParams(b []byte, members map[string]any) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return "params"
	}
	for _, name := range slices.Sorted(maps.Keys(members)) {
		if v, ok := raw[name]; ok && json.Unmarshal(v, members[name]) != nil {
			return "params." + name
		}
	}
	return ""
}

// unreachable is the SDK's handler of a tasks method, which the
// middleware answers before it.
func unreachable[P any](context.Context, *mcp.ServerSession, P) (*mcp.ResultBase, error) {
	return nil, errInternal
}

// keptLink opens the review link kept (sealed) with a request for its
// owner, with the request's message; "" when none is kept or it is not
// readable.
func (s *Server) keptLink(ctx context.Context, principal, id string) (link, message string) {
	if s.sealer == nil {
		return "", ""
	}
	_, sealed, message, err := s.svc.PushLink(ctx, principal, id)
	if err != nil || sealed == "" {
		return "", ""
	}
	b, err := s.sealer.Open(linkPurpose(id), sealed)
	if err != nil {
		return "", ""
	}
	return string(b), message
}

// PrincipalOf is the authenticated agent identity of a request: the user
// id the bearer-token middleware recorded, else elicitation.Anonymous.
func PrincipalOf(extra *mcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return extra.TokenInfo.UserID
	}
	return anonymous
}

// taskOutput is a task's result: elicit_result's, with the request's id
// and the review link kept with it (null when none is).
type taskOutput struct {
	resultOutput
	ElicitationID string  `json:"elicitationId"`
	ReviewURL     *string `json:"reviewUrl"`
}
