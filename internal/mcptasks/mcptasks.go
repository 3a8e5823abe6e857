// Package mcptasks serves MCP Tasks on a go-sdk server whose tools create
// long-lived requests: a tool call answers at once with a task, and the
// host polls the task (or is told) and reads the result when it is ready.
//
// Both flavours are served from one server, chosen per request by its
// protocol era:
//
//   - 2025-11-25 (basic/utilities/tasks of that revision): the server
//     capability tasks.requests.tools.call, tasks.list and tasks.cancel,
//     execution.taskSupport on every tool ("optional" on the task tools,
//     "forbidden" on the rest), a tools/call carrying params.task answered
//     with a CreateTaskResult, tasks/get, tasks/result (which waits within
//     the tools' own wait bound), tasks/list (the principal's own tasks,
//     from the store's index of each principal's requests) and
//     tasks/cancel.
//   - 2026-07-28, the extension io.modelcontextprotocol/tasks: declared in
//     server/discover's capabilities.extensions; a task tool called by a
//     client that declares the extension in its per-request capabilities
//     answers with resultType "task"; tasks/get inlines the result once the
//     task is over and, while it waits, offers the review link as a
//     URL-mode input request to a host that declared URL elicitation;
//     tasks/update takes the host's answer to it; tasks/cancel; and
//     notifications/tasks through subscriptions/listen.
//
// A task is the request its tool created: the task id is the request's id,
// and its status, lifetime and result are read from wherever the tools keep
// the request, each time. Nothing about a task is held in memory, so a task
// created by one process can be polled through another, after a restart,
// or on a function invoked once per request. The task's result is exactly
// what the result tool returns, from the same code (Options.Result: so it
// is consumed and audited the same way), with the request's id and review
// link added; tasks/result waits as the await tool does (Options.Await).
//
// The package uses only the go-sdk's extension points: receiving
// middleware, custom methods (AddReceivingCustomMethod), result types
// embedding ResultBase, and the capabilities' extensions map. Two things
// v1.8.0 cannot carry are mended at their edges: the SDK drops params.task
// from tools/call (Lift moves it into _meta before the SDK decodes the
// request), and its types have no tasks capability or execution field
// (added when the initialize and tools/list results are encoded). The SDK
// offers a server no way to send a notification it does not know:
// notifications/tasks/status (on a 2025-11-25 session) and the 2026-07-28
// notifications/tasks (on a subscriptions/listen for task ids) travel as a
// carrier the SDK knows, which Uncarry turns back (notify.go,
// listen.go). A tasks request without params is given empty ones (the SDK
// panics reading the _meta of a nil custom params type).
//
// Toward the go-sdk upstream: the SDK-facing half (Lift, the capability and
// execution encoding, the custom methods, the per-request flavour, the wire
// types and errors) knows nothing of elicitation. The other half does: the
// Service calls (Status, ListOwned, Cancel, Audit, RecordPushAnswer, MaxWait), viewOf's
// mapping and sentences, and the elicitationId/reviewUrl of the creating
// tools' results. An upstream version would take those through one small
// interface (read, cancel, the input request's answer) and a result hook.
package mcptasks

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/sessionwatch"
)

// Extension is the 2026-07-28 extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// First protocol versions of each flavour (version strings are dates, so
// they order as strings).
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

