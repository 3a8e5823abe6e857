package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/attest"
	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/compose"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/mcptools"
	"github.com/mcp-elicitation/elicitation/internal/mcptools/tasktest"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
	sealerpkg "github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// tokens are the test's bearer tokens and the principals they stand for.
var tokens = map[string]string{"tok-alice": "alice", "tok-bob": "bob"}

// world is the MCP endpoint under test: one or more processes' worth of
// servers (each its own store handle, Service and mcptools.Server) on one
// store file, requests alternating between them.
type world struct {
	t          testing.TB
	stateless  bool
	maxWait    time.Duration
	waitShare  int
	watchShare int
	keyless    bool
	hostForm   bool
	app        bool
	receipts   []signing.Key
	onElicit   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	wrapStore  func(elicitation.Store) elicitation.Store
	dbPath     string
	sealer     *sealerpkg.Keyring
	clock      *testclock.Clock // the processes' shared time

	mu      sync.Mutex
	svc     *elicitation.Service // the first instance's, to decide with
	servers []*httptest.Server
	closers []func()
	created map[string]string // elicitation id -> review URL
	next    atomic.Uint64
}

type worldOptions struct {
	stateless  bool
	instances  int
	maxWait    time.Duration
	waitShare  int // mcptools.Options.WaitsPerPrincipal; 0: the default
	watchShare int // mcptools.Options.WatchesPerPrincipal; 0: the default
	// keyless serves without credentials, as a local server without
	// --require-api-key: every request is anonymous, and its bearer token
	// only names the machine it comes from (clientAddrs), which the limits
	// count it against.
	keyless  bool
	hostForm bool // mcptools.Options.HostForm
	app      bool // mcptools.Options.App
	// receipts signs results' receipts with these keys (issuer
	// receiptIssuer); nil: none.
	receipts []signing.Key
	// onElicit, if set, is every client's elicitation handler.
	onElicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	// wrapStore, if set, wraps each instance's store (faults).
	wrapStore func(elicitation.Store) elicitation.Store
}

func newWorld(t testing.TB, o worldOptions) *world {
	t.Helper()
	k, err := sealerpkg.ParseKeyring("k0:" + pagetoken.GenerateSecret())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, stateless: o.stateless, maxWait: o.maxWait, waitShare: o.waitShare, watchShare: o.watchShare, keyless: o.keyless, hostForm: o.hostForm, app: o.app, receipts: o.receipts, onElicit: o.onElicit, wrapStore: o.wrapStore, dbPath: filepath.Join(t.TempDir(), "store.db"), sealer: k, created: map[string]string{}, clock: testclock.New(time.Now().UTC())}
	if w.maxWait == 0 {
		w.maxWait = 5 * time.Second
	}
	w.start(max(o.instances, 1))
	t.Cleanup(w.stop)
	return w
}

func (w *world) start(n int) {
	w.t.Helper()
	for i := range n {
		st, err := boltstore.Open(w.dbPath)
		if err != nil {
			w.t.Fatal(err)
		}
		var inner elicitation.Store = st
		if w.wrapStore != nil {
			inner = w.wrapStore(st)
		}
		svc := elicitation.NewService(elicitation.Config{Store: inner, MaxWait: w.maxWait, Now: w.clock.Now})
		if i == 0 {
			w.svc = svc
		}
		srv := mcptools.New(mcptools.Options{
			Service:   svc,
			Stateless: w.stateless,
			ReviewURL: func(r *http.Request, id, key string) string { return compose.ReviewURL("", r, id, key) },
			OnCreated: func(_ context.Context, id, u string) {
				w.mu.Lock()
				w.created[id] = u
				w.mu.Unlock()
			},
			Push: true, HostForm: w.hostForm, App: w.app, Sealer: w.sealer,
			WaitsPerPrincipal:   w.waitShare,
			WatchesPerPrincipal: w.watchShare,
			Name:                "elicitation-test", Version: "test",
			Receipts: w.receiptsOf(),
		})
		h := auth.RequireBearerToken(func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
			if p, ok := tokens[tok]; ok {
				return &auth.TokenInfo{UserID: p, Expiration: time.Now().Add(time.Hour)}, nil
			}
			return nil, auth.ErrInvalidToken
		}, nil)(srv.Handler())
		if w.keyless {
			h = fromAddr(srv.Handler())
		}
		ts := httptest.NewServer(h)
		w.servers = append(w.servers, ts)
		w.closers = append(w.closers, ts.Close, func() { _ = st.Close() })
	}
}

