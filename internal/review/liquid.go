package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/safeliquid"
)

// TemplateLimits bound the rendering of one request's templates. Zero
// fields take the defaults named. The bounds count work (steps, loop
// iterations, bytes), so a request is accepted or refused the same way on
// every machine however busy; the two in time are only the last guard.
type TemplateLimits struct {
	// Engine bounds each single render (one row, the heading, …). Zero
	// fields take this package's defaults: 64 KiB of output, 100,000 steps
	// and 2 s (the last guard) per render; the rest take safeliquid's
	// defaults.
	Engine safeliquid.Limits
	// PageSteps bounds the steps of all the renders of one page together
	// (every row, every hover detail, heading and footer); default 500,000.
	// The check at creation uses the same budget, so a request that is
	// accepted renders within it.
	PageSteps int
	// PageBudget bounds the time of all the renders of one page together,
	// the last guard for a page whose steps are slow on their data;
	// default 5 s.
	PageBudget time.Duration
	// MaxPageBytes bounds the output of all the renders of one page
	// together; default 4 MiB.
	MaxPageBytes int
}

// Defaults of TemplateLimits.
const (
	DefaultRenderOutputBytes = 64 << 10
	DefaultRenderSteps       = 100_000
	DefaultRenderDuration    = 2 * time.Second
	DefaultPageSteps         = 500_000
	DefaultPageBudget        = 5 * time.Second
	DefaultMaxPageBytes      = 4 << 20
)

// TemplateChecker compiles and test-renders a request's Liquid templates
// (package safeliquid) against the request's own data. It implements
// elicitation.TemplateChecker for the Service, and the review page uses it
// to render. It is safe for concurrent use.
type TemplateChecker struct {
	engine *safeliquid.Engine
	limits TemplateLimits
}

var _ elicitation.TemplateChecker = (*TemplateChecker)(nil)

// NewTemplateChecker returns a TemplateChecker with the default limits.
func NewTemplateChecker() *TemplateChecker { return NewTemplateCheckerWith(TemplateLimits{}) }

// NewTemplateCheckerWith returns a TemplateChecker with limits l.
func NewTemplateCheckerWith(l TemplateLimits) *TemplateChecker {
	l.Engine.MaxOutputBytes = orDefault(l.Engine.MaxOutputBytes, DefaultRenderOutputBytes)
	l.Engine.MaxSteps = orDefault(l.Engine.MaxSteps, DefaultRenderSteps)
	l.Engine.MaxDuration = orDefault(l.Engine.MaxDuration, DefaultRenderDuration)
	l.PageSteps = orDefault(l.PageSteps, DefaultPageSteps)
	l.PageBudget = orDefault(l.PageBudget, DefaultPageBudget)
	l.MaxPageBytes = orDefault(l.MaxPageBytes, DefaultMaxPageBytes)
	return &TemplateChecker{engine: safeliquid.New(l.Engine), limits: l}
}

// CheckTemplates compiles every template of p and renders each against p's
// own data (every option for rowTemplate and hoverTemplate), within the
// page's bounds. It returns nil, or an *elicitation.Error with
// CodeInvalidArgument and Kind ErrTemplateInvalid whose Field names the
// template and whose Message gives the line ("rowTemplate line 3: …").
func (c *TemplateChecker) CheckTemplates(p elicitation.Payload) error {
	_, err := c.render(p)
	return err
}

// rendered is the output of a request's templates. Strings are empty (and
// slices nil) for templates the request does not have.
type rendered struct {
	Heading, Footer, Display string
	Rows, Hovers             []string
}

// render compiles and renders p's templates.
func (c *TemplateChecker) render(p elicitation.Payload) (rendered, error) {
	var out rendered
	named := p.Templates.Named()
	if len(named) == 0 {
		return out, nil
	}
	compiled := map[string]*safeliquid.Template{}
	for _, t := range named {
		tpl, err := c.engine.Compile(t.Name, t.Source)
		if err != nil {
			return rendered{}, templateError(t.Name, "", err)
		}
		compiled[t.Name] = tpl
	}
	b := budget{deadline: time.Now().Add(c.limits.PageBudget), steps: safeliquid.Budget{Steps: c.limits.PageSteps}, left: c.limits.MaxPageBytes, limits: c.limits}
	var err error
	if out.Display, err = b.display(compiled["displayTemplate"], p.Context); err != nil {
		return rendered{}, err
	}
	var options []any
	if compiled["headingTemplate"] != nil || compiled["footerTemplate"] != nil || compiled["rowTemplate"] != nil || compiled["hoverTemplate"] != nil {
		if options, err = decodeOptions(p.Options); err != nil {
			return rendered{}, err
		}
	}
	list := map[string]any{"options": options, "message": p.Message, "minSelections": p.MinSelections, "maxSelections": p.MaxSelections}
	if out.Heading, err = b.runIf(compiled["headingTemplate"], list); err != nil {
		return rendered{}, err
	}
	if out.Rows, err = b.each(compiled["rowTemplate"], options); err != nil {
		return rendered{}, err
	}
	if out.Hovers, err = b.each(compiled["hoverTemplate"], options); err != nil {
		return rendered{}, err
	}
	if out.Footer, err = b.runIf(compiled["footerTemplate"], list); err != nil {
		return rendered{}, err
	}
	return out, nil
}

