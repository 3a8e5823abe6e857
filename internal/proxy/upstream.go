// upstream.go connects the proxy to the one MCP server it fronts, over
// streamable HTTP or as a stdio child process, and keeps that connection up.
//
// A stdio child runs in its own process group with a safe default
// environment (HOME, LOGNAME, PATH, SHELL, TERM and USER from the proxy's)
// plus the configured variables, as the Python original's MCP SDK starts
// one; InheritEnv gives it the proxy's whole environment instead. A URL whose
// path ends in /sse is reached with the legacy SSE transport. When the proxy
// closes the connection the whole group is terminated, so no grandchild (such
// as the server npx starts) is left behind; on Linux the child is also killed if the proxy dies. If the
// upstream goes away, the connection is re-established with backoff and every
// failure is logged.

package proxy

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of 2026-07-28 (SEP-2577) but in their deprecation window; the proxy relays them for the clients and servers that still use them, as the original does.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// upstreamProtocol is the protocol the proxy speaks to its upstream: the
// latest version of the stateful handshake, which every current server
// accepts.
const upstreamProtocol = "2025-11-25"

// upstreamOptions configures the upstream connection: the configured
// upstream (exactly one of URL and Command set; a URL whose path ends in
// /sse is reached with the legacy SSE transport, protocol 2024-11-05; a
// child gets defaultEnv's variables plus Env, or with InheritEnv the
// proxy's whole environment plus Env) and how the proxy reaches it.
type upstreamOptions struct {
	config.Upstream
	// Environ returns the proxy's environment; nil means os.Environ.
	Environ func() []string
	// Dir is the child's working directory; empty means the proxy's.
	Dir string
	// Stderr receives the child's standard error; nil discards it.
	Stderr io.Writer

	// HTTPClient is used for a URL upstream; nil means http.DefaultClient's
	// transport.
	HTTPClient *http.Client

	// Client identifies the proxy to the upstream.
	Client *mcp.Implementation
	Logger *slog.Logger

	// ToolListChanged is called when the upstream reports a changed tool list
	// and after every reconnection.
	ToolListChanged func()
	// Progress receives the upstream's progress notifications.
	Progress func(context.Context, *mcp.ProgressNotificationClientRequest)

	// Client is transparent: the proxy declares sampling, elicitation (form
	// and URL) and roots to the upstream when these are set, and they
	// answer the upstream's own requests (relayed to a downstream client).
	CreateMessage func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	Elicit        func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	ListRoots     func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error)
	// Notifications from the upstream that the proxy passes on.
	ElicitationComplete func(context.Context, *mcp.ElicitationCompleteNotificationRequest)
	Logging             func(context.Context, *mcp.LoggingMessageRequest)
	ResourceUpdated     func(context.Context, *mcp.ResourceUpdatedNotificationRequest)
	PromptListChanged   func()
	ResourceListChanged func()

	// TerminateGrace is how long a closing child gets to exit after its
	// stdin is closed before it is signalled; zero means 2 seconds.
	TerminateGrace time.Duration
	// MaxBackoff bounds the wait between reconnection attempts; zero means 5
	// seconds.
	MaxBackoff time.Duration
	// Now is the clock of the log's reminders that the upstream is still
	// not reachable (at most one a minute); nil means time.Now.
	Now func() time.Time
}

// errUpstreamUnavailable is returned while the upstream is down and being
// reconnected.
var errUpstreamUnavailable = errors.New("upstream MCP server unavailable")

// upstreamConn is a supervised connection to the upstream.
type upstreamConn struct {
	opts   upstreamOptions
	client *mcp.Client
	logger *slog.Logger

	mu      sync.Mutex
	session *mcp.ClientSession
	child   *child   // nil for a URL upstream
	raw     *rawLink // the stdio connection's, for RawCall; nil while down
	lastErr error
	closed  bool

	progress *progressTracker
	callers  *callers // the upstream's requests by call, for a URL upstream

	retries retryLog // how loudly failed attempts are logged

	done chan struct{} // closed when the supervisor has stopped
	stop chan struct{} // closed by Close

	// kick asks the reconnection loop to try now rather than after its
	// backoff (Ensure). started and finished count its attempts, and
	// attempted is closed (and replaced) when one finishes; under mu.
	kick              chan struct{}
	started, finished uint64
	attempted         chan struct{}
}

