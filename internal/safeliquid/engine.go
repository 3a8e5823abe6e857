package safeliquid

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/osteele/liquid/parser"
	"github.com/osteele/liquid/render"
)

// MaxSourceBytes is the largest template source Compile accepts (SPEC §2: each
// template at most 32 KiB).
const MaxSourceBytes = 32 << 10

// Default limits, used for zero fields of Limits.
const (
	DefaultMaxOutputBytes = 1 << 20
	DefaultMaxIterations  = 100_000
	DefaultMaxStringBytes = 256 << 10
	DefaultMaxTotalBytes  = 32 << 20
	DefaultMaxDepth       = 20
	DefaultMaxSteps       = 200_000
	DefaultMaxDuration    = 5 * time.Second
)

// Limits bound one render. Zero fields take defaults. Every bound but
// MaxDuration counts work, so a template stops at the same point on every
// machine however busy; MaxDuration is only the last guard, for a step
// whose data make it slow.
type Limits struct {
	MaxOutputBytes int           // default 1 MiB per render
	MaxIterations  int           // total loop iterations per render, default 100_000; also the largest array a filter may build or take from a range
	MaxSteps       int           // steps per render (each tag, loop iteration, filter call and write of output is one), default 200_000
	MaxStringBytes int           // largest string any filter/assign/capture may build, default 256 KiB
	MaxTotalBytes  int           // total bytes all filters and captures may build in one render, default 32 MiB
	MaxDepth       int           // nesting depth of blocks, default 20 (checked at Compile)
	MaxDuration    time.Duration // wall-clock time checked at every step, default 5s: the last guard only
}

// A Budget is steps shared by several renders, such as the renders of one
// page: each RenderBudget takes the steps it used from Steps and stops
// (with the bound "Budget") when they run out, whatever is left of its own
// MaxSteps.
type Budget struct {
	Steps int
}

func (l Limits) withDefaults() Limits {
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = DefaultMaxIterations
	}
	if l.MaxSteps <= 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxStringBytes <= 0 {
		l.MaxStringBytes = DefaultMaxStringBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	return l
}

// An Engine compiles templates under one set of Limits. It is safe for
// concurrent use.
type Engine struct {
	limits Limits
	// compileCfg holds the tags (and, for name checks, the filters); it is
	// only read after New returns.
	compileCfg  render.Config
	filterNames map[string]bool
	// envs pools per-render configurations: each holds its own filter
	// closures bound to its own renderState, so concurrent renders never
	// share state.
	envs sync.Pool
}

// renderEnv is one render's configuration and state. A renderEnv is used by
// one render at a time (taken from and returned to Engine.envs).
type renderEnv struct {
	cfg render.Config
	st  *renderState
}

// New returns an Engine that enforces l (zero fields take defaults).
func New(l Limits) *Engine {
	e := &Engine{limits: l.withDefaults()}
	e.compileCfg = render.NewConfig()
	addTags(&e.compileCfg)
	e.filterNames = map[string]bool{}
	for name := range filterSet(&renderState{}) {
		e.filterNames[name] = true
	}
	e.envs.New = func() any { return e.newEnv() }
	return e
}

func (e *Engine) newEnv() *renderEnv {
	env := &renderEnv{cfg: render.NewConfig(), st: &renderState{}}
	addTags(&env.cfg)
	for name, fn := range filterSet(env.st) {
		env.cfg.AddFilter(name, fn)
	}
	return env
}

// Limits returns the engine's limits with defaults applied.
func (e *Engine) Limits() Limits { return e.limits }

// A Template is a compiled template. It is safe for concurrent use.
type Template struct {
	name   string
	root   render.Node
	engine *Engine
}

// Name returns the name given to Compile.
func (t *Template) Name() string { return t.name }

// A CompileError reports a template that Compile refused: a syntax error, a
// forbidden tag or filter, or a construct that could not be bounded.
type CompileError struct {
	Name string // the name given to Compile
	Line int    // 1-based line of the offending tag or object; 0 if unknown
	Msg  string // what is wrong, phrased so an agent can fix the template
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("template %s: line %d: %s", displayName(e.Name), e.Line, e.Msg)
}

// displayName is a template's name in an error.
func displayName(name string) string { return cmp.Or(name, "(unnamed)") }

// A LimitError reports a render stopped by one of the Limits.
type LimitError struct {
	Bound string // the Limits field that stopped the render, e.g. "MaxIterations"
	Limit int64  // the value of that bound (nanoseconds for MaxDuration)
	Msg   string // detail
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("template stopped: %s exceeded (limit %s): %s", e.Bound, e.limitString(), e.Msg)
}

func (e *LimitError) limitString() string {
	if e.Bound == "MaxDuration" {
		return time.Duration(e.Limit).String()
	}
	return fmt.Sprint(e.Limit)
}

// A RenderError reports a template error found while rendering (a filter
// given the wrong type, a division by zero, …) that is not a bound.
type RenderError struct {
	Name string
	Line int // 0 if unknown
	Msg  string
}

func (e *RenderError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("template %s: line %d: %s", displayName(e.Name), e.Line, e.Msg)
	}
	return fmt.Sprintf("template %s: %s", displayName(e.Name), e.Msg)
}

