// Package plan decides, once per tools/call, what the proxy does with it:
// forward it untouched, ask the user for missing fields, or refuse it with
// a structured result. Both ways a call reaches the proxy (the stdio fast
// path below the SDK, and the SDK path) ask the same Planner and act on its
// Plan; neither re-implements a rule.
//
// The rules are the Python original's, in its order: the required fields
// are the input schema's "required" list, then tools.<tool>.required; a
// missing field that looks like a secret blocks the call (the sensitive
// policy sees every required field even when schema_required is off); with
// schema_required off nothing else is enforced; otherwise missing fields
// are asked for in a form when the configuration and the client allow it.
// Gates (the human gate of internal/proxy/gate) may then replace the plan.
//
// Beside the planner: which required arguments are missing (required.go),
// which look like secrets (sensitive.go), and the sealed state a
// 2026-07-28 client carries from one round trip to the next
// (requeststate.go).
package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// Tool is what the planner reads of one upstream tool's listing.
type Tool struct {
	Name string
	// Raw is the tool as the upstream listed it, InputSchema its input
	// schema.
	Raw, InputSchema json.RawMessage
	// SchemaRequired is the input schema's "required" list, in order.
	SchemaRequired []string
	// Properties holds each property's raw schema.
	Properties map[string]json.RawMessage

	// read is what the gate read of Raw (Read), once per listing.
	readOnce sync.Once
	read     any
}

// Read returns read(t.Raw), called once for this listing of the tool and
// kept for every later call: a new listing (a new tools/list, the
// upstream's tools/list_changed) is a new Tool, read anew. A planner has
// one gate, so the first read is the only one.
func (t *Tool) Read(read func(json.RawMessage) any) any {
	t.readOnce.Do(func() { t.read = read(t.Raw) })
	return t.read
}