// dialUpstream connects to the upstream and starts supervising the connection. When
// the upstream is not reachable yet (the first attempt fails or ctx ends
// first), dialUpstream still returns a upstreamConn: it keeps trying in the background with
// backoff, Session fails meanwhile with errUpstreamUnavailable, and
// upstreamOptions.ToolListChanged is called once it connects. dialUpstream fails only for
// invalid options.
func dialUpstream(ctx context.Context, opts upstreamOptions) (*upstreamConn, error) {
	if (opts.URL == "") == (opts.Command == "") {
		return nil, errors.New("upstream: set exactly one of URL and Command")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = &mcp.Implementation{Name: "mcp-elicitation-proxy"}
	}
	if opts.TerminateGrace <= 0 {
		opts.TerminateGrace = 2 * time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &upstreamConn{
		opts:      opts,
		logger:    opts.Logger,
		progress:  newProgressTracker(),
		done:      make(chan struct{}),
		stop:      make(chan struct{}),
		kick:      make(chan struct{}, 1),
		attempted: make(chan struct{}),
		retries:   retryLog{now: opts.Now},
	}
	caps := &mcp.ClientCapabilities{}
	if opts.ListRoots != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	if opts.Elicit != nil {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
	}
	copts := &mcp.ClientOptions{
		Logger:       opts.Logger,
		Capabilities: caps,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if opts.ToolListChanged != nil {
				opts.ToolListChanged()
			}
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			if opts.Progress != nil {
				opts.Progress(ctx, req)
			}
			c.progress.done(req.Params.ProgressToken)
		},
		CreateMessageHandler:   opts.CreateMessage,
		ElicitationHandler:     opts.Elicit,
		LoggingMessageHandler:  opts.Logging,
		ResourceUpdatedHandler: opts.ResourceUpdated,
	}
	if opts.PromptListChanged != nil {
		copts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { opts.PromptListChanged() }
	}
	if opts.ResourceListChanged != nil {
		copts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { opts.ResourceListChanged() }
	}
	c.client = mcp.NewClient(opts.Client, copts)
	if opts.ListRoots != nil {
		// The SDK's client answers roots/list from a static list; the
		// proxy's comes from a downstream client.
		c.client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if r, ok := req.(*mcp.ListRootsRequest); ok && method == "roots/list" {
					return opts.ListRoots(ctx, r)
				}
				return next(ctx, method, req)
			}
		})
	}
	err := c.connect(ctx)
	if err != nil {
		text := c.redact(err.Error())
		c.retries.begin(text)
		c.logger.Warn("upstream not reachable yet; serving and connecting in the background, retrying until it answers", "upstream", c.Describe(), "err", text)
	}
	go c.supervise(err == nil)
	return c, nil
}

// Session returns the current upstream session, or an error wrapping
// errUpstreamUnavailable while it is being re-established.
func (c *upstreamConn) Session() (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == nil {
		if c.lastErr != nil {
			return nil, fmt.Errorf("%w: %v", errUpstreamUnavailable, c.lastErr)
		}
		return nil, errUpstreamUnavailable
	}
	return c.session, nil
}

// Ensure returns the current upstream session; while there is none it
// connects on demand: the reconnection loop tries at once instead of
// after its backoff, and Ensure waits for an attempt that began after it
// was called (or for ctx). So a client's request right after the upstream
// comes up finds it, instead of waiting for the next scheduled attempt.
// Its error, like Session's, wraps errUpstreamUnavailable.
func (c *upstreamConn) Ensure(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	if c.session != nil || c.closed {
		c.mu.Unlock()
		return c.Session()
	}
	// The attempt under way, if any, may have begun before the upstream
	// came up: wait for one begun after this call.
	target := c.started + 1
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	for {
		c.mu.Lock()
		if c.session != nil || c.closed || c.finished >= target {
			c.mu.Unlock()
			return c.Session()
		}
		attempted := c.attempted
		c.mu.Unlock()
		select {
		case <-attempted:
		case <-ctx.Done():
			return c.Session()
		}
	}
}

// Describe names the upstream for logs, without arguments or environment
// values, which may hold secrets.
func (c *upstreamConn) Describe() string {
	if c.opts.URL != "" {
		return RedactURL(c.opts.URL)
	}
	return c.opts.Command
}

