package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// The MCP App's decision path (the io.modelcontextprotocol/ui extension),
// with Options.App: two tools only an app may call (_meta.ui.visibility
// ["app"], which the host enforces), refused to a client that did not
// declare the extension. elicit_app_view returns what the review page
// shows and a render token sealed for that request and principal, with a
// nonce; elicit_app_decide carries the token and the answer, which goes
// through elicitation.Service.Submit with the review key kept sealed in the
// request (Payload.HostLink), Via elicitation.ViaApp, under the page's
// rules: schema, bounds, exactly once (the nonce names the submission, so
// a replayed decision is the retry it is), first answer wins. Requests the
// host may not decide (elicitation.Service.HostFormRefusal) are refused
// with the sentence why. The page itself is the ui:// resource of
// appresource.go.
//
// The view carries the message rendered as the review page renders it
// (review.MessageHTML, the safe Markdown subset), so the app inserts
// markup this server made and nothing else; it never carries the agent's
// Liquid templates or their output: the app shows the default rows and,
// where the request has templates, links to the review page for the view
// they make (templated names them).

// The app's tools.
const (
	ToolAppView   = "elicit_app_view"
	ToolAppDecide = "elicit_app_decide"
)

// UIExtension names the MCP Apps extension in the client's capabilities.
const UIExtension = "io.modelcontextprotocol/ui"

const purposeAppToken = "elicitation app render token v1"

var appOnly = mcp.Meta{"ui": map[string]any{"visibility": []string{"app"}}}

var appDecideInputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string", "minLength": 1},
		"renderToken": {"type": "string", "minLength": 1, "description": "The token elicit_app_view returned for this render."},
		"decision": {"type": "string", "enum": ["submitted", "declined"]},
		"selectedIds": {"type": "array", "items": {"type": "string"}, "description": "Selection: the picked option ids."},
		"form": {"type": "object", "description": "Approval with a form: the values, typed as its requestedSchema says."},
		"comment": {"type": "string", "description": "The reviewer's optional note."},
		"standing": {
			"type": "object",
			"description": "With submitted, where elicit_app_view offered standing: also approve later requests like this one (every field the view's standing.fields names held to its value) for minutes, up to uses of them. The server checks the bounds.",
			"properties": {
				"minutes": {"type": "integer", "description": "How long the standing approval lasts, at most the view's standing.maxMinutes."},
				"uses": {"type": "integer", "description": "How many later requests it may decide."}
			},
			"required": ["minutes", "uses"],
			"additionalProperties": false
		}
	},
	"required": ["elicitationId", "renderToken", "decision"],
	"additionalProperties": false
}`)

var appDecideOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"status": {"type": "string", "enum": ` + statusEnum + `},
		"standing": {"type": "string", "description": "With standing: the standing approval made (what it decides, for how long), or that it was not saved (the approval stands)."}
	},
	"required": ["status"]
}`)

var appViewOutputSchema = schema(`{
	"type": "object",
	"properties": {
		"elicitationId": {"type": "string"},
		"kind": {"type": "string", "enum": ["approval", "selection"]},
		"status": {"type": "string", "enum": ` + statusEnum + `},
		"message": {"type": "string", "description": "The request's message, Markdown as the agent sent it."},
		"messageHtml": {"type": "string", "description": "The message rendered as the review page renders it (the safe Markdown subset: no raw HTML, no images, http(s) links only)."},
		"askedBy": {"type": "string", "description": "The principal that asked; absent for an agent without credentials."},
		"createdAt": {"type": "string", "format": "date-time"},
		"formFields": {"type": "array", "items": {"type": "object"}, "description": "Approval with a form: its fields as the review page reads them (name, type, title, description, required, format, bounds, choices, default)."},
		"labels": {"type": "object", "properties": {"submit": {"type": "string"}, "decline": {"type": "string"}}},
		"templated": {"type": "array", "items": {"type": "string"}, "description": "The request's Liquid templates (their input names): the app shows the default view; the review page shows theirs."},
		"context": {"description": "Approval: the payload to approve, read-only."},
		"requestedSchema": {"type": "object", "description": "Approval with a form: the form."},
		"options": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}}, "required": ["id", "label"]}},
		"minSelections": {"type": "integer"},
		"maxSelections": {"type": "integer"},
		"selectionRule": {"type": "string"},
		"client": {"type": "object", "properties": {"name": {"type": "string"}, "version": {"type": "string"}}},
		"expiresAt": {"type": "string", "format": "date-time"},
		"commentMaxChars": {"type": "integer"},
		"renderToken": {"type": "string", "description": "Pass to elicit_app_decide."},
		"standing": {
			"type": "object",
			"description": "Present where the approval may be made standing (the server signs reviewers in): elicit_app_decide's standing makes it, holding these fields to these values, for at most maxMinutes.",
			"properties": {
				"maxMinutes": {"type": "integer"},
				"fields": {"type": "array", "items": {"type": "object", "properties": {"path": {"type": "array", "items": {"type": "string"}}, "value": {}}, "required": ["path", "value"]}}
			},
			"required": ["maxMinutes", "fields"]
		}
	},
	"required": ["elicitationId", "kind", "status", "message", "expiresAt", "commentMaxChars", "renderToken"]
}`)

