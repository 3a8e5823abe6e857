// Package gate is the proxy's human gate (docs/gate.md): before a call is
// forwarded it may need a human to approve it (confirm_if,
// policies.confirm_destructive), to pick what an ambiguous argument means
// (ambiguous_if, with an upstream tool as the candidate source), or, when the
// host cannot show a form, to fill the missing fields on the elicitation
// service's review page (fallback_on_unsupported: review_page). The host's
// own elicitation is used where it can show it; the review page otherwise.
//
// An approval binds to the digest of the exact arguments it was asked for
// and is used once. A call whose review is still open returns
// elicitation_pending with the review URL; the agent's retry with the same
// arguments picks the answer up. Every decision is logged with the tool name
// and the argument digest, never argument values.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// Caller calls an upstream tool (for candidate sources).
type Caller func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

// Host is the downstream client's own form elicitation; nil when the host
// cannot show a form.
type Host interface {
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// Options configures a Gate.
type Options struct {
	Config *config.Config
	// Service is the elicitation service; nil when none is configured
	// (then only the host's own elicitation can ask).
	Service Service
	// Matcher flags the sensitive values masked in what the reviewer
	// sees; nil masks nothing.
	Matcher *plan.Matcher
	// Upstream calls candidate sources.
	Upstream Caller
	Logger   *slog.Logger
	Now      func() time.Time
	// Sealer signs the gate's multi round-trip state; nil means a key
	// random to this process.
	Sealer *plan.Sealer
}

// Gate decides, per call, whether a human must step in, and asks them.
type Gate struct {
	cfg      *config.Config
	svc      Service
	matcher  *plan.Matcher
	upstream Caller
	log      *slog.Logger
	now      func() time.Time
	wait     time.Duration
	ttl      int
	// reviewers are named on every review request (elicitation_service.reviewers).
	reviewers []string
	pending   pendingTable
	waits     *ratelimit.Slots
	sealer    *plan.Sealer
	uses      *stateUses
	// upstreamURL is the upstream's URL (empty for a command), which a
	// confirmation's receipt names.
	upstreamURL string
	// parseTool reads a tool's listing (ParseTool; a fake in tests).
	parseTool func(json.RawMessage) (Tool, error)
}

// New returns a Gate for opts.
func New(opts Options) *Gate {
	g := &Gate{cfg: opts.Config, svc: opts.Service, matcher: opts.Matcher, upstream: opts.Upstream, log: opts.Logger, now: opts.Now, sealer: opts.Sealer, uses: newStateUses(), waits: newWaitSlots(), upstreamURL: opts.Config.Upstream.URL, parseTool: ParseTool}
	if g.sealer == nil {
		g.sealer = plan.NewRandomSealer()
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.wait = time.Duration(config.DefaultWaitSeconds) * time.Second
	g.ttl = config.DefaultTimeoutSeconds
	if s := opts.Config.ElicitationService; s != nil {
		g.wait = time.Duration(s.WaitSeconds) * time.Second
		g.ttl = s.TimeoutSeconds
		g.reviewers = s.Reviewers
	}
	return g
}

// Active reports whether the configuration asks the gate to look at the
// tool's calls at all (confirm_if, ambiguous_if or the destructive policy).
// With none of the gate's keys set it is false for every tool, and the
// proxy behaves as the original.
func (g *Gate) Active(tool string) bool {
	if g == nil {
		return false
	}
	if g.cfg.Policies.ConfirmDestructive.Enabled {
		return true
	}
	tc := g.cfg.Tools[tool]
	return tc.ConfirmIf.Active() || tc.AmbiguousIf.Active()
}

// ReviewPageFallback reports whether a host without form elicitation gets
// the review page for missing fields.
func (g *Gate) ReviewPageFallback() bool {
	return g != nil && g.svc != nil && g.cfg.Elicitation.FallbackOnUnsupported == config.FallbackReviewPage
}

// Call is one tool call as the gate sees it: complete arguments (the
// required-field checks have passed).
type Call struct {
	Tool Tool
	Args json.RawMessage
	// Host is the client's own form elicitation, nil if it has none.
	Host Host
}

// Decision is what the gate decided: forward Args, or return Result.
// Receipt, when a reviewer approved the call on the review page, is the
// service's signed receipt of that approval, naming the tool and the
// digest of Args: it goes upstream in the call's _meta (receipt.MetaKey).
type Decision struct {
	Args    json.RawMessage
	Result  *mcp.CallToolResult
	Receipt string
}

func forward(args json.RawMessage) (Decision, error) { return Decision{Args: args}, nil }

func refuse(p *Payload) (Decision, error) { return Decision{Result: p.Result()}, nil }

// Check runs the gate on a complete call: an ambiguous argument is resolved
// first (the pick merged into the arguments), then the call is confirmed
// if a rule asks for it, with the arguments that will be forwarded.
func (g *Gate) Check(ctx context.Context, c Call) (Decision, error) {
	return g.check(ctx, c, false)
}

// check is Check; approved skips the confirmation (the call's review-page
// form was its approval).
func (g *Gate) check(ctx context.Context, c Call, approved bool) (Decision, error) {
	if !g.Active(c.Tool.Name) {
		return forward(c.Args)
	}
	obj, err := object(c.Args)
	if err == nil {
		err = ValidText(c.Args)
	}
	if err != nil {
		// Not an object, or not text: no one could review what would be
		// forwarded (the planner's hook refuses these before they get
		// here; Check refuses them too).
		o := unreviewable(&plan.Call{Name: c.Tool.Name, Args: plan.ParseArgs(c.Args), Raw: c.Args})
		if o == nil {
			return Decision{}, err
		}
		return Decision{Result: o.Result()}, nil
	}
	tc := g.cfg.Tools[c.Tool.Name]
	if a := tc.AmbiguousIf; ambiguous(a, obj) {
		d, err := g.resolveAmbiguity(ctx, c, a, obj)
		if err != nil || d.Result != nil {
			return d, err
		}
		c.Args = d.Args
		if obj, err = object(c.Args); err != nil {
			return Decision{}, err
		}
	}
	if why := needsConfirmation(tc.ConfirmIf, g.cfg.Policies.ConfirmDestructive.Enabled, c.Tool, obj); why != "" {
		if approved {
			digest, _ := Digest(c.Args)
			g.decide("confirm", c.Tool.Name, digest, "approved", "review_page_form", "")
			return forward(c.Args)
		}
		return g.confirm(ctx, c, tc.ConfirmIf, obj, why)
	}
	return forward(c.Args)
}

// view is what the reviewer sees of a call: the tool, its description, the
// exact arguments with sensitive values masked, and the digest the answer
// binds to. It is the review request's context, so the service's audit
// trail of that request names the tool and the digest.
//
// Its tool is a receipt.Call's, which a confirmation's view completes (the
// RFC 8785 digest of the unmasked arguments that will be forwarded, the
// upstream's URL), so that the receipt of its approval names exactly the
// call the upstream receives.
type view struct {
	receipt.Call
	Title           string         `json:"title,omitempty"`
	Description     string         `json:"description,omitempty"`
	Arguments       map[string]any `json:"arguments"`
	ArgumentsDigest string         `json:"argumentsDigest"`
	Why             string         `json:"why,omitempty"`
	Missing         []string       `json:"missing,omitempty"`
}

func (g *Gate) view(t Tool, obj map[string]any, digest, why string) view {
	return view{Call: receipt.Call{Tool: t.Name}, Title: t.Title, Description: t.Description, Arguments: Mask(obj, t.Properties, g.matcher), ArgumentsDigest: digest, Why: why}
}

// decide logs one gate decision: tool name and argument digest, never
// argument values.
func (g *Gate) decide(kind, tool, digest, decision, channel, id string, attrs ...any) {
	args := []any{"gate", kind, "tool", tool, "digest", digest, "decision", decision, "channel", channel}
	if id != "" {
		args = append(args, "elicitationId", id)
	}
	g.log.Info("gate decision", append(args, attrs...)...)
}

// confirm asks a human to approve the call.
func (g *Gate) confirm(ctx context.Context, c Call, rule *config.Confirm, obj map[string]any, why string) (Decision, error) {
	name := c.Tool.Name
	digest, err := Digest(c.Args)
	if err != nil {
		return Decision{}, err
	}
	v := g.view(c.Tool, obj, digest, confirmWhy(why))
	// The receipt's digest is of what is forwarded: {} for no arguments.
	if v.ArgumentsSHA256, err = receipt.Digest(nonEmpty(c.Args)); err != nil {
		return Decision{}, fmt.Errorf("the arguments' receipt digest: %w", err)
	}
	v.Upstream = g.upstreamURL
	msg := fmt.Sprintf("Allow the tool %s to run with these arguments?", name)
	if rule != nil && rule.Message != "" {
		msg = rule.Message
	}
	if c.Host != nil {
		res, err := c.Host.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg + "\n\n" + hostText(v), RequestedSchema: commentSchema})
		var ir *errInputRequired
		switch {
		case err == nil:
			return g.confirmedByHost(name, digest, c.Args, res)
		case errors.As(err, &ir):
			g.decide("confirm", name, digest, "asked", "host", "")
			return Decision{}, err
		case ctx.Err() != nil:
			return Decision{}, ctx.Err()
		case g.svc == nil:
			g.decide("confirm", name, digest, "failed", "host", "", "errorType", fmt.Sprintf("%T", err))
			return refuse(&Payload{ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorRequired, Tool: name, Status: StatusFailed, Reason: ReasonReviewFailed,
				Message: fmt.Sprintf("The tool %s was not called: it needs a human's approval and asking through the client failed. Call it again to ask again.", name)}})
		}
		g.log.Warn("the client's elicitation failed; asking on the review page instead", "tool", name, "errorType", fmt.Sprintf("%T", err))
	}
	if g.svc == nil {
		g.decide("confirm", name, digest, "unavailable", "none", "")
		return refuse(&Payload{ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorRequired, Tool: name, Status: StatusNeeds, Reason: ReasonConfirmationRequired,
			Message: fmt.Sprintf("The tool %s was not called: it needs a human's approval, the client cannot show a form and the proxy has no elicitation_service configured.", name)}})
	}
	out, ticket, err := g.review(ctx, "confirm", name, digest, func(ctx context.Context) (Ticket, error) {
		return g.svc.Approval(ctx, ApprovalRequest{Message: msg, Context: v, TimeoutSeconds: g.ttl, Reviewers: g.reviewers})
	})
	if err != nil {
		return g.reviewFailed("confirm", name, digest, nil, err)
	}
	if out == nil {
		g.decide("confirm", name, digest, "pending", "review_page", ticket.ID)
		p := pendingPayload(name, nil, ticket, "it needs a human's approval, asked")
		p.ArgumentsDigest = digest
		return refuse(p)
	}
	if out.Decision != "submitted" {
		g.decide("confirm", name, digest, "declined", "review_page", ticket.ID)
		return refuse(&Payload{Outcome: plan.Outcome{Error: ErrorBlocked, Tool: name, Status: StatusReject, Reason: ReasonConfirmationDeclined,
			Message: declinedMessage(name, out.Comment)},
			ElicitationID: ticket.ID, Comment: out.Comment, ArgumentsDigest: digest})
	}
	g.decide("confirm", name, digest, "approved", "review_page", ticket.ID)
	return Decision{Args: c.Args, Receipt: out.Receipt}, nil
}

