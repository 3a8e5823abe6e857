package proxy

import (
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// WrapTransport returns t with the stdio fast path for complete tool calls
// when t is an *mcp.IOTransport (stdio, or any newline-delimited stream
// with one peer); any other transport is returned as it is. The fast path
// forwards only the calls the planner forwards untouched; it moves their
// bytes below the SDK (stdio.go).
func (p *Proxy) WrapTransport(t mcp.Transport) mcp.Transport {
	return wrapFast(t, fastForwarder{p}, &p.fastCalls)
}

// fastForwarder is the proxy as the fast path sees it.
type fastForwarder struct{ p *Proxy }

// Untouched asks the planner. The fast path does not know the client's
// capabilities, and needs not: a Forward plan never depends on them.
func (f fastForwarder) Untouched(name string, args json.RawMessage) bool {
	t, known := f.p.tools.get(name)
	if !known {
		return false
	}
	pl := f.p.planner.Plan(&plan.Call{Name: name, Tool: t, Args: plan.ParseArgs(args), Raw: args})
	return pl.Action == plan.Forward && pl.Args == nil
}

func (f fastForwarder) RawCall(method string, params []byte, done func(*jsonrpc.Response, error)) (func(string), error) {
	return f.p.up.RawCall(method, params, done)
}

// Result is the SDK path's shaping of a raw tools/call result.
func (f fastForwarder) Result(raw json.RawMessage, perRequest bool) (json.RawMessage, error) {
	if !perRequest {
		return raw, nil
	}
	// What the SDK adds for a 2026-07-28 request: the result type and the
	// server's identity.
	rr := &rawResult{raw: raw, addResultType: true}
	rr.Meta = mcp.Meta{mcp.MetaKeyServerInfo: f.p.impl}
	return rr.MarshalJSON()
}

func (f fastForwarder) Logger() *slog.Logger { return f.p.logger }
