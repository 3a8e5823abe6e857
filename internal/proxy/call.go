package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-elicitation/elicitation/internal/proxy/rawjson"
	"github.com/mcp-elicitation/elicitation/internal/proxy/required"
	"github.com/mcp-elicitation/elicitation/internal/proxy/upstream"
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

// callTool is the tools/call middleware for every upstream tool.
func (p *Proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	t, _ := p.tools.get(name)
	tc := p.cfg.Tools[name]

	var schemaRequired []string
	if t != nil && p.cfg.Policies.SchemaRequired.Enabled {
		schemaRequired = t.schemaRequired
	}
	fields := required.Fields(schemaRequired, tc.Required)

	args := bytes.TrimSpace(req.Params.Arguments)
	var obj *rawjson.Object
	if len(args) == 0 || string(args) == "null" {
		obj = &rawjson.Object{}
	} else {
		var err error
		if obj, err = rawjson.ParseObject(args); err != nil {
			// Not an object: the upstream judges such input itself.
			return p.forward(ctx, req, req.Params.Arguments)
		}
	}

	if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		return p.resume(ctx, req, obj, fields)
	}

	missing := required.Missing(obj, fields)
	if len(missing) == 0 {
		return p.forward(ctx, req, req.Params.Arguments)
	}

	specs := make([]*field, len(missing))
	var secret, notElicitable []string
	for i, m := range missing {
		specs[i] = newField(t, m, tc)
		if _, ok := p.matcher.Match(m, specs[i].sensitiveProperty()); ok {
			secret = append(secret, m)
		}
		if !specs[i].elicitable() {
			notElicitable = append(notElicitable, m)
		}
	}
	log := p.logger.With("tool", name, "missing", missing)
	if len(secret) > 0 {
		log.Info("tool call blocked: a missing required field looks like a secret", "sensitive", secret)
		return blocked(name, missing, secret).result(), nil
	}
	if len(notElicitable) > 0 {
		log.Info("tool call not forwarded: a missing field cannot be asked for in a form", "not_elicitable", notElicitable)
		return needsInput(name, "needs_input", ReasonNotElicitable, missing,
			fmt.Sprintf("the required field(s) %s hold objects or lists, which a form cannot collect", list(notElicitable))).result(), nil
	}
	if !p.cfg.Elicitation.Enabled {
		log.Info("tool call not forwarded: required fields missing and elicitation disabled")
		return needsInput(name, "needs_input", ReasonDisabled, missing, "required fields are missing and elicitation is disabled in the proxy's configuration").result(), nil
	}
	if !supportsForm(req.ClientCapabilities()) {
		log.Info("tool call not forwarded: the client does not support form elicitation")
		return needsInput(name, "needs_input", ReasonUnsupported, missing, "required fields are missing and the client does not support form elicitation").result(), nil
	}

	params := &mcp.ElicitParams{
		Mode:            "form",
		Message:         elicitMessage(name, tc.Elicit.Message, missing),
		RequestedSchema: formSchema(specs),
	}
	if req.ProtocolVersion() >= protocolMultiRoundTrip {
		state, err := p.sealer.Seal(pendingState{Tool: name, Args: hashArgs(req.Params.Arguments), Fields: missing}, stateTTL)
		if err != nil {
			return nil, err
		}
		log.Info("asking the client for missing required fields (multi round-trip)")
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputKey: params}, RequestState: state}, nil
	}
	log.Info("asking the client for missing required fields")
	res, err := req.Session.Elicit(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The error text may quote what the user typed: keep it out of
		// the log, and hand it only to the caller.
		log.Warn("elicitation failed", "error_type", fmt.Sprintf("%T", err))
		return needsInput(name, "failed", ReasonFailed, missing, "asking the user for the missing fields failed ("+err.Error()+")").result(), nil
	}
	return p.answered(ctx, req, obj, fields, specs, res)
}

