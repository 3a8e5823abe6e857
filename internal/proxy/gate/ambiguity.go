package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/internal/proxy/plan"
)

// candidate is one thing an ambiguous argument could mean.
type candidate struct {
	label string
	value any
}

// maxLabel bounds a candidate's label as the human sees it.
const maxLabel = 200

// resolveAmbiguity asks a human what the ambiguous argument means: one of
// the candidate source's candidates when one is configured and lists any,
// else a more specific value typed in a form.
func (g *Gate) resolveAmbiguity(ctx context.Context, c Call, a *config.Ambiguity, obj map[string]any) (Decision, error) {
	name := c.Tool.Name
	digest, err := Digest(c.Args)
	if err != nil {
		return Decision{}, err
	}
	if a.Candidates != nil {
		cands, err := g.candidates(ctx, a.Candidates, obj)
		if err != nil {
			g.log.Warn("the candidate source failed; asking for a more specific value instead", "tool", name, "source", a.Candidates.Tool, "err", err.Error())
		}
		if len(cands) > 0 {
			return g.pick(ctx, c, a, obj, digest, cands)
		}
	}
	return g.refine(ctx, c, a, obj, digest)
}

// candidates calls the source and maps its result to candidates.
func (g *Gate) candidates(ctx context.Context, src *config.Candidates, obj map[string]any) ([]candidate, error) {
	if g.upstream == nil {
		return nil, fmt.Errorf("no upstream to call")
	}
	args := map[string]any{}
	maps.Copy(args, src.Arguments)
	for to, from := range src.Pass {
		if v, ok := obj[from]; ok {
			args[to] = v
		}
	}
	raw, err := plan.Marshal(args)
	if err != nil {
		return nil, err
	}
	res, err := g.upstream(ctx, src.Tool, raw)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("the candidate source %s returned a tool error", src.Tool)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var root any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	items, ok := at(root, src.Items).([]any)
	if !ok {
		return nil, fmt.Errorf("the candidate source's result has no list at %s", src.Items)
	}
	var out []candidate
	seen := map[string]bool{}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		id := scalarText(m[src.ID])
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		label := scalarText(m[src.Label])
		if label == "" {
			label = id
		}
		if r := []rune(label); len(r) > maxLabel {
			label = string(r[:maxLabel-1]) + "…"
		}
		v, ok := m[src.Value]
		if !ok || v == nil {
			continue
		}
		out = append(out, candidate{label: label, value: v})
		if len(out) == src.Max {
			break
		}
	}
	return out, nil
}