// tooManyMessage tells the model why a review past a bound was not asked
// for, and what to do.
func tooManyMessage(tool string, tm *tooManyReviews) string {
	if tm.own {
		return fmt.Sprintf("The tool %s was not called: it needs a human's review, and this client already has %d reviews asked on the review page and not picked up, "+
			"the most the proxy keeps for one client. Have the user answer them and call those tools again to pick the answers up (or wait until they expire), then call this one again.", tool, tm.limit)
	}
	return fmt.Sprintf("The tool %s was not called: it needs a human's review, and the proxy already keeps %d reviews open for all its clients, "+
		"the most it keeps. Call it again later.", tool, tm.limit)
}

func confirmWhy(why string) string {
	switch {
	case why == "always":
		return "this tool always needs approval"
	case why == "destructive":
		return "the tool's annotations say it may change or delete data"
	case strings.HasPrefix(why, "argument "):
		return "the argument " + strings.TrimPrefix(why, "argument ") + " meets a condition that needs approval"
	}
	return why
}

// declinedMessage tells the model a call was declined, with the
// reviewer's comment as its own sentence: it ends with a full stop (or
// the comment's own closing punctuation), so that the advice after it is
// not read as part of it. Like every message of the proxy's results it is
// the port's own text; the payload's other fields are the original's.
func declinedMessage(tool string, comment *string) string {
	m := fmt.Sprintf("The tool %s was not called: the reviewer declined it.", tool)
	if comment != nil {
		if c := strings.TrimSpace(*comment); c != "" {
			m += " Their comment: " + c
			if !strings.ContainsRune(".!?", rune(c[len(c)-1])) {
				m += "."
			}
		}
	}
	return m + " Do not retry it unchanged; ask the user how to proceed."
}