// Options configure Tasks. Service, TaskTools, Await, Result, ResultTool
// and Principal are required.
type Options struct {
	// Service holds the requests the tools create.
	Service *elicitation.Service

	// TaskTools are the tools that may run as tasks; each returns, as its
	// structured content, the Created request.
	TaskTools []string

	// Await waits, within the server's wait bound, for the request id,
	// as the await tool does for the tools/call req (the task's own
	// client's: its session, extra and _meta), and returns its status;
	// tasks/result calls it.
	Await func(ctx context.Context, req *mcp.CallToolRequest, id string) (elicitation.Status, error)

	// Result returns a decided request's outcome as the result tool does
	// (it consumes the request), with the request's id and the review
	// link kept with it: the task's result. tasks/result and tasks/get
	// call it. An error is only for a request that cannot be read (not
	// found); the tool's own errors are isError results.
	Result func(ctx context.Context, req *mcp.CallToolRequest, id string) (*mcp.CallToolResult, error)

	// ResultTool names the tool whose output schema a task's result
	// extends (tools/list).
	ResultTool string

	// Principal is the agent identity of a request, as the tools see it.
	Principal func(*mcp.RequestExtra) string

	// ReviewLink returns the review link kept with a request for its owner
	// and the request's message (link "" if none is kept: the request's
	// push: false, or a deployment without state keys); nil: none is ever
	// kept. Results carry it as reviewUrl, and 2026-07-28 hosts that
	// declared URL elicitation are offered it as an input request.
	ReviewLink func(ctx context.Context, principal, id string) (link, message string)

	// Hold takes a wait slot for principal while a 2026-07-28
	// subscriptions/listen for tasks stays open (the listen holds its
	// request and a watch per task, as a waiting elicit_await holds its
	// call), and returns the function that gives it back, or the error
	// (elicitation.ErrBusy) saying which limit is full. nil: no bound.
	Hold func(principal string) (release func(), err error)

	// Watch takes a slot for a watch of principal's that outlives its call
	// (a task's status notification) and returns the function that gives
	// it back; ok false: the principal's or the server's watches are full,
	// and the notification, best effort, is not offered. nil: no bound.
	Watch func(principal string) (release func(), ok bool)

	// SessionDone returns a context that ends when a session closes, for
	// its task notifications; the server's own (sessionwatch.Watch.Done),
	// so that a session has one watcher whatever watches it. nil: the
	// Tasks' own.
	SessionDone func(*mcp.ServerSession) context.Context

	// PollInterval is suggested to hosts for a request's youth, and grows
	// from there with its age (the function PollInterval); 0:
	// DefaultPollInterval.
	PollInterval time.Duration

	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// Tasks serves MCP Tasks for one server.
type Tasks struct {
	opts Options
	log  *slog.Logger
	poll time.Duration

	sessionDone func(*mcp.ServerSession) context.Context // Options.SessionDone, or own's
	own         sessionwatch.Watch
}

// Install adds Tasks to s: the tasks methods and the middleware that turns
// task-augmented tool calls into tasks. Call it before s serves anything.
func Install(s *mcp.Server, opts Options) (*Tasks, error) {
	if opts.Service == nil || opts.Principal == nil || opts.Await == nil || opts.Result == nil || opts.ResultTool == "" || len(opts.TaskTools) == 0 {
		panic("mcptasks.Install: Service, Principal, Await, Result, ResultTool and TaskTools are required")
	}
	t := &Tasks{opts: opts, log: opts.Logger, poll: opts.PollInterval}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.poll <= 0 {
		t.poll = DefaultPollInterval
	}
	t.sessionDone = opts.SessionDone
	if t.sessionDone == nil {
		t.sessionDone = t.own.Done
	}
	// The methods are registered so that the SDK accepts and decodes them;
	// the middleware answers them, because it alone sees the request's
	// extra (its principal) and the rest of the chain (the tools).
	for _, m := range []string{methodGet, methodResult, methodCancel, methodList} {
		if err := mcp.AddReceivingCustomMethod(s, m, unreachable); err != nil {
			return nil, err
		}
	}
	if err := mcp.AddReceivingCustomMethod(s, methodUpdate, unreachableUpdate); err != nil {
		return nil, err
	}
	s.AddReceivingMiddleware(t.middleware)
	return t, nil
}

// Created is the structured content of a task tool's result: the request
// it created.
type Created interface {
	TaskID() string        // the request's id, which is the task's
	TaskReviewURL() string // its review page
}

func (t *Tasks) isTaskTool(name string) bool { return slices.Contains(t.opts.TaskTools, name) }

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
}

// updateParams are the params of tasks/update.
type updateParams struct {
	mcp.ParamsBase
	TaskID         *string                    `json:"taskId,omitempty"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
}

func unreachable(context.Context, *mcp.ServerSession, *taskParams) (*mcp.ResultBase, error) {
	return nil, errInternal
}

func unreachableUpdate(context.Context, *mcp.ServerSession, *updateParams) (*mcp.ResultBase, error) {
	return nil, errInternal
}
