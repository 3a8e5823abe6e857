package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

const (
	// defaultUpstreamTimeout bounds the proxy's own upstream requests
	// (tool list refreshes); forwarded calls follow the caller's context.
	defaultUpstreamTimeout = 30 * time.Second
	// stateTTL is how long a 2026-07-28 client has to answer a form.
	stateTTL = 30 * time.Minute
	// inputKey names the proxy's one input request in a multi round-trip
	// result.
	inputKey = "missing_required_fields"
)

// pendingState is what a multi round-trip result carries to the retry.
type pendingState struct {
	Tool   string   `json:"tool"`
	Args   string   `json:"args"` // hash of the original arguments
	Fields []string `json:"fields"`
}

// planCall is the planner's view of a downstream tools/call.
func (p *Proxy) planCall(name string, args json.RawMessage, caps *mcp.ClientCapabilities, protocol string) *plan.Call {
	t, _ := p.tools.get(name)
	return &plan.Call{
		Name: name,
		Tool: t,
		Args: plan.ParseArgs(args),
		Raw:  args,
		Client: plan.Client{
			Form:           supportsForm(caps),
			MultiRoundTrip: protocol >= protocolMultiRoundTrip,
		},
	}
}

// principalHeader carries the request's principal (mcptools.Principal)
// from the proxy's HTTP front (HTTPHandler), which sets it on every
// request, replacing any value a client sent, to its tools/call handler.
// It is never sent upstream.
const principalHeader = "X-Mcp-Elicitation-Proxy-Principal"

// clientOf is who a call comes from (plan.Client's Principal and ID): on
// stdio no one but the one client; on HTTP the principal HTTPHandler
// named and, for a client on a session (sessionless: false), the session.
func clientOf(req *mcp.CallToolRequest, sessionless bool) (principal, id string) {
	if req.Extra == nil || req.Extra.Header == nil {
		return "", ""
	}
	principal = req.Extra.Header.Get(principalHeader)
	if sessionless || req.Session == nil {
		return principal, principal
	}
	return principal, principal + " session " + req.Session.ID()
}

// callTool is the SDK path's tools/call handler for every upstream tool:
// it asks the planner and acts on the plan.
func (p *Proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c := p.planCall(req.Params.Name, req.Params.Arguments, req.ClientCapabilities(), req.ProtocolVersion())
	c.Client.Principal, c.Client.ID = clientOf(req, c.Client.MultiRoundTrip)
	if _, held := req.Params.InputResponses[plan.HoldInputKey]; !held && (req.Params.RequestState != "" || len(req.Params.InputResponses) > 0) {
		return p.resume(ctx, req, c)
	}
	// A retry answering a Holder's input request is planned again: the
	// Holder reads its answer from the request.
	return p.act(ctx, req, c, p.planner.Plan(c))
}

// act carries out a plan on the SDK path.
func (p *Proxy) act(ctx context.Context, req *mcp.CallToolRequest, c *plan.Call, pl plan.Plan) (*mcp.CallToolResult, error) {
	log := p.logger.With("tool", c.Name)
	if len(pl.Missing) > 0 {
		log = log.With("missing", pl.Missing)
	}
	switch pl.Action {
	case plan.Forward:
		if pl.Args != nil {
			log.Info("forwarding the call with the elicited fields")
		}
		return p.forward(ctx, req, pl.Args, nil)
	case plan.Block:
		log.Info("tool call not forwarded", "err", pl.Outcome.Error, "reason", pl.Outcome.Reason, "fields", pl.Outcome.MissingOrAmbiguous)
		return pl.Outcome.Result(), nil
	case plan.Hold:
		return pl.Hold.Run(ctx, executor{p: p, req: req})
	case plan.Elicit:
		if c.Client.MultiRoundTrip {
			state, err := p.sealer.Seal(pendingState{Tool: c.Name, Args: hashArgs(req.Params.Arguments), Fields: pl.Form.Names()}, stateTTL)
			if err != nil {
				return nil, err
			}
			log.Info("asking the client for missing required fields (multi round-trip)")
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: pl.Form.Params}, RequestState: state}, nil
		}
		log.Info("asking the client for missing required fields")
		res, err := req.Session.Elicit(ctx, pl.Form.Params)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The error text may quote what the user typed: keep it out
			// of the log, and hand it only to the caller.
			log.Warn("elicitation failed", "errorType", fmt.Sprintf("%T", err))
			return p.act(ctx, req, c, p.planner.Failed(c, err.Error()))
		}
		return p.act(ctx, req, c, p.planner.Answered(c, pl.Form, res))
	}
	return nil, fmt.Errorf("tools/call %s: unknown plan %v", c.Name, pl.Action)
}