type appViewOutput struct {
	ElicitationID   string              `json:"elicitationId"`
	Kind            elicitation.Kind    `json:"kind"`
	Status          elicitation.Status  `json:"status"`
	Message         string              `json:"message"`
	MessageHTML     string              `json:"messageHtml"`
	AskedBy         string              `json:"askedBy,omitempty"`
	CreatedAt       string              `json:"createdAt"`
	FormFields      []elicitation.Field `json:"formFields,omitempty"`
	Labels          *elicitation.Labels `json:"labels,omitempty"`
	Templated       []string            `json:"templated,omitempty"`
	Context         json.RawMessage     `json:"context,omitempty"`
	RequestedSchema json.RawMessage     `json:"requestedSchema,omitempty"`
	Options         []appOption         `json:"options,omitempty"`
	MinSelections   int                 `json:"minSelections,omitempty"`
	MaxSelections   int                 `json:"maxSelections,omitempty"`
	SelectionRule   string              `json:"selectionRule,omitempty"`
	Client          *elicitation.Client `json:"client,omitempty"`
	ExpiresAt       string              `json:"expiresAt"`
	CommentMaxChars int                 `json:"commentMaxChars"`
	RenderToken     string              `json:"renderToken"`
	Standing        *appStanding        `json:"standing,omitempty"`
}

// appStanding is what the app offers to make an approval standing: at most
// MaxMinutes, holding Fields (elicitation.Payload.RuleFields) to their
// values.
type appStanding struct {
	MaxMinutes int            `json:"maxMinutes"`
	Fields     []appRuleField `json:"fields"`
}

type appRuleField struct {
	Path  []string        `json:"path"`
	Value json.RawMessage `json:"value"`
}

type appDecideOutput struct {
	Status   elicitation.Status `json:"status"`
	Standing string             `json:"standing,omitempty"`
}

// appStandingArg is elicit_app_decide's standing (standingArg requires
// both).
type appStandingArg struct {
	Minutes *int `json:"minutes"`
	Uses    *int `json:"uses"`
}

type appOption struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// appClient refuses a client that did not declare the MCP Apps extension.
// A call whose client capabilities are unknown (a session-era call to a
// stateless deployment, as on Lambda: no initialize reaches the process
// that serves it) is let through: the check keeps the app's tools from
// clients known not to render it, and is no boundary (the owner, the
// render token and the page's rules are; docs/security.md).
func appClient(req *mcp.CallToolRequest) error {
	caps := req.ClientCapabilities()
	if caps == nil {
		return nil
	}
	if _, ok := caps.Extensions[UIExtension]; ok {
		return nil
	}
	return &elicitation.Error{Code: elicitation.CodeForbidden, Message: "only the elicitation MCP App calls this tool, in a host that declares " + UIExtension + "; give the reviewUrl to the human instead"}
}