// redact removes the URL's user information and query from text, such as
// an HTTP client's error, which quotes the URL it failed to reach.
func (c *upstreamConn) redact(text string) string {
	u, err := url.Parse(c.opts.URL)
	if c.opts.URL == "" || err != nil {
		return text
	}
	if u.RawQuery != "" {
		text = strings.ReplaceAll(text, u.RawQuery, "redacted")
	}
	if u.User != nil {
		if s := u.User.String(); s != "" {
			text = strings.ReplaceAll(text, s+"@", "redacted@")
		}
		if name := u.User.Username(); name != "" {
			text = strings.ReplaceAll(text, name+":", "redacted:")
			text = strings.ReplaceAll(text, name+"@", "redacted@")
		}
	}
	return text
}

// RedactURL is rawURL fit for a log: user information and query values,
// where hosted servers often take an API key, are replaced.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"redacted"}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// ChildPID returns the process id of the stdio child, or 0.
func (c *upstreamConn) ChildPID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.child == nil {
		return 0
	}
	return c.child.pid()
}

func (c *upstreamConn) connect(ctx context.Context) error {
	var (
		t    mcp.Transport
		ch   *child
		link *rawLink
	)
	if c.opts.URL != "" && c.opts.SSE() {
		hc := c.opts.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		t = captureTransport{Transport: detached{&mcp.SSEClientTransport{Endpoint: c.opts.URL, HTTPClient: hc}}, progress: c.progress}
	} else if c.opts.URL != "" {
		base := http.DefaultTransport
		if c.opts.HTTPClient != nil && c.opts.HTTPClient.Transport != nil {
			base = c.opts.HTTPClient.Transport
		}
		if c.callers == nil {
			c.callers = &callers{}
		}
		hc := &http.Client{Transport: &captureRoundTripper{base: base, progress: c.progress, callers: c.callers}}
		if c.opts.HTTPClient != nil {
			hc.Timeout = c.opts.HTTPClient.Timeout
		}
		t = &mcp.StreamableClientTransport{Endpoint: c.opts.URL, HTTPClient: hc}
	} else {
		ch = newChild(c.opts)
		link = &rawLink{}
		t = captureTransport{
			Transport: &stdioTransport{cmd: ch.cmd, terminate: c.opts.TerminateGrace, link: link},
			progress:  c.progress,
		}
	}
	cs, err := c.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
	if err != nil {
		if ch != nil {
			ch.killGroup()
			err = fmt.Errorf("starting upstream command %q: %w%s", c.opts.Command, err, ch.exitNote())
		} else {
			err = fmt.Errorf("connecting to upstream %s: %w", RedactURL(c.opts.URL), err)
		}
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		return err
	}
	c.mu.Lock()
	c.session, c.child, c.raw, c.lastErr = cs, ch, link, nil
	c.mu.Unlock()
	return nil
}

// supervise keeps the session up: it waits for it to end and
// re-establishes it, until the connection is closed. connected says
// whether dialUpstream's first attempt succeeded.
func (c *upstreamConn) supervise(connected bool) {
	defer close(c.done)
	everConnected := connected
	for {
		if !connected {
			if !c.reconnect() {
				return
			}
			msg := "upstream connected"
			if everConnected {
				msg = "upstream reconnected"
			}
			c.logger.Info(msg, "upstream", c.Describe(), "down", c.retries.connected())
			everConnected = true
			if c.opts.ToolListChanged != nil {
				c.opts.ToolListChanged()
			}
		}
		connected = false
		c.mu.Lock()
		cs, ch := c.session, c.child
		c.mu.Unlock()
		err := cs.Wait()
		c.mu.Lock()
		closed := c.closed
		c.session = nil
		c.raw = nil
		c.mu.Unlock()
		if ch != nil {
			ch.killGroup()
		}
		if closed {
			return
		}
		note := ""
		if ch != nil {
			note = ch.exitNote()
		}
		c.retries.begin("")
		c.logger.Error("upstream connection lost; reconnecting", "upstream", c.Describe(), "err", c.redact(errText(err))+note)
		c.mu.Lock()
		c.lastErr = fmt.Errorf("connection lost%s", note)
		c.mu.Unlock()
	}
}