// ParseTool reads one tool of a tools/list result.
func ParseTool(raw json.RawMessage) (*Tool, error) {
	var t struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("reading tool: %w", err)
	}
	if t.Name == "" {
		return nil, errors.New("reading tool: no name")
	}
	out := &Tool{Name: t.Name, Raw: raw, InputSchema: t.InputSchema}
	var schema struct {
		Required   []json.RawMessage          `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &schema) == nil {
		for _, r := range schema.Required {
			var s string
			if json.Unmarshal(r, &s) == nil { // the original skips non-strings
				out.SchemaRequired = append(out.SchemaRequired, s)
			}
		}
		out.Properties = schema.Properties
	}
	return out, nil
}

// Client is what the planner needs to know of the downstream client.
type Client struct {
	// Form reports that the client answers form elicitation.
	Form bool
	// MultiRoundTrip reports a 2026-07-28 client, which answers a form by
	// retrying the call rather than during it.
	MultiRoundTrip bool
	// Principal is who the call's limits count against: on HTTP the
	// client's address (the proxy has no API keys), as the listener's
	// session cap counts it; "" on stdio, the one client.
	Principal string
	// ID tells clients apart: on HTTP the principal and, for a client on
	// a session, the MCP session; a 2026-07-28 client has no session and
	// is its principal; "" on stdio.
	ID string
}

// Call is one tools/call as the planner sees it.
type Call struct {
	Name string
	// Tool is the tool's listing, nil when the listing lacks it.
	Tool *Tool
	// Args are the call's arguments; nil when they are not a JSON object
	// (the rules leave those to the upstream; a gate refuses them).
	Args *Object
	// Raw are the arguments as received.
	Raw    json.RawMessage
	Client Client
}

// Action is what the proxy does with a call.
type Action int

const (
	// Forward sends the call upstream once: untouched when Plan.Args is
	// nil, else with Plan.Args as its arguments.
	Forward Action = iota
	// Elicit asks the user for Plan.Form's fields; the answer goes to
	// Planner.Answered.
	Elicit
	// Block returns Plan.Outcome and never calls the upstream.
	Block
	// Hold hands the call to Plan.Hold, a gate's own procedure.
	Hold
)

func (a Action) String() string {
	switch a {
	case Forward:
		return "forward"
	case Elicit:
		return "elicit"
	case Block:
		return "block"
	case Hold:
		return "hold"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Plan is the decision for one call.
type Plan struct {
	Action Action
	// Args, for Forward, are the completed arguments; nil forwards the
	// call's own, byte for byte.
	Args json.RawMessage
	// Form, for Elicit, is what to ask.
	Form *Form
	// Outcome, for Block, is the result to return.
	Outcome *Outcome
	// Hold, for Hold, runs the call.
	Hold Holder
	// Missing are the required fields the call lacks, in order.
	Missing []string
}

// HoldInputKey names a Holder's input request in a 2026-07-28 multi
// round-trip result. A retry that answers it is planned again, as a new
// call, so that the Holder finds its answer in the request (the proxy's
// own missing-field retries are resumed instead).
const HoldInputKey = "human_gate"

// A Holder is a gate's procedure for a call: it may ask the user, ask a
// reviewer, forward the call or refuse it, through x.
type Holder interface {
	Run(ctx context.Context, x Executor) (*mcp.CallToolResult, error)
}

// Executor is what the SDK path offers a Holder.
type Executor interface {
	// Request is the downstream tools/call.
	Request() *mcp.CallToolRequest
	// Forward calls the upstream tool once with args (nil: the call's
	// own), meta added to the call's _meta, and returns its result as the
	// upstream sent it.
	Forward(ctx context.Context, args json.RawMessage, meta mcp.Meta) (*mcp.CallToolResult, error)
	// Elicit asks the downstream client with a form during the call (on
	// a session; a 2026-07-28 client gets an input request instead).
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// A Gate sees each call's plan and returns the plan to act on: p itself,
// or another. A gate that returns Forward for a plan that was not Forward
// (or another Forward) lets a call through that the rules stopped; it is
// its responsibility.
type Gate func(c *Call, p Plan) Plan

// Planner decides calls. It is safe for concurrent use once built.
type Planner struct {
	cfg     *config.Config
	matcher *Matcher
	gates   []Gate
}

// New returns the planner for a configuration.
func New(cfg *config.Config) *Planner {
	return &Planner{cfg: cfg, matcher: NewMatcher(cfg.Policies.SensitiveRequired)}
}

// Use adds a gate; gates run in the order added. Call it before the proxy
// serves.
func (pl *Planner) Use(g Gate) { pl.gates = append(pl.gates, g) }

// NewMatcher builds the sensitive-field matcher of a configuration, nil
// when the policy is off. The original's sensitive_name_markers and
// sensitive_schema_markers, when non-empty, replace the built-in lists;
// the port's name_markers and schema_markers add to them.
func NewMatcher(s config.SensitiveRequired) *Matcher {
	if !s.Enabled {
		return nil
	}
	var names, schema []string
	if s.DefaultMarkers {
		names, schema = DefaultNameMarkers, DefaultSchemaMarkers
	}
	if len(s.SensitiveNameMarkers) > 0 {
		names = s.SensitiveNameMarkers
	}
	if len(s.SensitiveSchemaMarkers) > 0 {
		schema = s.SensitiveSchemaMarkers
	}
	names = append(append([]string(nil), names...), s.NameMarkers...)
	schema = append(append([]string(nil), schema...), s.SchemaMarkers...)
	return newSensitiveMatcher(names, schema)
}

// Required returns the call's required fields: the schema's, then the
// configured ones, without duplicates.
func (pl *Planner) Required(c *Call) []string {
	var schema []string
	if c.Tool != nil {
		schema = c.Tool.SchemaRequired
	}
	return RequiredFields(schema, pl.cfg.Tools[c.Name].Required)
}

// Plan decides what the call needs. It reads the arguments and never
// changes them. A Forward plan never depends on c.Client, so a caller that
// does not know the client (the stdio fast path) may act on Forward and
// leave every other plan to a caller that does.
func (pl *Planner) Plan(c *Call) Plan {
	return pl.gate(c, pl.rules(c))
}

func (pl *Planner) gate(c *Call, p Plan) Plan {
	for _, g := range pl.gates {
		p = g(c, p)
	}
	return p
}

func (pl *Planner) rules(c *Call) Plan {
	if c.Args == nil {
		return Plan{Action: Forward}
	}
	missing := MissingFields(c.Args, pl.Required(c))
	if len(missing) == 0 {
		return Plan{Action: Forward}
	}
	fields := make([]*Field, len(missing))
	var secret, notElicitable []string
	for i, m := range missing {
		fields[i] = pl.field(c, m)
		if _, ok := pl.matcher.Match(m, PropertyOf(fields[i].prop)); ok {
			secret = append(secret, m)
		}
		if !fields[i].elicitable() {
			notElicitable = append(notElicitable, m)
		}
	}
	if len(secret) > 0 {
		return Plan{Action: Block, Missing: missing, Outcome: Sensitive(c.Name, secret)}
	}
	if !pl.cfg.Policies.SchemaRequired.Enabled {
		return Plan{Action: Forward, Missing: missing}
	}
	block := func(o *Outcome) Plan { return Plan{Action: Block, Missing: missing, Outcome: o} }
	switch {
	case len(notElicitable) > 0:
		return block(NeedsElicitation(c.Name, ReasonNotElicitable, missing,
			fmt.Sprintf("the required field(s) %s hold objects or lists, which a form cannot collect", list(notElicitable))))
	case !pl.cfg.Elicitation.Enabled:
		return block(NeedsElicitation(c.Name, ReasonDisabled, missing, "required fields are missing and elicitation is disabled in the proxy's configuration"))
	case !c.Client.Form:
		return block(NeedsElicitation(c.Name, ReasonUnsupported, missing, "required fields are missing and the client does not support form elicitation"))
	}
	return Plan{Action: Elicit, Missing: missing, Form: pl.form(c, fields)}
}

// field describes one field as the tool's schema and the configuration do.
func (pl *Planner) field(c *Call, name string) *Field {
	return newField(c.Tool, name, pl.cfg.Tools[c.Name])
}

// Form is what the user is asked for one call.
type Form struct {
	Fields []*Field
	Params *mcp.ElicitParams
}

// Names returns the asked fields' names, in order.
func (f *Form) Names() []string {
	out := make([]string, len(f.Fields))
	for i, x := range f.Fields {
		out[i] = x.name
	}
	return out
}

func (pl *Planner) form(c *Call, fields []*Field) *Form {
	msg := pl.cfg.Tools[c.Name].Elicit.Message
	f := &Form{Fields: fields, Params: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: formSchema(fields)}}
	if msg == "" {
		f.Params.Message = fmt.Sprintf("The tool %s needs more information: %s.", c.Name, list(f.Names()))
	}
	return f
}

// Fits checks a 2026-07-28 retry's answer against the form, as the SDK
// checks a session's answer (and the elicitation service a review page's):
// each asked field the answer gives must fit the form's property for it
// (its type and constraints). Absent fields are left to the required-field
// check. The error names the field, never the value given.
func (f *Form) Fits(content map[string]any) error {
	for _, x := range f.Fields {
		v, ok := content[x.name]
		if !ok || v == nil {
			continue
		}
		bad, err := checkValue(x.formProperty(), v)
		if err != nil {
			return fmt.Errorf("the form's field %s: %w", x.name, err)
		}
		if bad != nil {
			return fmt.Errorf("the answer's %s does not fit the form, which asks for a %s within the form's limits", x.name, x.formType())
		}
	}
	return nil
}

// FormFor rebuilds the form that asked for names (a 2026-07-28 client's
// retry carries only their names).
func (pl *Planner) FormFor(c *Call, names []string) *Form {
	fields := make([]*Field, len(names))
	for i, n := range names {
		fields[i] = pl.field(c, n)
	}
	return pl.form(c, fields)
}

// Failed is the plan for a call whose form could not be shown or answered:
// detail says what went wrong, for the model.
func (pl *Planner) Failed(c *Call, detail string) Plan {
	missing := pl.missing(c)
	return Plan{Action: Block, Missing: missing, Outcome: NeedsElicitation(c.Name, ReasonFailed, missing, "asking the user for the missing fields failed ("+detail+")")}
}

func (pl *Planner) missing(c *Call) []string {
	return MissingFields(c.Args, pl.Required(c))
}

// Answered decides a call whose form the user answered: declined,
// cancelled or an unknown action refuse it; an accepted answer is merged
// (only the asked fields, converted to the upstream's types and checked
// against its schema), the required fields are checked once more, and the
// completed call is forwarded, after the gates have seen its Forward plan.
func (pl *Planner) Answered(c *Call, form *Form, res *mcp.ElicitResult) Plan {
	missing := pl.missing(c)
	block := func(o *Outcome) Plan { return Plan{Action: Block, Missing: missing, Outcome: o} }
	switch res.Action {
	case "accept":
	case "decline":
		return block(NeedsElicitation(c.Name, ReasonDeclined, missing, "the user declined to provide the missing required fields"))
	case "cancel":
		return block(NeedsElicitation(c.Name, ReasonCancelled, missing, "the user cancelled the request for the missing required fields"))
	default:
		return block(NeedsElicitation(c.Name, ReasonFailed, missing, fmt.Sprintf("the client answered the form with the unknown action %q", res.Action)))
	}
	obj := c.Args.Clone()
	for _, f := range form.Fields {
		v, ok := res.Content[f.name]
		if !ok || v == nil {
			continue
		}
		b, err := f.accept(v)
		if err != nil {
			return block(NeedsElicitation(c.Name, ReasonInvalidResponse, missing, "the value given for a missing field does not satisfy the tool's schema ("+err.Error()+")"))
		}
		obj.Set(f.name, b)
	}
	if still := MissingFields(obj, pl.Required(c)); len(still) > 0 {
		return Plan{Action: Block, Missing: still, Outcome: StillMissing(c.Name, still)}
	}
	merged, err := obj.MarshalJSON()
	if err != nil {
		return block(NeedsElicitation(c.Name, ReasonFailed, missing, "merging the answer failed"))
	}
	// The completed call goes through the gates too: a call completed by
	// the form is still confirmed before it is forwarded.
	return pl.gate(c, Plan{Action: Forward, Args: merged})
}

// ParseArgs reads a call's raw arguments: absent or null is the empty
// object; anything but an object is nil.
func ParseArgs(raw json.RawMessage) *Object {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &Object{}
	}
	obj, err := ParseObject(raw)
	if err != nil {
		return nil
	}
	return obj
}

// UpstreamMetaKey reports whether a key of a downstream request's _meta is
// passed upstream. The downstream's io.modelcontextprotocol/* keys (its
// protocol version, capabilities and identity) are not: the upstream
// speaks its own protocol version and refuses foreign ones. Nor is an
// approval receipt (receipt.MetaKey): only the gate attaches one, for the
// approval it obtained, so the upstream never sees a receipt the agent
// chose.
func UpstreamMetaKey(key string) bool {
	return !strings.HasPrefix(key, "io.modelcontextprotocol/") && key != receipt.MetaKey
}