// appRequest reads the owner's request for the app, refusing one the host
// may not decide.
func (s *Server) appRequest(ctx context.Context, req *mcp.CallToolRequest, id string) (elicitation.State, elicitation.Payload, error) {
	if err := appClient(req); err != nil {
		return elicitation.State{}, elicitation.Payload{}, err
	}
	st, p, err := s.svc.HostForm(ctx, PrincipalOf(req.Extra), id)
	if err != nil {
		return st, p, err
	}
	if why := s.svc.HostFormRefusal(ctx, p.Reviewers, st.Approvals); why != "" || p.HostLink == "" {
		if why == "" {
			why = "this request was created without a way to decide it in the host: open the review link instead"
		}
		return st, p, &elicitation.Error{Code: elicitation.CodeForbidden, Message: "not decided in the app: " + why}
	}
	return st, p, nil
}

func (s *Server) appView(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	id, err := idArg(req)
	if err != nil {
		return nil, err
	}
	st, p, err := s.appRequest(ctx, req, id)
	if err != nil {
		return nil, err
	}
	out := appViewOutput{
		ElicitationID: id, Kind: st.Kind, Status: st.Status, Message: p.Message, MessageHTML: review.MessageHTML(p.Message),
		Context: p.Context, Client: p.Client, CreatedAt: timestamp(st.CreatedAt), ExpiresAt: timestamp(st.ExpiresAt),
		CommentMaxChars: elicitation.MaxCommentChars, RenderToken: SealState(s.sealer, purposeAppToken, RequestState{ID: id, Principal: PrincipalOf(req.Extra), Expires: st.ExpiresAt}),
	}
	if st.Owner != anonymous && st.Owner != "" {
		out.AskedBy = st.Owner
	}
	if p.Labels != (elicitation.Labels{}) {
		out.Labels = &p.Labels
	}
	for _, t := range p.Templates.Named() {
		out.Templated = append(out.Templated, t.Name)
	}
	if p.Schema != nil {
		out.RequestedSchema, out.FormFields = p.Schema.Raw, p.Schema.Fields
	}
	if st.Kind == elicitation.KindSelection {
		out.MinSelections, out.MaxSelections, out.SelectionRule = p.MinSelections, p.MaxSelections, p.SelectionRule()
		for _, o := range p.Options {
			out.Options = append(out.Options, appOption{ID: o.ID, Label: o.DisplayLabel()})
		}
	}
	out.Standing = s.appStandingOffer(elicitation.Record{State: st, Payload: p})
	return out, nil
}

// appStandingOffer is the standing approval the app offers for rec: where
// the review page offers one (Record.StandingOffered) and the server can
// make one (it signs reviewers in: StandingMaxTTL); nil otherwise.
func (s *Server) appStandingOffer(rec elicitation.Record) *appStanding {
	maxTTL := s.svc.StandingMaxTTL()
	if maxTTL < time.Minute || !rec.StandingOffered() {
		return nil
	}
	out := &appStanding{MaxMinutes: int(maxTTL / time.Minute), Fields: []appRuleField{}}
	fields, _ := rec.Payload.RuleFields()
	for _, f := range fields {
		out.Fields = append(out.Fields, appRuleField{Path: f.Path, Value: f.Value})
	}
	return out
}

// standingArg reads elicit_app_decide's standing (nil: none), as its
// schema says: minutes and uses, integers, nothing else.
func standingArg(raw json.RawMessage) (*appStandingArg, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var in appStandingArg
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&in) != nil || in.Minutes == nil || in.Uses == nil {
		return nil, badArg("standing", "standing must be {minutes, uses}, two integers and nothing else")
	}
	return &in, nil
}

// maxStandingMinutes bounds the minutes elicit_app_decide turns into a
// duration (no overflow); the Service refuses anything past its cap.
const maxStandingMinutes = 1 << 30

// appRule is the standing approval elicit_app_decide's standing asks for
// at now: minutes and uses as sent (the Service checks them), holding
// every field the view offered (Payload.RuleFields).
func appRule(p elicitation.Payload, in *appStandingArg, now time.Time) *elicitation.RuleInput {
	if in == nil {
		return nil
	}
	minutes := max(min(*in.Minutes, maxStandingMinutes), -maxStandingMinutes)
	return p.RuleHoldingAll(now.Add(time.Duration(minutes)*time.Minute), *in.Uses)
}

