package safeliquid

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	e "github.com/osteele/liquid/expressions"
	"github.com/osteele/liquid/render"
	"github.com/osteele/liquid/values"
)

// addTags defines the tags the engine accepts. Every tag is implemented
// here (none comes from the library's tags package) so that each one checks
// the render's budget, loops count iterations, and include/render fail at
// Compile.
func addTags(c *render.Config) {
	c.AddTag("assign", assignTag)
	c.AddTag("break", breakTag)
	c.AddTag("continue", continueTag)
	c.AddTag("cycle", cycleTag)
	c.AddTag("include", refusedTag("include"))
	c.AddTag("render", refusedTag("render"))
	c.AddTag("layout", refusedTag("layout"))
	c.AddBlock("capture").Compiler(captureCompiler)
	c.AddBlock("case").Clause("when").Clause("else").Compiler(caseCompiler)
	c.AddBlock("comment")
	c.AddBlock("for").Clause("else").Compiler(loopCompiler)
	c.AddBlock("if").Clause("else").Clause("elsif").Compiler(ifCompiler(true))
	c.AddBlock("raw")
	c.AddBlock("tablerow").Compiler(loopCompiler)
	c.AddBlock("unless").Clause("else").Compiler(ifCompiler(false))
}

type renderFunc = func(io.Writer, render.Context) error

func refusedTag(name string) render.TagCompiler {
	return func(string) (renderFunc, error) {
		return nil, fmt.Errorf("the %q tag is not supported: templates cannot read files or other templates; put the content in this template", name)
	}
}

var (
	errBreak    = errors.New("break outside a for loop")
	errContinue = errors.New("continue outside a for loop")
)

func breakTag(string) (renderFunc, error) {
	return func(_ io.Writer, ctx render.Context) error { return ctx.WrapError(errBreak) }, nil
}

func continueTag(string) (renderFunc, error) {
	return func(_ io.Writer, ctx render.Context) error { return ctx.WrapError(errContinue) }, nil
}

