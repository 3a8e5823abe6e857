// Command receipt-upstream is an MCP server that runs a tool only when the
// call carries an approval receipt for exactly that call: put it behind
// mcp-elicitation-proxy's human gate (docs/gate.md, "Checking the approval
// upstream"), and a call no human approved on the review page never runs,
// whoever sends it.
//
//	go run ./examples/receipt-upstream -listen 127.0.0.1:3002 -issuer http://127.0.0.1:8081
//
// The gate puts the receipt in the forwarded call's _meta, under
// receipt.MetaKey. This server checks it against the deployment's key set
// (fetched from the issuer's /.well-known/jwks.json, and again when a
// receipt names a key it does not know, after a rotation), this tool, the
// exact arguments it received and its own URL, and accepts each approval
// once (the receipt's txn, the elicitationId: the deployment may issue
// several receipts of one approval, the gate forwards one call with it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/signing"
	"github.com/mcp-elicitation/elicitation/receipt"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:3002", "the address to serve MCP on, at /mcp")
	issuer := flag.String("issuer", "", "the elicitation deployment's public URL: the receipts' iss (required)")
	self := flag.String("url", "", "this server's URL as the gate's upstream.url names it (default http://LISTEN/mcp)")
	flag.Parse()
	if *issuer == "" {
		log.Fatal("receipt-upstream: -issuer is required")
	}
	if *self == "" {
		*self = "http://" + *listen + "/mcp"
	}
	g := &guard{issuer: strings.TrimRight(*issuer, "/"), self: *self, used: map[string]time.Time{}}

	srv := mcp.NewServer(&mcp.Implementation{Name: "receipt-upstream", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "deploy",
		Description: "Deploys a version to an environment.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"},"version":{"type":"integer"}},"required":["env","version"]}`),
	}, g.require(deploy))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	log.Printf("receipt-upstream: serving %s, accepting receipts of %s", *self, g.issuer)
	log.Fatal(http.ListenAndServe(*listen, h))
}

// deploy is the tool itself: it runs only behind guard.require.
func deploy(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Env     string `json:"env"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return text(fmt.Sprintf("deployed version %d to %s", in.Version, in.Env), false), nil
}

// guard accepts a call whose receipt is valid for it, once.
type guard struct {
	issuer, self string

	mu   sync.Mutex
	keys jose.JSONWebKeySet
	used map[string]time.Time // approved elicitationId (txn) -> its receipt's expiry
}

// require runs next only for a call that carries a valid receipt; any
// other call is refused with the reason, and next never runs.
func (g *guard) require(next mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := g.check(ctx, req.Params); err != nil {
			return text("refused: "+err.Error(), true), nil
		}
		return next(ctx, req)
	}
}

func (g *guard) check(ctx context.Context, p *mcp.CallToolParamsRaw) error {
	token, _ := p.Meta[receipt.MetaKey].(string)
	if token == "" {
		return errors.New("no approval receipt in _meta")
	}
	args := p.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`) // what the gate approved for no arguments
	}
	expect := receipt.Expect{Issuer: g.issuer, Outcome: receipt.OutcomeApproved, Tool: p.Name, Arguments: args, Upstream: g.self}
	keys, err := g.keySet(ctx, false)
	if err != nil {
		return err
	}
	claims, err := receipt.Verify(token, keys, expect)
	if errors.Is(err, receipt.ErrUnknownKey) {
		// A key rotated since the last fetch: fetch the set again.
		if keys, err = g.keySet(ctx, true); err != nil {
			return err
		}
		claims, err = receipt.Verify(token, keys, expect)
	}
	if err != nil {
		return err
	}
	return g.once(claims)
}

// keySet is the deployment's key set, fetched on first use or when fresh.
func (g *guard) keySet(ctx context.Context, fresh bool) (jose.JSONWebKeySet, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.keys.Keys) == 0 || fresh {
		keys, err := receipt.FetchKeys(ctx, nil, g.issuer+signing.JWKSPath)
		if err != nil {
			return jose.JSONWebKeySet{}, err
		}
		g.keys = keys
	}
	return g.keys, nil
}

// once accepts each approval once, remembering it until its receipt expires.
func (g *guard) once(c receipt.Claims) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	for id, exp := range g.used {
		if now.After(exp) {
			delete(g.used, id)
		}
	}
	if _, seen := g.used[c.Txn]; seen {
		return errors.New("this approval was used already")
	}
	g.used[c.Txn] = time.Unix(c.Expiry, 0).Add(receipt.Leeway)
	return nil
}

func text(s string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}
}