// commentSchema is the host form of a confirmation: accept approves,
// decline refuses, with an optional comment.
var commentSchema = json.RawMessage(`{"type":"object","properties":{"comment":{"type":"string","title":"Comment (optional)"}}}`)

func hostText(v view) string {
	b, _ := json.MarshalIndent(v.Arguments, "", "  ")
	var s strings.Builder
	if v.Description != "" {
		fmt.Fprintf(&s, "%s: %s\n", v.Tool, v.Description)
	}
	if v.Why != "" {
		fmt.Fprintf(&s, "Why: %s\n", v.Why)
	}
	fmt.Fprintf(&s, "Arguments:\n%s", b)
	return s.String()
}

func (g *Gate) confirmedByHost(name, digest string, args json.RawMessage, res *mcp.ElicitResult) (Decision, error) {
	switch res.Action {
	case "accept":
		g.decide("confirm", name, digest, "approved", "host", "")
		return forward(args)
	case "decline":
		g.decide("confirm", name, digest, "declined", "host", "")
		var comment *string
		if s, ok := res.Content["comment"].(string); ok && s != "" {
			comment = &s
		}
		return refuse(&Payload{Comment: comment, ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorBlocked, Tool: name, Status: StatusReject, Reason: ReasonConfirmationDeclined,
			Message: declinedMessage(name, comment)}})
	default:
		g.decide("confirm", name, digest, "cancelled", "host", "")
		return refuse(&Payload{ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorRequired, Tool: name, Status: StatusCancelled, Reason: ReasonConfirmationCancelled,
			Message: fmt.Sprintf("The tool %s was not called: the user dismissed the approval without answering. Call it again to ask again.", name)}})
	}
}

