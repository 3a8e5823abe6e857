package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// OpenOptions are what Open needs beyond the configuration.
type OpenOptions struct {
	// APIKey is the bearer key for elicitation_service.url (the proxy's
	// main reads it from the variable api_key_env names).
	APIKey string
	Logger *slog.Logger
	// Version names the proxy to the service.
	Version string
	// Upstream calls candidate sources.
	Upstream Caller
	// Sealer signs the gate's multi round-trip state (the proxy's, from
	// MCP_ELICITATION_PROXY_STATE_KEY); nil means a key random to this
	// process.
	Sealer *plan.Sealer
	// SignInSecret is the embedded service's OpenID client secret (the
	// proxy's main reads it from the variable sign_in.client_secret_env
	// names).
	SignInSecret string
}

type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Open builds the gate of a configuration: its elicitation service (a
// client of elicitation_service.url, or the embedded service, started
// here) and its rules. It returns nil and a no-op closer when the
// configuration sets none of the gate's keys, so that the proxy is then
// exactly the original.
func Open(ctx context.Context, cfg *config.Config, o OpenOptions) (*Gate, io.Closer, error) {
	if !configured(cfg) {
		return nil, closers{}, nil
	}
	var cs closers
	var svc Service
	impl := &mcp.Implementation{Name: cfg.Proxy.Name, Version: o.Version}
	if s := cfg.ElicitationService; s != nil {
		if s.Embedded != nil {
			emb, err := StartEmbedded(ctx, EmbeddedOptions{Config: s.Embedded, Logger: o.Logger, Version: o.Version, SignInSecret: o.SignInSecret})
			if err != nil {
				return nil, nil, err
			}
			cs = append(cs, emb)
			svc = emb.Service(elicitation.Client{Name: impl.Name, Version: impl.Version})
			if o.Logger != nil {
				o.Logger.Info("embedded elicitation service: review pages", "url", emb.ReviewBase)
			}
		} else {
			m := NewMCPService(s.URL, o.APIKey, impl)
			cs = append(cs, m)
			svc = m
		}
		warnWithoutSignIn(o.Logger, s)
	}
	g := New(Options{Config: cfg, Service: svc, Matcher: plan.NewMatcher(cfg.Policies.SensitiveRequired), Upstream: o.Upstream, Logger: o.Logger, Sealer: o.Sealer})
	return g, cs, nil
}

// configured reports whether any of the gate's keys is set.
func configured(cfg *config.Config) bool {
	if cfg.ElicitationService != nil || cfg.Policies.ConfirmDestructive.Enabled || cfg.Elicitation.FallbackOnUnsupported == config.FallbackReviewPage {
		return true
	}
	for _, t := range cfg.Tools {
		if t.ConfirmIf.Active() || t.AmbiguousIf.Active() {
			return true
		}
	}
	return false
}

// Install adds the gate to the proxy's planner: a call the rules would
// forward is held for the gate's checks when a rule of the gate names its
// tool; a call the rules block because the client cannot show a form goes
// to the review page when fallback_on_unsupported is review_page. Every
// other plan is left as the rules made it.
func (g *Gate) Install(pl *plan.Planner) {
	if g == nil {
		return // no gate keys set: the planner stays the original's
	}
	pl.Use(func(c *plan.Call, p plan.Plan) plan.Plan {
		var h plan.Holder
		switch {
		case p.Action == plan.Forward && g.holds(c):
			h = &checkHold{g: g, c: c, p: p}
		case p.Action == plan.Block && p.Outcome != nil && p.Outcome.Reason == plan.ReasonUnsupported && g.ReviewPageFallback():
			h = &fillHold{g: g, pl: pl, c: c, p: p}
		default:
			return p
		}
		if o := unreviewable(c); o != nil {
			return plan.Plan{Action: plan.Block, Outcome: o, Missing: p.Missing}
		}
		return plan.Plan{Action: plan.Hold, Hold: h, Missing: p.Missing}
	})
}

// unreviewable is the refusal of a call a rule of the gate could hold but
// no human could review as it would be forwarded: arguments that are not
// a JSON object (the rules cannot read them, the reviewer would approve
// something the conditions never saw), or strings that are not text (the
// digest and the page would show another string than the upstream
// receives). Such a call is never forwarded. Nil for every other call.
func unreviewable(c *plan.Call) *plan.Outcome {
	refuse := func(reason, why string) *plan.Outcome {
		return &plan.Outcome{Error: plan.ErrorToolCallBlocked, Tool: c.Name, Status: plan.StatusReject, Reason: reason,
			Message: fmt.Sprintf("The tool %s was not called: %s", c.Name, why)}
	}
	if c.Args == nil {
		return refuse(ReasonArgumentsNotObject, "its arguments are not a JSON object, so the human gate cannot check or show them. "+
			"Tool arguments are an object of named values: call the tool again with an object.")
	}
	if err := ValidText(c.Raw); err != nil {
		return refuse(ReasonInvalidText, "its arguments hold a string that is not valid text (a UTF-16 surrogate escape such as \\ud800 without its pair, or bytes that are not UTF-8), "+
			"so a reviewer could not be shown what the upstream would receive. Call the tool again with valid text.")
	}
	return nil
}

// holds reports whether a rule of the gate may stop the call: its tool's
// confirm_if or ambiguous_if, or the destructive policy for a tool whose
// annotations say it may destroy. Every other call keeps its Forward plan
// (and, on stdio, the fast path).
func (g *Gate) holds(c *plan.Call) bool {
	tc := g.cfg.Tools[c.Name]
	if tc.ConfirmIf.Active() || tc.AmbiguousIf.Active() {
		return true
	}
	return g.cfg.Policies.ConfirmDestructive.Enabled && g.toolOf(c).Destructive()
}

// toolOf is the gate's reading of the call's tool, read once per listing
// (plan.Tool.Read), not on every call; a listing the gate cannot read, or
// none, is a tool of that name and nothing else.
func (g *Gate) toolOf(c *plan.Call) Tool {
	if c.Tool != nil {
		read := c.Tool.Read(func(raw json.RawMessage) any {
			t, err := g.parseTool(raw)
			if err != nil {
				return nil
			}
			return t
		})
		if t, ok := read.(Tool); ok {
			return t
		}
	}
	return Tool{Name: c.Name}
}

// host is the client's own form elicitation: during the call for a client
// on a session, across retries for a 2026-07-28 client. A retry of the
// proxy's own missing-field form goes to the review page instead (its
// answer lives in the proxy's state, which the gate's would replace).
func (g *Gate) host(c *plan.Call, x plan.Executor) (Host, *retryHost) {
	switch {
	case !c.Client.Form:
		return nil, nil
	case !c.Client.MultiRoundTrip:
		return x, nil
	}
	req := x.Request()
	if _, held := req.Params.InputResponses[plan.HoldInputKey]; !held && (req.Params.RequestState != "" || len(req.Params.InputResponses) > 0) {
		return nil, nil
	}
	digest, err := Digest(req.Params.Arguments)
	if err != nil {
		return nil, nil
	}
	h, reused := newRetryHost(g.sealer, g.uses, g.now(), req, c.Name, digest)
	if reused {
		g.decide("state", c.Name, digest, "reused", "host", "")
	}
	return h, h
}

type approvedKey struct{}

// checkHold runs the gate's checks on a complete call.
type checkHold struct {
	g *Gate
	c *plan.Call
	p plan.Plan
}

func (h *checkHold) Run(ctx context.Context, x plan.Executor) (*mcp.CallToolResult, error) {
	args := h.p.Args
	if args == nil {
		args = x.Request().Params.Arguments
	}
	approved, _ := ctx.Value(approvedKey{}).(bool)
	ctx = withClient(ctx, h.c.Client)
	hst, retry := h.g.host(h.c, x)
	d, err := h.g.check(ctx, Call{Tool: h.g.toolOf(h.c), Args: args, Host: hst}, approved)
	if retry != nil {
		if res, ok, err := retry.inputRequired(h.g.sealer, h.g.uses, h.g.now(), err); ok {
			return res, err
		}
	}
	if err != nil {
		return nil, err
	}
	if d.Result != nil {
		return d.Result, nil
	}
	var meta mcp.Meta
	if d.Receipt != "" {
		meta = mcp.Meta{receipt.MetaKey: d.Receipt}
	}
	if h.p.Args == nil && bytes.Equal(d.Args, args) {
		return x.Forward(ctx, nil, meta) // untouched
	}
	return x.Forward(ctx, d.Args, meta)
}

// fillHold asks the review page for the missing fields of a call whose
// client cannot show a form, then lets the planner merge the answer.
type fillHold struct {
	g  *Gate
	pl *plan.Planner
	c  *plan.Call
	p  plan.Plan
}

func (h *fillHold) Run(ctx context.Context, x plan.Executor) (*mcp.CallToolResult, error) {
	form := h.pl.FormFor(h.c, h.p.Missing)
	schema, err := json.Marshal(form.Params.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("the form for the review page: %w", err)
	}
	ctx = withClient(ctx, h.c.Client)
	res, out, err := h.g.Fill(ctx, h.g.toolOf(h.c), x.Request().Params.Arguments, form.Params.Message, schema, h.p.Missing)
	if err != nil || out != nil {
		return out, err
	}
	next := h.pl.Answered(h.c, form, res)
	switch next.Action {
	case plan.Forward:
		return x.Forward(ctx, next.Args, nil)
	case plan.Block:
		return next.Outcome.Result(), nil
	case plan.Hold:
		// The reviewer who filled the form on the review page saw the
		// call and approved it with these values: a confirmation rule is
		// satisfied by that approval.
		return next.Hold.Run(context.WithValue(ctx, approvedKey{}, true), x)
	}
	return nil, fmt.Errorf("tools/call %s: unexpected plan %v after the review page's answer", h.c.Name, next.Action)
}