// decodeOptions decodes the options for the list templates.
func decodeOptions(opts []elicitation.Option) ([]any, error) {
	options := make([]any, len(opts))
	for i, o := range opts {
		var v any
		if err := json.Unmarshal(o.Raw, &v); err != nil {
			return nil, fmt.Errorf("decode options[%d]: %w", i, err)
		}
		options[i] = v
	}
	return options, nil
}

// display renders the approval's displayTemplate (if any) over its context.
func (b *budget) display(tpl *safeliquid.Template, raw json.RawMessage) (string, error) {
	if tpl == nil {
		return "", nil
	}
	var ctx any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &ctx); err != nil {
			return "", fmt.Errorf("decode context: %w", err)
		}
	}
	return b.run(tpl, "", map[string]any{"context": ctx})
}

// runIf renders tpl, or nothing when the request has no such template.
func (b *budget) runIf(tpl *safeliquid.Template, bindings map[string]any) (string, error) {
	if tpl == nil {
		return "", nil
	}
	return b.run(tpl, "", bindings)
}

// each renders a per-option template (rowTemplate, hoverTemplate) once per
// option; nil when the request has no such template.
func (b *budget) each(tpl *safeliquid.Template, options []any) ([]string, error) {
	if tpl == nil {
		return nil, nil
	}
	outs := make([]string, len(options))
	for i, o := range options {
		s, err := b.run(tpl, fmt.Sprintf(" (options[%d])", i), map[string]any{"option": o})
		if err != nil {
			return nil, err
		}
		outs[i] = s
	}
	return outs, nil
}

// budget is what is left of a page's bounds.
type budget struct {
	deadline time.Time
	steps    safeliquid.Budget
	left     int
	limits   TemplateLimits
}

func (b *budget) run(tpl *safeliquid.Template, where string, bindings map[string]any) (string, error) {
	// over is the refusal of a page past one of its bounds.
	over := func(format string, bound any) error {
		return &elicitation.Error{Code: elicitation.CodeInvalidArgument, Kind: elicitation.ErrTemplateInvalid, Field: tpl.Name(),
			Message: tpl.Name() + where + ": " + fmt.Sprintf(format, bound)}
	}
	if time.Now().After(b.deadline) {
		return "", over("rendering the whole page took longer than %s; make the templates simpler", b.limits.PageBudget)
	}
	s, err := tpl.RenderBudget(&b.steps, bindings)
	if le := (*safeliquid.LimitError)(nil); errors.As(err, &le) && le.Bound == "Budget" {
		return "", over("rendering the whole page took more than %d steps (tags, loop iterations, filter calls, writes); make the templates simpler", b.limits.PageSteps)
	}
	if err != nil {
		return "", templateError(tpl.Name(), where, err)
	}
	b.left -= len(s)
	if b.left < 0 {
		return "", over("the templates' output for the whole page exceeds %d bytes; make it smaller", b.limits.MaxPageBytes)
	}
	return s, nil
}

// templateError turns a safeliquid error into the agent-facing error:
// "rowTemplate line 3: unknown filter …".
func templateError(name, where string, err error) error {
	msg := ""
	var ce *safeliquid.CompileError
	var re *safeliquid.RenderError
	var le *safeliquid.LimitError
	switch {
	case errors.As(err, &ce):
		msg = withLine(name, ce.Line) + where + ": " + ce.Msg
	case errors.As(err, &re):
		msg = withLine(name, re.Line) + where + ": " + re.Msg
	case errors.As(err, &le):
		msg = fmt.Sprintf("%s%s: rendering stopped at a bound (%s): %s", name, where, boundName(le.Bound), le.Msg)
	default:
		msg = name + where + ": the template could not be rendered"
	}
	return &elicitation.Error{Code: elicitation.CodeInvalidArgument, Kind: elicitation.ErrTemplateInvalid, Field: name, Message: strings.TrimSpace(msg)}
}

func withLine(name string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s line %d", name, line)
	}
	return name
}

func boundName(b string) string {
	switch b {
	case "MaxDuration":
		return "time per render"
	case "MaxSteps":
		return "steps per render"
	case "MaxOutputBytes":
		return "output size"
	case "MaxIterations":
		return "loop iterations"
	case "MaxStringBytes", "MaxTotalBytes":
		return "string size"
	case "MaxDepth":
		return "nesting depth"
	}
	return b
}
