// Package mcptools serves the elicitation tools of SPEC §3 over MCP's
// streamable HTTP transport, on the official Go SDK.
//
// One Server serves six tools (elicit_approval, elicit_selection,
// elicit_await, elicit_status, elicit_result, elicit_cancel) through one
// http.Handler to every protocol era at once: by default the session eras
// (2025-03-26, 2025-06-18, 2025-11-25) get sessions kept in this process
// and 2026-07-28 requests, routed on their Mcp-Protocol-Version header, the
// stateless handler; with Options.Stateless every era is served statelessly
// (every POST stands alone, so requests may alternate between processes
// that share only the store, as on Lambda). docs/protocol.md says what each
// era sees.
//
// Tool results carry structured content and the same JSON as text. Tool
// errors are isError results whose text starts with the machine code of
// SPEC §3 ("not_found: no elicitation with that id"), so that every client
// can read it; the sentence comes from elicitation.PublicMessage, so no
// internal error text ever reaches an agent.
package mcptools

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/eventstore"
)

// Options configure a Server. Service and ReviewURL are required; every other zero
// field takes the default its comment names.
type Options struct {
	// Service applies the rules of elicitation; required.
	Service *elicitation.Service

	// Stateless serves every POST of every era on its own, with JSON
	// responses and no session (mcp.StreamableHTTPOptions{Stateless: true,
	// JSONResponse: true}), for a deployment where consecutive requests may
	// reach different processes. Otherwise the handler keeps MCP sessions
	// in memory for the session eras and streams responses as server-sent
	// events, and serves 2026-07-28 requests statelessly.
	Stateless bool

	// ReviewURL builds the review URL handed to the agent for a new request,
	// from the HTTP request that carried the creating tool call; required
	// (compose.App.ReviewURL, the one place review URLs are built).
	ReviewURL func(r *http.Request, id, key string) string

	// OnCreated, if set, is called once a request is created, with its id
	// and review URL (which carries the reviewer's key). The local server
	// uses it to print the URL for its user; it must not log the URL
	// anywhere more public than that.
	OnCreated func(ctx context.Context, id, reviewURL string)

	// Push offers the review URL to hosts that declared URL elicitation
	// (push.go); a request's push: false still turns it off.
	Push bool

	// HostForm lets an agent's askInHost ask for the answer in the host's
	// own form, where the host declared form elicitation (hostform.go);
	// it needs a Sealer.
	HostForm bool

	// App offers the MCP App's decision tools (app.go) to hosts that
	// declare the io.modelcontextprotocol/ui extension; it needs a Sealer.
	App bool

	// Sealer seals the request state and the kept review link of a push
	// without a session (2026-07-28); nil: those hosts are not pushed to.
	// Every process serving one deployment needs the same keys.
	Sealer Sealer

	// Receipts signs the receipt of each result (elicit_result, a task's
	// result) from its outcome and the HTTP request that asked for it (nil
	// without one), which may name the deployment's public URL
	// (internal/attest); nil: results carry no receipt.
	Receipts func(r *http.Request, o attest.Outcome) (string, error)

	// SessionIdle closes an MCP session that has received no request for
	// this long (sessions.go); 0: DefaultSessionIdle, negative: never.
	SessionIdle time.Duration

	// MaxSessions caps the open MCP sessions: an initialize past it that
	// cannot close an idle session of its own principal is refused with 503
	// and a sentence saying why; 0: DefaultMaxSessions, negative: no cap.
	MaxSessions int

	// SessionsPerPrincipal is each principal's share of MaxSessions
	// (Principal: the API key's principal, else the client's address): a
	// principal at its share that opens another session closes its own
	// idlest one; one whose sessions are all in use is refused (429). 0:
	// DefaultSessionsPerPrincipal; never more than MaxSessions.
	SessionsPerPrincipal int

	// MaxWaits caps the elicit_await calls waiting at once, and
	// WaitsPerPrincipal those of one principal (Principal), on every era:
	// a call past either is refused at once with a busy tool error saying
	// which is full. 0: DefaultMaxWaits, DefaultWaitsPerPrincipal;
	// negative: no cap.
	MaxWaits, WaitsPerPrincipal int

	// MaxWatches caps the watches that outlive a call on a session (a
	// task's notifications/tasks/status, a URL push and its complete
	// notice), and WatchesPerPrincipal those of one principal: past
	// either, a new one is not started, which costs the host nothing it
	// relies on (both are best effort: the host polls the task, the review
	// link is in the result). 0: DefaultMaxWatches,
	// DefaultWatchesPerPrincipal; negative: no cap.
	MaxWatches, WatchesPerPrincipal int

	// MaxBodyBytes caps a request body (413 beyond it); 0:
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// Logger receives internal errors (never tokens or review keys); nil
	// discards.
	Logger *slog.Logger

	// Name and Version identify the server to clients; defaults
	// "elicitation" and "dev".
	Name, Version string
}