// appDecided is elicit_app_decide's output for st, reached at now with
// rule (nil: none) and Submit's err: a rule not saved leaves the approval
// standing, and the output says so.
func (s *Server) appDecided(ctx context.Context, st elicitation.State, rule *elicitation.RuleInput, now time.Time, err error) (any, error) {
	out := appDecideOutput{Status: st.StatusAt(now)}
	switch {
	case errors.Is(err, elicitation.ErrRuleNotSaved):
		s.log.ErrorContext(ctx, "app decision: standing approval not saved", "elicitationId", st.ID, "err", err)
		out.Standing = "not saved: the approval is recorded, but the standing approval could not be saved; later requests like this one will be asked as before"
	case err != nil:
		return nil, err
	case rule != nil && out.Status == elicitation.StatusSubmitted:
		out.Standing = rule.Summary(now)
	}
	return out, nil
}

func (s *Server) appDecide(ctx context.Context, req *mcp.CallToolRequest) (any, error) {
	var in struct {
		ID          string          `json:"elicitationId"`
		Token       string          `json:"renderToken"`
		Decision    string          `json:"decision"`
		SelectedIDs []any           `json:"selectedIds"`
		Form        map[string]any  `json:"form"`
		Comment     *string         `json:"comment"`
		Standing    json.RawMessage `json:"standing"`
	}
	if _, err := parseArgs(req.Params.Arguments, appDecideArgNames...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
		return nil, badArg("arguments", "the arguments do not fit elicit_app_decide's input schema")
	}
	standing, err := standingArg(in.Standing)
	if err != nil {
		return nil, err
	}
	r, err := s.openRender(in.Token, in.ID, PrincipalOf(req.Extra))
	if err != nil {
		return nil, err
	}
	before, p, err := s.appRequest(ctx, req, in.ID)
	if err != nil {
		return nil, err
	}
	answer := &mcp.ElicitResult{Action: map[string]string{"submitted": "accept", "declined": "decline"}[in.Decision], Content: map[string]any{}}
	if answer.Action == "" {
		return nil, badArg("decision", "decision must be submitted or declined")
	}
	maps.Copy(answer.Content, in.Form)
	if in.SelectedIDs != nil {
		answer.Content[hostSelection] = in.SelectedIDs
	}
	if in.Comment != nil {
		answer.Content[commentField(p)] = *in.Comment
	}
	sub, err := hostSubmission(p, answer, r.Nonce)
	if err != nil {
		return nil, err
	}
	now := s.svc.Now()
	sub.ID, sub.Via, sub.Rule = "app-"+r.Nonce, elicitation.ViaApp, appRule(p, standing, now)
	key, err := s.sealer.Open(hostKeyPurpose(in.ID), p.HostLink)
	if err != nil {
		return nil, badArg("renderToken", "renderToken can no longer be used (the server's keys changed): open the review link")
	}
	st, err := s.svc.Submit(ctx, in.ID, string(key), sub)
	if before.Status != elicitation.StatusPending {
		// A decision sent again: whatever it made was made the first time.
		return s.appDecided(ctx, st, nil, now, err)
	}
	return s.appDecided(ctx, st, sub.Rule, now, err)
}

// openRender checks a render token (a RequestState sealed by SealState):
// this server's, for this request and principal, before its expiry.
func (s *Server) openRender(sealed, id, principal string) (RequestState, error) {
	b, err := s.sealer.Open(purposeAppToken, sealed)
	var r RequestState
	if err != nil || json.Unmarshal(b, &r) != nil {
		return RequestState{}, badArg("renderToken", "renderToken is not one this server issued (altered or foreign): call elicit_app_view again")
	}
	if r.ID != id || r.Principal != principal {
		return RequestState{}, badArg("renderToken", "renderToken belongs to another request or another agent")
	}
	if !s.svc.Now().Before(r.Expires) {
		return RequestState{}, elicitation.ErrExpired
	}
	return r, nil
}