// clientAddrs are the addresses a keyless world's requests come from, by
// their bearer token (unknown tokens keep the connection's).
var clientAddrs = map[string]string{"tok-alice": "192.0.2.1:40000", "tok-bob": "192.0.2.2:40000"}

// fromAddr serves each request as coming from its token's address
// (clientAddrs): two machines, over one loopback.
func fromAddr(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if a, ok := clientAddrs[tok]; ok {
			r.RemoteAddr = a
		}
		r.Header.Del("Authorization")
		h.ServeHTTP(rw, r)
	})
}

// receiptIssuer is the iss of a world's receipts.
const receiptIssuer = "https://deployment.example"

func (w *world) receiptsOf() func(*http.Request, attest.Outcome) (string, error) {
	if w.receipts == nil {
		return nil
	}
	is := attest.Issuer{Keys: w.receipts, Now: w.clock.Now}
	return func(_ *http.Request, o attest.Outcome) (string, error) { return is.Issue(receiptIssuer, o) }
}

func (w *world) stop() {
	for _, c := range w.closers {
		c()
	}
	w.closers, w.servers = nil, nil
}

// restart stops every process and starts n fresh ones on the same store
// file: nothing survives but what the store holds.
func (w *world) restart(n int) {
	w.t.Helper()
	w.stop()
	w.start(n)
}

// decide answers a request as a reviewer on the review page would.
func (w *world) decide(id string, sub elicitation.Submission) {
	w.t.Helper()
	w.mu.Lock()
	u := w.created[id]
	w.mu.Unlock()
	pu, err := url.Parse(u)
	if err != nil || u == "" {
		w.t.Fatalf("no review URL for %s", id)
	}
	_, key := path.Split(pu.Path)
	if sub.ID == "" {
		sub.ID = "sub-" + id
	}
	if _, err := w.svc.Submit(context.Background(), id, key, sub); err != nil {
		w.t.Fatalf("decide %s: %v", id, err)
	}
}

// audited counts the entries of action in id's audit trail (alice's
// request).
func (w *world) audited(id string, action elicitation.Action) int {
	w.t.Helper()
	tr, err := w.svc.Audit(context.Background(), "alice", id)
	if err != nil {
		w.t.Fatal(err)
	}
	n := 0
	for _, e := range tr.Entries {
		if e.Action == action {
			n++
		}
	}
	return n
}

// client is a tasktest.Client (the go-sdk client that sends the tasks
// methods and params.task) whose requests go to the world's servers in
// turn, or all to one (route).
type client struct {
	*tasktest.Client
	t testing.TB
}

// route sends each request to the next of the world's servers, or with
// pin >= 0 always to that one.
type route struct {
	w   *world
	pin int
}

func (rt route) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(rt.w.next.Add(1) % uint64(len(rt.w.servers)))
	if rt.pin >= 0 {
		i = rt.pin
	}
	u, _ := url.Parse(rt.w.servers[i].URL)
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = u.Host, u.Host
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a session (or, on 2026-07-28, a sessionless client) for
// token; pin >= 0 sends every request to that server.
func (w *world) connect(token, version string, pin int, caps *mcp.ClientCapabilities) *client {
	w.t.Helper()
	c := tasktest.Connect(w.t, tasktest.Options{
		URL: w.servers[0].URL + "/mcp", Header: http.Header{"Authorization": {"Bearer " + token}},
		Version: version, Caps: caps, Elicit: w.onElicit, Transport: route{w: w, pin: pin},
	})
	return &client{Client: c, t: w.t}
}