// Server is the MCP face of an elicitation.Service.
type Server struct {
	svc       *elicitation.Service
	reviewURL func(*http.Request, string, string) string
	onCreated func(context.Context, string, string)
	log       *slog.Logger
	push      bool
	hostForm  bool
	app       bool
	sealer    Sealer
	receipts  func(*http.Request, attest.Outcome) (string, error)
	// sessionDone maps each session carrying pushes or watched tasks to a
	// context that ends when it closes: one watcher per session, however
	// many parts ask (sessionEnd).
	sessionDone sync.Map // *mcp.ServerSession -> context.Context

	mcp *mcp.Server
	// The SDK's handlers, behind the front door (frontdoor.go): stateless
	// serves 2026-07-28 (with Options.Stateless every era), sessions the
	// session eras, through the session caps.
	stateless, sessionEras http.Handler

	// inflight maps the reference stamped on each HTTP request to that
	// request, for the duration of its ServeHTTP. A tool handler finds its
	// HTTP request through it (in RequestExtra.Header), which works in
	// stateful mode too, where the handler's context belongs to the
	// session rather than to the request.
	inflight sync.Map // string -> *http.Request
	refs     atomic.Uint64

	waits   slots // elicit_await calls waiting (waits.go)
	watches slots // watches that outlive a call on a session (waits.go)
	maxBody int64 // the request body limit (Options.MaxBodyBytes)
}

// requestRefHeader carries the in-flight reference from ServeHTTP to the
// tool handlers. ServeHTTP always overwrites it, so a client cannot set it.
const requestRefHeader = "X-Elicitation-Request-Ref"

// New returns a Server for opts. It panics if opts.Service or
// opts.ReviewURL is nil.
func New(opts Options) *Server {
	if opts.Service == nil || opts.ReviewURL == nil {
		panic("mcptools.New: Options.Service or Options.ReviewURL is nil")
	}
	s := &Server{svc: opts.Service, reviewURL: opts.ReviewURL, onCreated: opts.OnCreated, log: opts.Logger, push: opts.Push, hostForm: opts.HostForm, app: opts.App, sealer: opts.Sealer, receipts: opts.Receipts,
		waits:   newSlots(opts.MaxWaits, opts.WaitsPerPrincipal, DefaultMaxWaits, DefaultWaitsPerPrincipal),
		watches: newSlots(opts.MaxWatches, opts.WatchesPerPrincipal, DefaultMaxWatches, DefaultWatchesPerPrincipal)}
	s.log = cmp.Or(s.log, slog.New(slog.DiscardHandler))
	impl := &mcp.Implementation{Name: cmp.Or(opts.Name, "elicitation"), Version: cmp.Or(opts.Version, "dev"), Title: "Human-in-the-loop elicitation"}
	s.mcp = mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(s.log),
		// The tool and prompt lists never change: saying so keeps 2026-07-28
		// clients from opening a subscriptions/listen stream, which a
		// stateless deployment (a Lambda invocation) could only hold to its
		// timeout; one sent anyway is acknowledged with no subscription and
		// completed at once (TestNoListenStream).
		Capabilities: capabilities(opts.App),
	})
	for _, t := range s.tools() {
		s.mcp.AddTool(t.tool, t.handler)
	}
	s.addAppResource()
	s.addPrompts()
	s.installTasks()
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	caps := sessionLimits(opts)
	s.maxBody = caps.maxBody
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              sdkLogger(s.log),
		MaxRequestBodyBytes: caps.maxBody,
		// On the 2026-07-28 protocol a POST is the whole request: when the
		// client goes away, stop waiting for it.
		PropagateRequestCancellation: true,
	})
	s.stateless, s.sessionEras = stateless, stateless
	if opts.Stateless {
		return s
	}
	sessions := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger: sdkLogger(s.log),
		// Streams are resumable: a client that lost its connection gets
		// what it missed (Last-Event-ID), and every stream opens with a
		// priming event (sent with the answer when the call does not
		// wait: primingWriter). The store is bounded, per session and in
		// all (internal/eventstore).
		EventStore:                   eventstore.New(eventstore.Limits{}),
		PropagateRequestCancellation: true,
		SessionTimeout:               caps.idle,
		MaxRequestBodyBytes:          caps.maxBody,
	})
	s.sessionEras = caps.capSessions(s.mcp, sessions)
	return s
}