func (g *Gate) reviewFailed(kind, name, digest string, fields []string, err error) (Decision, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Decision{}, err
	}
	if tm := (*tooManyReviews)(nil); errors.As(err, &tm) {
		g.decide(kind, name, digest, "refused", "review_page", "", "err", err.Error())
		return refuse(&Payload{ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorRequired, Tool: name, Status: StatusFailed, Reason: ReasonTooManyReviews, MissingOrAmbiguous: fields,
			Message: tooManyMessage(name, tm)}})
	}
	g.decide(kind, name, digest, "failed", "review_page", "", "err", err.Error())
	return refuse(&Payload{ArgumentsDigest: digest, Outcome: plan.Outcome{Error: ErrorRequired, Tool: name, Status: StatusFailed, Reason: ReasonReviewFailed, MissingOrAmbiguous: fields,
		Message: fmt.Sprintf("The tool %s was not called: asking a human on the review page failed (the elicitation service could not be reached or refused the request). Call it again later.", name)}})
}

type clientKey struct{}

// withClient is ctx naming the client its call comes from (the proxy's
// plan.Client: its principal and ID).
func withClient(ctx context.Context, c plan.Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// clientFrom is the client ctx names (withClient); the zero Client, the
// one client of stdio, when none.
func clientFrom(ctx context.Context) plan.Client {
	c, _ := ctx.Value(clientKey{}).(plan.Client)
	return c
}

// review asks on the review page, or picks up the review the same client
// already asked for the same (kind, tool, digest): it waits within the
// gate's bound and returns the decided outcome, or nil and the ticket
// while the review is open. A decided review is claimed by exactly one
// call.
func (g *Gate) review(ctx context.Context, kind, tool, digest string, create func(context.Context) (Ticket, error)) (*Outcome, Ticket, error) {
	// Each client's reviews are its own: another client making the same
	// call is asked anew, and cannot take this one's answer.
	client := clientFrom(ctx)
	key := kind + "\x00" + tool + "\x00" + digest + "\x00" + client.ID
	// The service's audit trail of the request names what it is for.
	ctx = withNote(ctx, "gate="+kind+" tool="+tool+" digest="+digest)
	for attempt := 0; attempt < 3; attempt++ {
		e, ok := g.pending.get(key, g.now())
		if !ok {
			if err := g.pending.reserve(client.Principal, g.now()); err != nil {
				return nil, Ticket{}, err
			}
			t, err := create(ctx)
			if err != nil {
				g.pending.release(client.Principal)
				return nil, Ticket{}, err
			}
			exp, _ := time.Parse(time.RFC3339Nano, t.ExpiresAt)
			e = &pendingEntry{ticket: t, expires: exp, principal: client.Principal}
			g.pending.put(key, e)
		}
		release, ok := g.waits.Hold(client.Principal)
		if !ok {
			// The client (or all clients) already waits as much as the
			// gate lets it at once: the review stays open, and the call
			// says so without waiting.
			return nil, e.ticket, nil
		}
		status, err := g.await(ctx, e.ticket.ID)
		release()
		switch {
		case errors.Is(err, ErrGone):
			g.pending.claim(key, e)
			continue
		case err != nil:
			return nil, e.ticket, err
		}
		switch status {
		case "pending":
			return nil, e.ticket, nil
		case "submitted", "declined", "consumed":
		default: // expired, canceled: ask again
			g.pending.claim(key, e)
			continue
		}
		if !g.pending.claim(key, e) {
			// Another call with the same arguments took this answer.
			continue
		}
		out, err := g.svc.Result(ctx, e.ticket.ID)
		if err != nil {
			return nil, e.ticket, err
		}
		if d := contextDigest(out.Context); d != "" && d != digest {
			return nil, e.ticket, fmt.Errorf("the review %s was asked for other arguments", e.ticket.ID)
		}
		return &out, e.ticket, nil
	}
	return nil, Ticket{}, errors.New("the review request kept disappearing")
}

// await waits for the review within the gate's bound, leaving a margin
// before the caller's own deadline; the service's own bound may be
// shorter, so it asks again until the gate's has elapsed.
func (g *Gate) await(ctx context.Context, id string) (string, error) {
	end := g.now().Add(g.wait)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-2*time.Second).Before(end) {
		end = dl.Add(-2 * time.Second)
	}
	for {
		left := end.Sub(g.now())
		if left < 10*time.Millisecond {
			left = 10 * time.Millisecond
		}
		status, err := g.svc.Await(ctx, id, left)
		if err != nil || status != "pending" || !g.now().Before(end) {
			return status, err
		}
	}
}

func contextDigest(ctx json.RawMessage) string {
	var v struct {
		ArgumentsDigest string `json:"argumentsDigest"`
	}
	_ = json.Unmarshal(ctx, &v)
	return v.ArgumentsDigest
}

// merge sets key in the raw arguments, keeping every other byte.
func merge(args json.RawMessage, key string, value any) (json.RawMessage, error) {
	obj, err := plan.ParseObject(nonEmpty(args))
	if err != nil {
		return nil, err
	}
	b, err := plan.Marshal(value)
	if err != nil {
		return nil, err
	}
	obj.Set(key, b)
	return obj.MarshalJSON()
}

func nonEmpty(args json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(args))
	if s == "" || s == "null" {
		return json.RawMessage(`{}`)
	}
	return args
}