// resume handles the retry of a 2026-07-28 client that answered the form.
func (p *Proxy) resume(ctx context.Context, req *mcp.CallToolRequest, c *plan.Call) (*mcp.CallToolResult, error) {
	var st pendingState
	err := p.sealer.Open(req.Params.RequestState, &st)
	switch {
	case err != nil:
	case st.Tool != c.Name:
		err = errors.New("request state belongs to another tool")
	case st.Args != hashArgs(req.Params.Arguments):
		err = errors.New("arguments changed since the form was requested")
	case c.Args == nil:
		err = errors.New("the arguments are not an object")
	}
	if err != nil {
		p.logger.Warn("refusing a multi round-trip retry", "tool", c.Name, "err", err)
		return p.act(ctx, req, c, p.planner.Failed(c, "the retry's request state is invalid or expired: "+err.Error()+"; call the tool again without inputResponses or requestState"))
	}
	res, ok := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	if !ok {
		return p.act(ctx, req, c, p.planner.Failed(c, "the retry carried no answer to the form"))
	}
	form := p.planner.FormFor(c, st.Fields)
	if res.Action == "accept" {
		// The SDK checks a session's answer against the form; a retry's
		// is checked here.
		if err := form.Fits(res.Content); err != nil {
			return p.act(ctx, req, c, p.planner.Failed(c, err.Error()))
		}
	}
	return p.act(ctx, req, c, p.planner.Answered(c, form, res))
}

// executor is what a gate's Holder may do with a call on the SDK path.
type executor struct {
	p   *Proxy
	req *mcp.CallToolRequest
}

func (x executor) Request() *mcp.CallToolRequest { return x.req }

func (x executor) Forward(ctx context.Context, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	return x.p.forward(ctx, x.req, args, meta)
}

func (x executor) Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return x.req.Session.Elicit(ctx, params)
}

// forward calls the upstream tool once with args (nil: the call's own) and
// meta added to its _meta, and passes its result on as the upstream sent
// it.
func (p *Proxy) forward(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error) {
	cs, err := p.up.Session()
	if err != nil {
		return nil, p.upstreamUnavailable(err)
	}
	if args == nil {
		args = req.Params.Arguments
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	params := &mcp.CallToolParams{
		Meta:      cleanMeta(req.Params.Meta),
		Name:      req.Params.Name,
		Arguments: args,
	}
	tok := req.Params.GetProgressToken()
	if params.Meta == nil && (len(meta) > 0 || tok != nil) {
		params.Meta = mcp.Meta{}
	}
	maps.Copy(params.Meta, meta)
	if tok != nil {
		upTok, done := p.progress.add(progressRoute{ctx: ctx, session: req.Session, token: tok})
		defer done()
		defer p.up.AwaitProgress(ctx, upTok)
		params.Meta["progressToken"] = upTok
	}
	ctx, sink := withSink(ctx)
	ctx = withCaller(ctx, req.Session)
	defer p.relay.track(ctx, req)()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, p.upstreamError(err)
	}
	rawHolderFrom(ctx).Set(sink.Result())
	return res, nil
}

// supportsForm reports whether the client accepts form elicitation. A bare
// "elicitation": {} (the 2025-06-18 form) means form mode.
func supportsForm(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

func hashArgs(args json.RawMessage) string {
	sum := sha256.Sum256([]byte(compact(args)))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
