package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bareHandler is the anchor for CPU per call: a go-sdk server with one
// tool, echo, that returns its message, behind the SDK's own streamable
// HTTP handler with the options mcptools uses for the same mode
// (stateless: no session, JSON responses), on the same http.Server as
// ours. What ours costs beyond it is our handler, the store and our wiring.
// With resumable, its sessions keep an event store, as ours do, so that
// both pay for resumable streams (a priming event on every POST's stream,
// every event kept); without, it is the SDK's default.
//
// With gate non-nil it also has the anchor of a waiting call (the waiters
// run, waitersbench.go): a tool "wait" that blocks until gate releases its
// key (or the client goes away), then returns "released".
func bareHandler(stateless, resumable bool, gate *releaseGate) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare-go-sdk", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Returns its message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil
	})
	if gate != nil {
		srv.AddTool(&mcp.Tool{
			Name:        "wait",
			Description: "Waits until its key is released.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if err := gate.wait(ctx, in.Key); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
	}
	opts := &mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: stateless}
	if resumable {
		opts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
}

// plainHandler is the anchor below the SDK: plain net/http, each POST
// blocking until gate releases the key in its query (?key=), then a small
// JSON body.
func plainHandler(gate *releaseGate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := gate.wait(r.Context(), r.URL.Query().Get("key")); err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"released":true}` + "\n"))
	})
}

// releaseGate holds the anchors' waiting calls, one channel a key, until
// a POST /release?key= (ServeHTTP) releases the key.
type releaseGate struct {
	mu   sync.Mutex
	keys map[string]chan struct{}
}

func (g *releaseGate) ch(key string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[string]chan struct{}{}
	}
	c, ok := g.keys[key]
	if !ok {
		c = make(chan struct{})
		g.keys[key] = c
	}
	return c
}

func (g *releaseGate) wait(ctx context.Context, key string) error {
	select {
	case <-g.ch(key):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *releaseGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := g.ch(r.URL.Query().Get("key"))
	g.mu.Lock()
	select {
	case <-c:
	default:
		close(c)
	}
	g.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