var liquidPrefix = regexp.MustCompile(`^Liquid error(?: \(line \d+\))?: `)

func cleanMsg(s string) string { return liquidPrefix.ReplaceAllString(s, "") }

// Compile parses src. It fails (never panics) on syntax errors, on
// include/render or any file access, on templates over MaxSourceBytes, on
// unknown filters, on blocks nested deeper than MaxDepth, on literal ranges
// longer than MaxIterations, and on other constructs that could not be
// bounded. The error is a *CompileError with the line of the offending tag.
func (e *Engine) Compile(name, src string) (t *Template, err error) {
	if len(src) > MaxSourceBytes {
		return nil, &CompileError{Name: name, Line: 0, Msg: fmt.Sprintf(
			"template is %d bytes; the limit is %d bytes (32 KiB)", len(src), MaxSourceBytes)}
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, &CompileError{Name: name, Msg: fmt.Sprintf("template could not be parsed: %v", r)}
		}
	}()
	root, perr := e.compileCfg.Compile(src, parser.SourceLoc{LineNo: 1})
	if perr != nil {
		return nil, &CompileError{Name: name, Line: perr.LineNumber(), Msg: cleanMsg(perr.Error())}
	}
	if cerr := e.check(root); cerr != nil {
		cerr.Name = name
		return nil, cerr
	}
	return &Template{name: name, root: root, engine: e}, nil
}

// MustCompile is like Compile but panics on error. It is meant for templates
// embedded in the program.
func (e *Engine) MustCompile(name, src string) *Template {
	t, err := e.Compile(name, src)
	if err != nil {
		panic(err)
	}
	return t
}

// Render renders t with bindings (plain Go values as decoded from JSON:
// map[string]any, []any, string, float64, bool, nil). Every string in
// bindings is HTML-escaped (see Escape) before the template sees it; map keys
// are not. Exceeding a bound returns a *LimitError naming it; other template
// errors return a *RenderError; a panic inside the library is recovered into
// an error. Render is safe for concurrent use.
func (t *Template) Render(bindings map[string]any) (string, error) {
	return t.render(bindings, nil)
}

// RenderBudget is Render charged to b: the render stops when b.Steps run
// out (a *LimitError with Bound "Budget"), and the steps it took, whether
// it succeeds or fails, are taken from b.Steps. A Budget is not safe for
// concurrent use.
func (t *Template) RenderBudget(b *Budget, bindings map[string]any) (string, error) {
	return t.render(bindings, b)
}

func (t *Template) render(bindings map[string]any, b *Budget) (out string, err error) {
	e := t.engine
	env := e.envs.Get().(*renderEnv)
	st := env.st
	st.reset(e.limits, time.Now(), b)
	defer func() {
		if r := recover(); r != nil {
			out = ""
			if st.err != nil {
				err = st.err
			} else {
				// The library's rethrown panics carry the goroutine's
				// stack after the first line: keep it out of the message.
				msg, _, _ := strings.Cut(fmt.Sprint(r), "\n")
				err = &RenderError{Name: t.name, Msg: "internal error while rendering: " + msg}
			}
		}
		if b != nil {
			b.Steps -= min(st.steps, st.maxSteps)
		}
		st.release()
		e.envs.Put(env)
	}()

	vars := make(map[string]any, len(bindings)+1)
	for k, v := range bindings {
		vars[k] = Escape(v)
	}
	vars[stateKey] = st
	w := &limitWriter{st: st, max: e.limits.MaxOutputBytes, bound: "MaxOutputBytes"}
	rerr := render.Render(t.root, w, vars, env.cfg)
	if st.err != nil {
		return "", st.err
	}
	if rerr != nil {
		return "", t.renderError(rerr)
	}
	return w.buf.String(), nil
}

func (t *Template) renderError(rerr render.Error) error {
	var le *LimitError
	if errors.As(rerr, &le) {
		return le
	}
	msg := cleanMsg(rerr.Error())
	// The library appends " in <source>"; keep it, it shows the agent where.
	return &RenderError{Name: t.name, Line: rerr.LineNumber(), Msg: msg}
}

// limitWriter collects output up to max bytes. Past max, or once the render
// has failed or run out of time, Write returns the render's *LimitError, which
// stops the render at the next node.
type limitWriter struct {
	st    *renderState
	buf   bytes.Buffer
	max   int
	bound string
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if err := w.st.stepData(len(p)); err != nil {
		return 0, err
	}
	if w.buf.Len()+len(p) > w.max {
		return 0, w.st.fail(w.bound, int64(w.max), fmt.Sprintf("output would exceed %d bytes", w.max))
	}
	return w.buf.Write(p)
}

func (w *limitWriter) String() string { return w.buf.String() }

// stripStrings blanks out the contents of quoted string literals in an
// expression so that scans for ranges and filter names see only code.
func stripStrings(s string) string {
	if !strings.ContainsAny(s, `"'`) {
		return s
	}
	b := []byte(s)
	var quote byte
	for i, c := range b {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		case c == '"' || c == '\'':
			quote = c
		}
	}
	return string(b)
}