// at follows a dot path (object keys and list indexes) from v.
func at(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

func ambiguityMessage(name string, a *config.Ambiguity, obj map[string]any, picking bool) string {
	if a.Message != "" {
		return a.Message
	}
	given, _ := obj[a.Field].(string)
	if picking {
		return fmt.Sprintf("The tool %s was asked for %q (%s), which is ambiguous. Which one is meant?", name, given, a.Field)
	}
	return fmt.Sprintf("The tool %s was asked for %q (%s), which is ambiguous. Give a more specific value (%s).", name, given, a.Field, ambiguityHint(a))
}

// pick asks a human to choose one candidate, on the host's form or the
// review page, and merges its value into the arguments.
func (g *Gate) pick(ctx context.Context, c Call, a *config.Ambiguity, obj map[string]any, digest string, cands []candidate) (Decision, error) {
	name := c.Tool.Name
	msg := ambiguityMessage(name, a, obj, true)
	target := a.Candidates.Argument
	// index is the candidate a choice names (1-based), or -1.
	index := func(choice string) int {
		if i, err := strconv.Atoi(choice); err == nil && i >= 1 && i <= len(cands) {
			return i - 1
		}
		return -1
	}
	chosen := func(i int, channel, id string) (Decision, error) {
		g.decide("select", name, digest, "picked", channel, id, "argument", target)
		args, err := merge(c.Args, target, cands[i].value)
		if err != nil {
			return Decision{}, err
		}
		return forward(args)
	}
	oneOf := make([]map[string]any, len(cands))
	opts := make([]map[string]any, len(cands))
	for i, cd := range cands {
		oneOf[i] = map[string]any{"const": strconv.Itoa(i + 1), "title": cd.label}
		opts[i] = map[string]any{"id": strconv.Itoa(i + 1), "label": cd.label}
	}
	schema, _ := plan.Marshal(map[string]any{"type": "object", "required": []string{"choice"}, "properties": map[string]any{
		"choice": map[string]any{"type": "string", "title": a.Field, "oneOf": oneOf}}})
	return g.askAmbiguity(ctx, c, a, digest, ambiguityAsk{
		kind: "select", msg: msg, schema: schema, none: "chose none of the candidates",
		asked: "an ambiguous argument needs a human's pick, asked",
		create: func(ctx context.Context) (Ticket, error) {
			return g.svc.Selection(ctx, SelectionRequest{Message: msg, Options: opts, TimeoutSeconds: g.ttl, Reviewers: g.reviewers})
		},
		onHost: func(content map[string]any) (Decision, error) {
			s, _ := content["choice"].(string)
			if i := index(s); i >= 0 {
				return chosen(i, "host", "")
			}
			return refuse(g.ambiguousPayload(name, a, "failed", ReasonReviewFailed, "the client's answer named no candidate"))
		},
		onPage: func(out *Outcome, ticket Ticket) (Decision, error) {
			if out.Decision == "submitted" && len(out.SelectedIDs) == 1 {
				if i := index(out.SelectedIDs[0]); i >= 0 {
					return chosen(i, "review_page", ticket.ID)
				}
			}
			g.decide("select", name, digest, "declined", "review_page", ticket.ID)
			p := g.ambiguousPayload(name, a, StatusReject, ReasonSelectionDeclined, "the reviewer chose none of the candidates")
			p.ElicitationID = ticket.ID
			return refuse(p)
		},
	})
}

// ambiguityAsk is what pick and refine ask a human, on the host's form or
// the review page (askAmbiguity).
type ambiguityAsk struct {
	kind, msg string
	schema    json.RawMessage // the host's form
	// none is what the human did who declined ("chose none of the
	// candidates"); asked what a pending payload says was asked.
	none, asked string
	// create asks on the review page.
	create func(context.Context) (Ticket, error)
	// onHost acts on the host's accepted form, onPage on the review
	// page's decided outcome.
	onHost func(content map[string]any) (Decision, error)
	onPage func(out *Outcome, ticket Ticket) (Decision, error)
}

// askAmbiguity asks about an ambiguous argument on the host's form, or on
// the review page when the host has none (or its form failed).
func (g *Gate) askAmbiguity(ctx context.Context, c Call, a *config.Ambiguity, digest string, ask ambiguityAsk) (Decision, error) {
	name := c.Tool.Name
	if c.Host != nil {
		res, err := c.Host.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: ask.msg, RequestedSchema: ask.schema})
		switch ir := (*errInputRequired)(nil); {
		case errors.As(err, &ir):
			return Decision{}, err
		case err == nil && res.Action == "accept":
			return ask.onHost(res.Content)
		case err == nil:
			g.decide(ask.kind, name, digest, res.Action, "host", "")
			return refuse(g.ambiguousPayload(name, a, StatusReject, ReasonSelectionDeclined, "the user "+ask.none))
		case ctx.Err() != nil:
			return Decision{}, ctx.Err()
		case g.svc == nil:
			return refuse(g.ambiguousPayload(name, a, StatusFailed, ReasonReviewFailed, "asking the user through the client failed"))
		}
	}
	if g.svc == nil {
		g.decide(ask.kind, name, digest, "unavailable", "none", "")
		return refuse(g.ambiguousPayload(name, a, StatusNeeds, ReasonAmbiguous, "the client cannot show a form and no elicitation_service is configured"))
	}
	out, ticket, err := g.review(ctx, ask.kind, name, digest, ask.create)
	if err != nil {
		return g.reviewFailed(ask.kind, name, digest, []string{a.Field}, err)
	}
	if out == nil {
		g.decide(ask.kind, name, digest, "pending", "review_page", ticket.ID)
		return refuse(pendingPayload(name, []string{a.Field}, ticket, ask.asked))
	}
	return ask.onPage(out, ticket)
}

func (g *Gate) ambiguousPayload(name string, a *config.Ambiguity, status, reason, why string) *Payload {
	errName := ErrorRequired
	if status == StatusReject {
		errName = ErrorBlocked
	}
	return &Payload{Outcome: plan.Outcome{Error: errName, Tool: name, Status: status, Reason: reason, MissingOrAmbiguous: []string{a.Field},
		Message: fmt.Sprintf("The tool %s was not called: the argument %s is ambiguous and %s. Call it again with a more specific %s (%s).", name, a.Field, why, a.Field, ambiguityHint(a))}}
}