// capabilities are the server's: tools and prompts whose lists never
// change, and logging, which the SDK's default offered and clients of the
// session eras may set (the conformance suite's logging-set-level); with
// the MCP App, resources (its one page), whose list never changes either,
// and the io.modelcontextprotocol/ui extension with app-rendered
// elicitations (appelicit.go).
func capabilities(app bool) *mcp.ServerCapabilities {
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}}
	if app {
		caps.Resources = &mcp.ResourceCapabilities{}
		// Its ui extension's setting: it renders elicitations in its MCP App.
		caps.AddExtension(UIExtension, map[string]any{"elicitation": map[string]any{}})
	}
	//lint:ignore SA1019 deprecated from 2026-07-28 on, still part of the session eras this server serves
	caps.Logging = &mcp.LoggingCapabilities{}
	return caps
}

// FirstSessionlessVersion is the first protocol version without sessions
// (no initialize; every request carries its version, in _meta and in the
// Mcp-Protocol-Version header).
// It is the Tasks' extension's era too: one era, one constant.
const FirstSessionlessVersion = FirstExtensionVersion

// era is a protocol era as the edge tells them apart, which is also the
// Tasks flavour a request speaks.
type era int

const (
	eraEarly       era = iota // 2025-03-26, 2025-06-18: sessions; no Tasks, no URL elicitation
	eraCore                   // 2025-11-25: sessions, Tasks, URL elicitation
	eraSessionless            // 2026-07-28: no sessions; the Tasks extension
)

// eraOf is the era of protocol version v: the one place the edge compares
// versions (version strings are dates, so they order as strings).
func eraOf(v string) era {
	switch {
	case v >= FirstExtensionVersion:
		return eraSessionless
	case v >= FirstCoreVersion:
		return eraCore
	}
	return eraEarly
}

// Sessionless reports whether r is a request of a sessionless protocol
// era, which the stateless handler serves; requests of the session eras
// (2025-03-26, 2025-06-18, 2025-11-25, and an initialize, which carries no
// version header) go to the session handler.
func Sessionless(r *http.Request) bool {
	return eraOf(r.Header.Get("Mcp-Protocol-Version")) == eraSessionless
}

const instructions = `These tools ask a human to approve something, fill a form, or pick among options, on a web page this server renders. ` +
	`Create a request with elicit_approval or elicit_selection and give the returned reviewUrl to the human. ` +
	`Then call elicit_await with the elicitationId until its status is no longer "pending" (each call returns within the server's wait bound), ` +
	`and read the outcome with elicit_result. elicit_cancel withdraws a request that is no longer needed. ` +
	`A host with MCP Tasks may start elicit_approval and elicit_selection as tasks: the host then waits and brings the elicit_result answer itself, with no elicit_await calls.`

// Handler returns the streamable HTTP handler serving the tools (mount it
// at /mcp).
func (s *Server) Handler() http.Handler { return s }

// httpRequest returns the HTTP request that carried req, or nil.
func (s *Server) httpRequest(req *mcp.CallToolRequest) *http.Request {
	return s.httpRequestOf(req.Extra)
}

// httpRequestOf returns the HTTP request that carried the request whose
// extra this is, or nil.
func (s *Server) httpRequestOf(extra *mcp.RequestExtra) *http.Request {
	if extra == nil || extra.Header == nil {
		return nil
	}
	ref := extra.Header.Get(requestRefHeader)
	if r, ok := s.inflight.Load(ref); ok && ref != "" {
		return r.(*http.Request)
	}
	return nil
}

// bind ties a tool handler's context to the HTTP request that carried the
// call: its deadline (the invocation's remaining time on Lambda, which the
// wait bound must respect) and its end (the client went away). The SDK
// detaches handler contexts from the request on the older protocols.
func bind(ctx context.Context, r *http.Request) (context.Context, context.CancelFunc) {
	if r == nil {
		return ctx, func() {}
	}
	rctx := r.Context()
	var cancel context.CancelFunc
	if dl, ok := rctx.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, dl)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	stop := context.AfterFunc(rctx, cancel)
	return ctx, func() { stop(); cancel() }
}

const anonymous = elicitation.Anonymous

// limitPrincipal is who the limits (waits, watches) count a request
// against, from its extra: Principal of the HTTP request that carried it
// (without API keys, the client's address), else the request's principal.
func (s *Server) limitPrincipal(extra *mcp.RequestExtra) string {
	if r := s.httpRequestOf(extra); r != nil {
		return Principal(r)
	}
	return PrincipalOf(extra)
}

// sessionEnd returns a context that ends when ss closes. The first call for
// ss starts the one goroutine that waits for it; the entry goes with it.
func (s *Server) sessionEnd(ss *mcp.ServerSession) context.Context {
	if v, ok := s.sessionDone.Load(ss); ok {
		return v.(context.Context)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if v, loaded := s.sessionDone.LoadOrStore(ss, ctx); loaded {
		cancel()
		return v.(context.Context)
	}
	go func() {
		_ = ss.Wait()
		cancel()
		s.sessionDone.Delete(ss)
	}()
	return ctx
}