func assignTag(args string) (renderFunc, error) {
	stmt, err := e.ParseStatement(e.AssignStatementSelector, args)
	if err != nil {
		return nil, err
	}
	name, expr := stmt.Assignment.Variable, stmt.Assignment.ValueFn
	return func(_ io.Writer, ctx render.Context) error {
		st, err := stateOf(ctx)
		if err != nil {
			return err
		}
		if err := st.step(); err != nil {
			return err
		}
		v, err := ctx.Evaluate(expr)
		if st.err != nil {
			return st.err
		}
		if err != nil {
			return err
		}
		if s, ok := v.(string); ok {
			if err := st.checkString("assign", len(s)); err != nil {
				return err
			}
		}
		ctx.Set(name, v)
		return nil
	}, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*\??$`)

func captureCompiler(node render.BlockNode) (renderFunc, error) {
	name := strings.TrimSpace(node.Args)
	if len(name) >= 2 && (name[0] == '"' || name[0] == '\'') && name[len(name)-1] == name[0] {
		name = name[1 : len(name)-1]
	}
	if !identRE.MatchString(name) {
		return nil, fmt.Errorf("capture needs a variable name, like {%% capture summary %%}; got %q", node.Args)
	}
	return func(_ io.Writer, ctx render.Context) error {
		st, err := stateOf(ctx)
		if err != nil {
			return err
		}
		if err := st.step(); err != nil {
			return err
		}
		cw := &limitWriter{st: st, max: st.lim.MaxStringBytes, bound: "MaxStringBytes"}
		rerr := ctx.RenderChildren(cw)
		if st.err != nil {
			return st.err
		}
		if rerr != nil {
			return rerr
		}
		if err := st.charge(cw.buf.Len()); err != nil {
			return err
		}
		ctx.Set(name, cw.String())
		return nil
	}, nil
}

func ifCompiler(polarity bool) render.BlockCompiler {
	return func(node render.BlockNode) (renderFunc, error) {
		type branch struct {
			test e.Expression
			body *render.BlockNode
		}
		expr, err := e.Parse(node.Args)
		if err != nil {
			return nil, err
		}
		if !polarity {
			expr = e.Not(expr)
		}
		branches := []branch{{expr, &node}}
		for i, c := range node.Clauses {
			test := e.Constant(true)
			switch c.Name {
			case "else":
				if i != len(node.Clauses)-1 {
					return nil, fmt.Errorf("else must be the last clause of %s", node.Name)
				}
			case "elsif":
				if t, err := e.Parse(c.Args); err != nil {
					return nil, err
				} else {
					test = t
				}
			}
			branches = append(branches, branch{test, c})
		}
		return func(w io.Writer, ctx render.Context) error {
			st, err := stateOf(ctx)
			if err != nil {
				return err
			}
			if err := st.step(); err != nil {
				return err
			}
			for _, b := range branches {
				v, err := ctx.Evaluate(b.test)
				if st.err != nil {
					return st.err
				}
				if err != nil {
					return err
				}
				if v != nil && v != false {
					return ctx.RenderBlock(w, b.body)
				}
			}
			return nil
		}, nil
	}
}

func caseCompiler(node render.BlockNode) (renderFunc, error) {
	type clause struct {
		exprs []e.Expression // nil for else
		body  *render.BlockNode
	}
	expr, err := e.Parse(node.Args)
	if err != nil {
		return nil, err
	}
	var clauses []clause
	for _, c := range node.Clauses {
		switch c.Name {
		case "when":
			stmt, err := e.ParseStatement(e.WhenStatementSelector, c.Args)
			if err != nil {
				return nil, err
			}
			clauses = append(clauses, clause{stmt.When.Exprs, c})
		default:
			clauses = append(clauses, clause{nil, c})
		}
	}
	return func(w io.Writer, ctx render.Context) error {
		st, err := stateOf(ctx)
		if err != nil {
			return err
		}
		if err := st.step(); err != nil {
			return err
		}
		sel, err := ctx.Evaluate(expr)
		if err != nil {
			return err
		}
		for _, c := range clauses {
			if c.exprs == nil {
				return ctx.RenderBlock(w, c.body)
			}
			for _, x := range c.exprs {
				v, err := ctx.Evaluate(x)
				if st.err != nil {
					return st.err
				}
				if err != nil {
					return err
				}
				if values.Equal(sel, v) {
					return ctx.RenderBlock(w, c.body)
				}
			}
		}
		return nil
	}, nil
}

const forloopName = "forloop"

func cycleTag(args string) (renderFunc, error) {
	stmt, err := e.ParseStatement(e.CycleStatementSelector, args)
	if err != nil {
		return nil, err
	}
	group, vals := stmt.Cycle.Group, stmt.Cycle.Values
	if len(vals) == 0 {
		return nil, errors.New("cycle needs at least one value")
	}
	return func(w io.Writer, ctx render.Context) error {
		loop, _ := ctx.Get(forloopName).(map[string]any)
		cycles, _ := loop[".cycles"].(map[string]int)
		if cycles == nil {
			return ctx.Errorf("cycle must be inside a for loop")
		}
		n := cycles[group]
		cycles[group] = n + 1
		_, err := io.WriteString(w, vals[n%len(vals)])
		return err
	}, nil
}

// iterable is what a loop walks: values.Range and the wrappers below.
type iterable interface {
	Len() int
	Index(int) any
}

type sliceIter reflect.Value

func (s sliceIter) Len() int        { return reflect.Value(s).Len() }
func (s sliceIter) Index(i int) any { return reflect.Value(s).Index(i).Interface() }

type pairIter struct {
	keys []string
	m    reflect.Value
}

func (p pairIter) Len() int { return len(p.keys) }
func (p pairIter) Index(i int) any {
	// Keys are not escaped in bindings (lookups need them verbatim); escape
	// them here, where they become data.
	k := p.keys[i]
	return []any{html.EscapeString(k), p.m.MapIndex(reflect.ValueOf(k)).Interface()}
}

func makeIter(v any) iterable {
	if v == nil {
		return nil
	}
	if it, ok := v.(iterable); ok {
		return it
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return sliceIter(rv)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return pairIter{keys, rv}
	}
	return nil
}

// toInt accepts template ints and the float64s that JSON data decode to.
func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int(n), true
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
			return i, true
		}
	}
	return 0, false
}

func loopCompiler(node render.BlockNode) (renderFunc, error) {
	stmt, err := e.ParseStatement(e.LoopStatementSelector, node.Args)
	if err != nil {
		return nil, err
	}
	l := &forLoop{loop: stmt.Loop, table: node.Name == "tablerow"}
	switch {
	case len(node.Clauses) > 1:
		return nil, fmt.Errorf("%s accepts at most one else clause", node.Name)
	case len(node.Clauses) == 1:
		l.elseBody = node.Clauses[0]
	}
	if !l.table && l.loop.Cols != nil {
		return nil, errors.New("cols: is only for tablerow")
	}
	return l.render, nil
}

// forLoop is a compiled for or tablerow tag.
type forLoop struct {
	loop     e.Loop
	elseBody *render.BlockNode
	table    bool
}

// loopRange is what one render of a loop walks: n items of it from start,
// cols to a table row.
type loopRange struct {
	it             iterable
	start, n, cols int
}

func (l *forLoop) render(w io.Writer, ctx render.Context) error {
	st, err := stateOf(ctx)
	if err != nil {
		return err
	}
	if err := st.step(); err != nil {
		return err
	}
	r, err := l.bounds(ctx, st)
	if err != nil {
		return err
	}
	if r.n == 0 {
		if l.elseBody != nil {
			return ctx.RenderBlock(w, l.elseBody)
		}
		return nil
	}

	parent := ctx.Get(forloopName)
	defer func(fl, item any) {
		ctx.Set(forloopName, fl)
		ctx.Set(l.loop.Variable, item)
	}(parent, ctx.Get(l.loop.Variable))
	// One forloop object per loop, updated in place on each iteration
	// (as LiquidJS's forloop drop is): allocating a fresh map per
	// iteration tripled the cost of a loop.
	fl := map[string]any{"length": r.n, "parentloop": parent, ".cycles": map[string]int{}}
	for i := 0; i < r.n; i++ {
		if err := st.iterate(); err != nil {
			return err
		}
		idx := r.start + i
		if l.loop.Reversed {
			idx = r.start + r.n - 1 - i
		}
		ctx.Set(l.loop.Variable, r.it.Index(idx))
		stop, err := l.iteration(w, ctx, st, fl, r, i)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// bounds evaluates the loop's collection and its offset, limit and cols.
func (l *forLoop) bounds(ctx render.Context, st *renderState) (loopRange, error) {
	v, err := ctx.Evaluate(l.loop.Expr)
	if st.err != nil {
		return loopRange{}, st.err
	}
	if err != nil {
		return loopRange{}, err
	}
	r := loopRange{it: makeIter(v), cols: math.MaxInt32}
	length := 0
	if r.it != nil {
		length = max(r.it.Len(), 0)
	}
	off, ok, err := intArg(ctx, l.loop.Offset, "for: offset")
	if err != nil {
		return loopRange{}, err
	}
	if ok {
		r.start = min(max(off, 0), length)
	}
	r.n = length - r.start
	lim, ok, err := intArg(ctx, l.loop.Limit, "for: limit")
	if err != nil {
		return loopRange{}, err
	}
	if ok {
		r.n = min(max(lim, 0), r.n)
	}
	if l.table {
		c, ok, err := intArg(ctx, l.loop.Cols, "tablerow: cols")
		if err != nil {
			return loopRange{}, err
		}
		if ok && c > 0 {
			r.cols = c
		}
	}
	return r, nil
}

// intArg evaluates a loop modifier that must be an integer; ok is false
// when the loop has none.
func intArg(ctx render.Context, expr e.Expression, what string) (n int, ok bool, err error) {
	if expr == nil {
		return 0, false, nil
	}
	v, err := ctx.Evaluate(expr)
	if err != nil {
		return 0, false, err
	}
	n, ok = toInt(v)
	if !ok {
		return 0, false, ctx.Errorf("%s must be an integer, got %v", what, v)
	}
	return n, true, nil
}

// iteration renders the body once, as item i of r: stop is true after a
// break.
func (l *forLoop) iteration(w io.Writer, ctx render.Context, st *renderState, fl map[string]any, r loopRange, i int) (stop bool, err error) {
	n, cols := r.n, r.cols
	fl["first"] = i == 0
	fl["last"] = i == n-1
	fl["index"] = i + 1
	fl["index0"] = i
	fl["rindex"] = n - i
	fl["rindex0"] = n - i - 1
	if l.table {
		if err := openCell(w, fl, i, n, cols); err != nil {
			return false, err
		}
	}
	ctx.Set(forloopName, fl)
	rerr := ctx.RenderChildren(w)
	if st.err != nil {
		return false, st.err
	}
	if l.table {
		if err := closeCell(w, i, n, cols); err != nil {
			return false, err
		}
	}
	if rerr != nil {
		switch rerr.Cause() {
		case errBreak:
			return true, nil
		case errContinue:
			return false, nil
		}
		return false, rerr
	}
	return false, nil
}

// openCell sets a tablerow's column variables for item i and opens its
// cell (and its row, at a row's first column).
func openCell(w io.Writer, fl map[string]any, i, n, cols int) error {
	fl["col"] = i%cols + 1
	fl["col0"] = i % cols
	fl["row"] = i/cols + 1
	fl["col_first"] = i%cols == 0
	fl["col_last"] = i%cols == cols-1 || i == n-1
	if i%cols == 0 {
		if _, err := fmt.Fprintf(w, `<tr class="row%d">`, i/cols+1); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, `<td class="col%d">`, i%cols+1)
	return err
}

// closeCell closes item i's cell (and its row, at a row's last column or
// the last item).
func closeCell(w io.Writer, i, n, cols int) error {
	if _, err := io.WriteString(w, `</td>`); err != nil {
		return err
	}
	if (i+1)%cols == 0 || i == n-1 {
		_, err := io.WriteString(w, `</tr>`)
		return err
	}
	return nil
}