func errText(err error) string {
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// reconnect retries with exponential backoff until it succeeds (true) or
// the connection is closed (false). A failed attempt is a warning when its
// error was not shown in the last minute (the outage's first, a changed
// error, the same one a minute on); otherwise a debug line (retryLog).
func (c *upstreamConn) reconnect() bool {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(backoff)
		select {
		case <-c.stop:
			t.Stop()
			return false
		case <-t.C:
		case <-c.kick: // a request is waiting (Ensure)
			t.Stop()
		}
		err := c.attempt()
		if err == nil {
			c.mu.Lock()
			closed := c.closed
			c.mu.Unlock()
			if closed {
				c.closeSession()
				return false
			}
			return true
		}
		text := c.redact(err.Error())
		level, down := c.retries.failed(text)
		c.logger.Log(context.Background(), level, "upstream reconnection failed; still retrying", "upstream", c.Describe(), "attempt", attempt, "down", down, "err", text)
		backoff = min(backoff*2, c.opts.MaxBackoff)
	}
}

// attempt is one connection attempt of the reconnection loop, counted
// for Ensure.
func (c *upstreamConn) attempt() error {
	c.mu.Lock()
	c.started++
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := c.connect(ctx)
	cancel()
	c.mu.Lock()
	c.finished++
	close(c.attempted)
	c.attempted = make(chan struct{})
	c.mu.Unlock()
	return err
}

func (c *upstreamConn) closeSession() {
	c.mu.Lock()
	cs, ch := c.session, c.child
	c.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	if ch != nil {
		ch.killGroup()
	}
}

// Close ends the session; a stdio child and its process group are
// terminated. Close waits for the supervisor to stop.
func (c *upstreamConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closed = true
	close(c.stop)
	cs, ch := c.session, c.child
	c.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
	}
	if ch != nil {
		ch.killGroup()
	}
	<-c.done
	if err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("closing upstream session: %w", err)
	}
	return nil
}

// child is a stdio upstream process.
type child struct {
	cmd *exec.Cmd
}

func newChild(opts upstreamOptions) *child {
	cmd := exec.Command(opts.Command, opts.Args...)
	cmd.Env = childEnv(opts)
	cmd.Dir = opts.Dir
	cmd.Stderr = opts.Stderr
	setProcessGroup(cmd)
	return &child{cmd: cmd}
}

func (ch *child) pid() int {
	if ch.cmd.Process == nil {
		return 0
	}
	return ch.cmd.Process.Pid
}

// exitNote describes how the child ended, if it has.
func (ch *child) exitNote() string {
	if ch.cmd.ProcessState == nil {
		return ""
	}
	return " (upstream process " + ch.cmd.ProcessState.String() + ")"
}

func (ch *child) killGroup() {
	if ch.cmd.Process != nil {
		killProcessGroup(ch.cmd.Process.Pid)
	}
}

// defaultEnv lists the variables a stdio child gets from the proxy's
// environment unless InheritEnv is set: the MCP SDKs' default for a server
// they start, which the Python original uses.
var defaultEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// childEnv is the environment a stdio child starts with: defaultEnv's
// variables from the proxy's environment (or all of it, with InheritEnv),
// then Env, which wins.
func childEnv(opts upstreamOptions) []string {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ
	}
	var env []string
	for _, kv := range environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, override := opts.Env[k]; override {
			continue
		}
		// A value starting with "()" is an exported shell function, which
		// the SDKs leave out for safety.
		if opts.InheritEnv || (slices.Contains(defaultEnv, k) && !strings.HasPrefix(v, "()")) {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Env)) {
		env = append(env, k+"="+opts.Env[k])
	}
	return env
}

// detached connects with a context that outlives the connect call: the SSE
// transport's event stream is the GET request Connect starts, which would
// end with the caller's (dial timeout) context. The caller's context still
// bounds how long connecting may take.
type detached struct{ mcp.Transport }

func (d detached) Connect(ctx context.Context) (mcp.Connection, error) {
	type result struct {
		c   mcp.Connection
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := d.Transport.Connect(context.WithoutCancel(ctx))
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// rootsChangedURI is a placeholder root added and removed to make the SDK's
// client send notifications/roots/list_changed; roots/list itself is
// answered by upstreamOptions.ListRoots.
const rootsChangedURI = "mcp-elicitation-proxy:roots-changed"

// NotifyRootsChanged tells the upstream that the roots changed (a
// downstream client said so).
func (c *upstreamConn) NotifyRootsChanged() {
	c.client.AddRoots(&mcp.Root{URI: rootsChangedURI})
	c.client.RemoveRoots(rootsChangedURI)
}
