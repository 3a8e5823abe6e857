package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Service is the elicitation service as the gate uses it: create a review
// request, wait for it within a bound, read its outcome.
type Service interface {
	Approval(ctx context.Context, in ApprovalRequest) (Ticket, error)
	Selection(ctx context.Context, in SelectionRequest) (Ticket, error)
	// Await waits at most wait and returns the request's status
	// (pending, submitted, declined, canceled, expired, consumed).
	Await(ctx context.Context, id string, wait time.Duration) (string, error)
	Result(ctx context.Context, id string) (Outcome, error)
}

// ApprovalRequest is an elicit_approval's arguments: Context is shown
// read-only, Schema (a flat MCP form schema) asks for values; either may be
// nil.
type ApprovalRequest struct {
	Message        string          `json:"message"`
	Context        any             `json:"context,omitempty"`
	Schema         json.RawMessage `json:"requestedSchema,omitempty"`
	TimeoutSeconds int             `json:"timeoutSeconds"`
	// Reviewers, if any, are who may decide (the service needs sign-in).
	Reviewers []string `json:"reviewers,omitempty"`
}

// SelectionRequest is an elicit_selection of exactly one option.
type SelectionRequest struct {
	Message        string           `json:"message"`
	Options        []map[string]any `json:"options"`
	TimeoutSeconds int              `json:"timeoutSeconds"`
	Reviewers      []string         `json:"reviewers,omitempty"`
}

// Ticket names a created review request.
type Ticket struct {
	ID        string `json:"elicitationId"`
	ReviewURL string `json:"reviewUrl"`
	ExpiresAt string `json:"expiresAt"`
}

// Outcome is a decided request as elicit_result returns it.
type Outcome struct {
	Status         string          `json:"status"`
	Decision       string          `json:"decision"`
	Context        json.RawMessage `json:"context"`
	FormSubmission json.RawMessage `json:"formSubmission"`
	SelectedIDs    []string        `json:"selectedIds"`
	Comment        *string         `json:"comment"`
	// Receipt is the signed receipt of the decision (internal/attest),
	// when the service signs them.
	Receipt string `json:"receipt,omitempty"`
}

// ErrGone is returned for a review request that will never be answered:
// unknown to the service, expired or canceled.
var ErrGone = errors.New("the review request is gone (expired, canceled or unknown)")

// ErrNotDecided is returned by Result for a request still pending.
var ErrNotDecided = errors.New("the review request is not decided yet")

// MCPService reaches an elicitation service over MCP (streamable HTTP) with
// the official go-sdk client, connecting on first use and again after a
// failed connection.
type MCPService struct {
	url    string
	client *mcp.Client
	http   *http.Client

	mu      sync.Mutex
	session *mcp.ClientSession
}

// NewMCPService returns a client of the service at url; apiKey, if not
// empty, is sent as a bearer token. impl names the proxy to the service.
func NewMCPService(url, apiKey string, impl *mcp.Implementation) *MCPService {
	var rt http.RoundTripper = http.DefaultTransport
	if apiKey != "" {
		rt = bearer{key: apiKey, next: rt}
	}
	// The client declares no elicitation capability: the service then
	// pushes nothing to the proxy, which hands the review URL on itself.
	return &MCPService{url: url, client: mcp.NewClient(impl, nil), http: &http.Client{Transport: rt}}
}

type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connect returns the session, opening it if needed. The session outlives
// the call that opens it, so it is opened under a context of its own.
func (s *MCPService) connect() (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session != nil {
		return s.session, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := s.client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: s.http}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to the elicitation service: %w", err)
	}
	s.session = cs
	return cs, nil
}

func (s *MCPService) drop(cs *mcp.ClientSession) {
	s.mu.Lock()
	if s.session == cs {
		s.session = nil
	}
	s.mu.Unlock()
	_ = cs.Close()
}

// Close ends the session with the service.
func (s *MCPService) Close() error {
	s.mu.Lock()
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs != nil {
		return cs.Close()
	}
	return nil
}

// toolError is a tool error of the service: its code and sentence.
type toolError struct{ code, msg string }

func (e *toolError) Error() string { return "elicitation service: " + e.code + ": " + e.msg }

// call runs one tool and decodes its structured result into out. A broken
// session is replaced once.
func (s *MCPService) call(ctx context.Context, tool string, args any, out any) error {
	// The caller's context is a downstream tool call's: the SDK reads
	// protocol details from its values, which belong to that other
	// session. Keep only its deadline and cancellation.
	var meta mcp.Meta
	if note := noteFrom(ctx); note != "" {
		meta = mcp.Meta{auditNoteMeta: note}
	}
	ctx, cancel := detach(ctx)
	defer cancel()
	for attempt := 0; ; attempt++ {
		cs, err := s.connect()
		if err != nil {
			return err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: tool, Arguments: args})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.drop(cs)
			if attempt == 0 {
				continue
			}
			return fmt.Errorf("elicitation service: %s: %w", tool, err)
		}
		if res.IsError {
			text := ""
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			code, msg, _ := strings.Cut(text, ": ")
			return &toolError{code: code, msg: msg}
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return fmt.Errorf("elicitation service: %s: %w", tool, err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("elicitation service: %s: reading the result: %w", tool, err)
		}
		return nil
	}
}

// Approval creates an elicit_approval.
func (s *MCPService) Approval(ctx context.Context, in ApprovalRequest) (Ticket, error) {
	var t Ticket
	err := s.call(ctx, "elicit_approval", in, &t)
	return t, err
}

// Selection creates an elicit_selection of one option.
func (s *MCPService) Selection(ctx context.Context, in SelectionRequest) (Ticket, error) {
	var t Ticket
	err := s.call(ctx, "elicit_selection", in, &t)
	return t, err
}

// Await calls elicit_await.
func (s *MCPService) Await(ctx context.Context, id string, wait time.Duration) (string, error) {
	var out struct {
		Status string `json:"status"`
	}
	err := s.call(ctx, "elicit_await", map[string]any{"elicitationId": id, "waitSeconds": wait.Seconds()}, &out)
	return out.Status, gone(err)
}

// Result calls elicit_result.
func (s *MCPService) Result(ctx context.Context, id string) (Outcome, error) {
	var out Outcome
	err := s.call(ctx, "elicit_result", map[string]any{"elicitationId": id}, &out)
	return out, gone(err)
}

func gone(err error) error {
	var te *toolError
	if errors.As(err, &te) {
		switch te.code {
		case "not_found", "expired", "canceled":
			return fmt.Errorf("%w (%s)", ErrGone, te.code)
		case "not_decided":
			return ErrNotDecided
		}
	}
	return err
}

// detach returns a context with ctx's deadline and cancellation but none of
// its values.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.Background()
	var cancelDeadline context.CancelFunc = func() {}
	if dl, ok := ctx.Deadline(); ok {
		d, cancelDeadline = context.WithDeadline(d, dl)
	}
	d, cancel := context.WithCancelCause(d)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return d, func() {
		stop()
		cancel(nil)
		cancelDeadline()
	}
}

// auditNoteMeta is the service's _meta key for a call's audit note
// (mcptools.AuditNoteMeta): the service records it with the audit entries
// the call writes.
const auditNoteMeta = "elicitation/audit-note"

type noteKey struct{}

// withNote makes the service calls made with ctx carry an audit note.
func withNote(ctx context.Context, note string) context.Context {
	return context.WithValue(ctx, noteKey{}, note)
}

func noteFrom(ctx context.Context) string {
	n, _ := ctx.Value(noteKey{}).(string)
	return n
}
