package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// MetaRelatedTask is the specification's _meta key that marks what belongs
// to a 2025-11-25 task: tasks/result's answer, and a call the task
// machinery makes for a task (tasks/result's wait), which the tools copy
// onto what they send the client meanwhile (the host's form).
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// metaImmediateResponse is the specification's _meta key of the text a
// host may show the model at once, before the task ends.
const metaImmediateResponse = "io.modelcontextprotocol/model-immediate-response"

// coreTask is a 2025-11-25 Task.
type coreTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func (t *tasks) coreTask(v view) coreTask {
	c := coreTask{TaskID: v.ID, Status: v.Status, StatusMessage: v.Message, CreatedAt: timestamp(v.Created), LastUpdatedAt: timestamp(v.Updated), TTL: v.TTL.Milliseconds()}
	if v.pending {
		c.PollInterval = t.pollInterval(v).Milliseconds()
	}
	return c
}

// createTaskResult is the 2025-11-25 answer to a task-augmented call.
type createTaskResult struct {
	mcp.ResultBase
	Task coreTask `json:"task"`
}

// taskResult is a 2025-11-25 tasks/get or tasks/cancel result: the task's
// fields at the top level.
type taskResult struct {
	mcp.ResultBase
	coreTask
}

// extTask is a 2026-07-28 task, as CreateTaskResult (resultType "task") and
// as the DetailedTask of tasks/get (resultType "complete").
type extTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          json.RawMessage `json:"error,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
}

func (t *tasks) extTask(v view, resultType string) *extTask {
	c := t.coreTask(v)
	return &extTask{ResultType: resultType, TaskID: c.TaskID, Status: c.Status, StatusMessage: c.StatusMessage, CreatedAt: c.CreatedAt, LastUpdatedAt: c.LastUpdatedAt, TTLMs: c.TTL, PollIntervalMs: c.PollInterval}
}

// ackResult is the 2026-07-28 empty acknowledgement (tasks/update,
// tasks/cancel).
type ackResult struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// pollInterval is the interval suggested for polling the working task v,
// now.
func (t *tasks) pollInterval(v view) time.Duration {
	return PollInterval(DefaultPollInterval, v.Created, v.Created.Add(v.TTL), t.s.svc.Now())
}

// Errors. Every one is a JSON-RPC error with a sentence an agent can act
// on; internal error text never leaves the process.
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the task could not be read; try again"}

// taskFailed is the error inlined in a failed 2026-07-28 task: its result
// could not be produced for an internal failure (the extension keeps
// failed for protocol-level errors; a tool's own errors complete a task).
var taskFailed = json.RawMessage(`{"code":-32603,"message":"Internal error: this server could not produce the task's result"}`)

// errNotFound is the same for an unknown id and another principal's task.
var errNotFound = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found (no task with that taskId for this agent)"}

func errInvalid(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// errStillWorking answers a tasks/result whose wait bound elapsed before a
// human answered: the bound keeps every wait shorter than the host's and
// the gateway's timeouts.
func errStillWorking(bound string) error {
	return &jsonrpc.Error{Code: CodeStillWorking, Message: fmt.Sprintf("task still working: no human answered within this server's wait bound (%s); call tasks/result again, or poll tasks/get", bound)}
}

// CodeStillWorking is the JSON-RPC error code of a tasks/result that
// returned at the wait bound with the task still working (a server error
// code: the specification's tasks/result has no bound).
const CodeStillWorking = -32010

// errBusy answers a subscriptions/listen for tasks that found the
// server's or this client's wait slots full (Options.Hold): its sentence
// says which, and what to do instead.
func errBusy(err error) error {
	msg := "the server holds as many waits as it may; poll tasks/get instead"
	var e *elicitation.Error
	if errors.As(err, &e) && e.Kind == elicitation.ErrBusy {
		msg = e.Message + "; meanwhile poll tasks/get, which never waits"
	}
	return &jsonrpc.Error{Code: CodeBusy, Message: "subscriptions/listen refused: " + msg}
}

// CodeBusy is the JSON-RPC error code of a subscriptions/listen refused
// because the wait slots it would hold are full (a server error code).
const CodeBusy = -32011

// methodNotFound is a -32601 error whose sentence reaches the client. The
// go-sdk replaces the message of every error that is its method-not-found
// error (errors.Is, which matches a jsonrpc.Error by its code) with "method
// not found: <method>"; this one is not (it has no Is and no Unwrap), and
// the SDK's encoder takes its code through errors.As, which it answers.
type methodNotFound struct{ msg string }

func errMethodNotFound(msg string) error { return &methodNotFound{msg: msg} }

func (e *methodNotFound) Error() string { return e.msg }

func (e *methodNotFound) As(target any) bool {
	p, ok := target.(**jsonrpc.Error)
	if ok {
		*p = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: e.msg}
	}
	return ok
}