// refine asks a human for a more specific value of the ambiguous field.
func (g *Gate) refine(ctx context.Context, c Call, a *config.Ambiguity, obj map[string]any, digest string) (Decision, error) {
	name := c.Tool.Name
	msg := ambiguityMessage(name, a, obj, false)
	prop := map[string]any{"type": "string", "title": a.Field, "description": "A more specific value: " + ambiguityHint(a)}
	if a.QueryMinLength > 0 {
		prop["minLength"] = a.QueryMinLength
	}
	schema, _ := plan.Marshal(map[string]any{"type": "object", "required": []string{a.Field}, "properties": map[string]any{a.Field: prop}})
	apply := func(content map[string]any, channel, id string) (Decision, error) {
		v, _ := content[a.Field].(string)
		next := map[string]any{a.Field: v}
		if strings.TrimSpace(v) == "" || ambiguous(a, next) {
			g.decide("refine", name, digest, "still_ambiguous", channel, id)
			return refuse(g.ambiguousPayload(name, a, StatusNeeds, ReasonAmbiguous, "the value given is still ambiguous"))
		}
		g.decide("refine", name, digest, "refined", channel, id)
		args, err := merge(c.Args, a.Field, v)
		if err != nil {
			return Decision{}, err
		}
		return forward(args)
	}
	return g.askAmbiguity(ctx, c, a, digest, ambiguityAsk{
		kind: "refine", msg: msg, schema: schema, none: "gave no more specific value",
		asked: "an ambiguous argument needs a more specific value, asked",
		create: func(ctx context.Context) (Ticket, error) {
			v := g.view(c.Tool, obj, digest, "the argument "+a.Field+" is ambiguous")
			return g.svc.Approval(ctx, ApprovalRequest{Message: msg, Context: v, Schema: json.RawMessage(schema), TimeoutSeconds: g.ttl, Reviewers: g.reviewers})
		},
		onHost: func(content map[string]any) (Decision, error) { return apply(content, "host", "") },
		onPage: func(out *Outcome, ticket Ticket) (Decision, error) {
			if out.Decision != "submitted" {
				g.decide("refine", name, digest, "declined", "review_page", ticket.ID)
				return refuse(g.ambiguousPayload(name, a, StatusReject, ReasonSelectionDeclined, "the reviewer gave no more specific value"))
			}
			var content map[string]any
			_ = json.Unmarshal(out.FormSubmission, &content)
			return apply(content, "review_page", ticket.ID)
		},
	})
}

// Fill asks the reviewer, on the review page, for the missing fields of a
// call whose host cannot show a form (fallback_on_unsupported:
// review_page). schema is the form the proxy would have shown the host.
// It returns the answer as the host's form would have (accept with the
// values, or decline) for the proxy to merge and check as usual, or a
// result (pending, failed) to return instead.
func (g *Gate) Fill(ctx context.Context, t Tool, args json.RawMessage, message string, schema json.RawMessage, missing []string) (*mcp.ElicitResult, *mcp.CallToolResult, error) {
	name := t.Name
	digest, err := Digest(args)
	if err != nil {
		return nil, nil, err
	}
	obj, err := object(args)
	if err != nil {
		return nil, nil, err
	}
	v := g.view(t, obj, digest, "required arguments are missing")
	v.Missing = missing
	out, ticket, err := g.review(ctx, "fill", name, digest, func(ctx context.Context) (Ticket, error) {
		return g.svc.Approval(ctx, ApprovalRequest{Message: message, Context: v, Schema: schema, TimeoutSeconds: g.ttl, Reviewers: g.reviewers})
	})
	if err != nil {
		d, err := g.reviewFailed("fill", name, digest, missing, err)
		return nil, d.Result, err
	}
	if out == nil {
		g.decide("fill", name, digest, "pending", "review_page", ticket.ID)
		return nil, pendingPayload(name, missing, ticket, "required arguments are missing and were asked for").Result(), nil
	}
	if out.Decision != "submitted" {
		g.decide("fill", name, digest, "declined", "review_page", ticket.ID)
		return &mcp.ElicitResult{Action: "decline"}, nil, nil
	}
	var content map[string]any
	if err := json.Unmarshal(out.FormSubmission, &content); err != nil {
		return nil, nil, fmt.Errorf("reading the reviewer's form: %w", err)
	}
	g.decide("fill", name, digest, "filled", "review_page", ticket.ID)
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil, nil
}