// resume handles the retry of a 2026-07-28 client that answered the form.
func (p *Proxy) resume(ctx context.Context, req *mcp.CallToolRequest, obj *rawjson.Object, fields []string) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	t, _ := p.tools.get(name)
	tc := p.cfg.Tools[name]
	var st pendingState
	err := p.sealer.Open(req.Params.RequestState, &st)
	switch {
	case err != nil:
	case st.Tool != name:
		err = errors.New("request state belongs to another tool")
	case st.Args != hashArgs(req.Params.Arguments):
		err = errors.New("arguments changed since the form was requested")
	}
	missing := required.Missing(obj, fields)
	if err != nil {
		p.logger.Warn("refusing a multi round-trip retry", "tool", name, "error", err)
		return needsInput(name, "failed", ReasonFailed, missing, "the retry's request state is invalid or expired ("+err.Error()+"); call the tool again without inputResponses or requestState").result(), nil
	}
	res, ok := req.Params.InputResponses[inputKey].(*mcp.ElicitResult)
	if !ok {
		return needsInput(name, "failed", ReasonFailed, missing, "the retry carried no answer to the form").result(), nil
	}
	specs := make([]*field, len(st.Fields))
	for i, f := range st.Fields {
		specs[i] = newField(t, f, tc)
	}
	return p.answered(ctx, req, obj, fields, specs, res)
}

// answered merges an accepted form into the arguments, re-checks them once
// and forwards the call, or reports why it cannot.
func (p *Proxy) answered(ctx context.Context, req *mcp.CallToolRequest, obj *rawjson.Object, fields []string, asked []*field, res *mcp.ElicitResult) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	missing := required.Missing(obj, fields)
	log := p.logger.With("tool", name)
	switch res.Action {
	case "accept":
	case "decline":
		log.Info("the user declined to provide the missing fields")
		return needsInput(name, "declined", ReasonDeclined, missing, "the user declined to provide the missing required fields").result(), nil
	case "cancel":
		log.Info("the user cancelled the form")
		return needsInput(name, "cancelled", ReasonCancelled, missing, "the user cancelled the request for the missing required fields").result(), nil
	default:
		return needsInput(name, "failed", ReasonFailed, missing, fmt.Sprintf("the client answered the form with the unknown action %q", res.Action)).result(), nil
	}
	for _, f := range asked {
		v, ok := res.Content[f.name]
		if !ok || v == nil {
			continue
		}
		b, err := f.accept(v)
		if err != nil {
			log.Info("an elicited value does not satisfy the upstream schema", "field", f.name)
			return needsInput(name, "failed", ReasonInvalidResponse, missing, "the value given for a missing field does not satisfy the tool's schema ("+err.Error()+")").result(), nil
		}
		obj.Set(f.name, b)
	}
	if still := required.Missing(obj, fields); len(still) > 0 {
		log.Info("required fields still missing after elicitation", "missing", still)
		return needsInput(name, "needs_input", ReasonStillMissing, still, "required fields are still missing after asking the user").result(), nil
	}
	merged, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("merging elicited arguments: %w", err)
	}
	log.Info("forwarding the call with the elicited fields", "elicited", fieldNames(asked))
	return p.forward(ctx, req, merged)
}

func fieldNames(fs []*field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// forward calls the upstream tool once with args and passes its result on
// as the upstream sent it.
func (p *Proxy) forward(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, error) {
	cs, err := p.up.Session()
	if err != nil {
		return nil, upstreamUnavailable(err)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	params := &mcp.CallToolParams{
		Meta:      cleanMeta(req.Params.Meta),
		Name:      req.Params.Name,
		Arguments: args,
	}
	if tok := req.Params.GetProgressToken(); tok != nil {
		upTok, done := p.progress.add(progressRoute{ctx: ctx, session: req.Session, token: tok})
		defer done()
		defer p.up.AwaitProgress(ctx, upTok)
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		params.Meta["progressToken"] = upTok
	}
	ctx, sink := upstream.WithSink(ctx)
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, upstreamError(err)
	}
	rawHolderFrom(ctx).set(sink.Result())
	return res, nil
}

func elicitMessage(tool, configured string, missing []string) string {
	if configured != "" {
		return configured
	}
	return fmt.Sprintf("The tool %s needs more information: %s.", tool, list(missing))
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
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	sum := sha256.Sum256(b.Bytes())
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
