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
		if err := st.check(); err != nil {
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
		if err := st.check(); err != nil {
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
			if err := st.check(); err != nil {
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
		if err := st.check(); err != nil {
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
	loop := stmt.Loop
	var elseBody *render.BlockNode
	switch {
	case len(node.Clauses) > 1:
		return nil, fmt.Errorf("%s accepts at most one else clause", node.Name)
	case len(node.Clauses) == 1:
		elseBody = node.Clauses[0]
	}
	table := node.Name == "tablerow"
	if !table && loop.Cols != nil {
		return nil, errors.New("cols: is only for tablerow")
	}
	return func(w io.Writer, ctx render.Context) error {
		st, err := stateOf(ctx)
		if err != nil {
			return err
		}
		if err := st.check(); err != nil {
			return err
		}
		v, err := ctx.Evaluate(loop.Expr)
		if st.err != nil {
			return st.err
		}
		if err != nil {
			return err
		}
		it := makeIter(v)
		length := 0
		if it != nil {
			length = max(it.Len(), 0)
		}
		start := 0
		if loop.Offset != nil {
			ov, err := ctx.Evaluate(loop.Offset)
			if err != nil {
				return err
			}
			off, ok := toInt(ov)
			if !ok {
				return ctx.Errorf("for: offset must be an integer, got %v", ov)
			}
			start = min(max(off, 0), length)
		}
		n := length - start
		if loop.Limit != nil {
			lv, err := ctx.Evaluate(loop.Limit)
			if err != nil {
				return err
			}
			lim, ok := toInt(lv)
			if !ok {
				return ctx.Errorf("for: limit must be an integer, got %v", lv)
			}
			n = min(max(lim, 0), n)
		}
		cols := math.MaxInt32
		if table && loop.Cols != nil {
			cv, err := ctx.Evaluate(loop.Cols)
			if err != nil {
				return err
			}
			c, ok := toInt(cv)
			if !ok {
				return ctx.Errorf("tablerow: cols must be an integer, got %v", cv)
			}
			if c > 0 {
				cols = c
			}
		}
		if n == 0 {
			if elseBody != nil {
				return ctx.RenderBlock(w, elseBody)
			}
			return nil
		}

		parent := ctx.Get(forloopName)
		defer func(fl, item any) {
			ctx.Set(forloopName, fl)
			ctx.Set(loop.Variable, item)
		}(parent, ctx.Get(loop.Variable))
		// One forloop object per loop, updated in place on each iteration
		// (as LiquidJS's forloop drop is): allocating a fresh map per
		// iteration tripled the cost of a loop.
		fl := map[string]any{"length": n, "parentloop": parent, ".cycles": map[string]int{}}
		for i := 0; i < n; i++ {
			if err := st.iterate(); err != nil {
				return err
			}
			idx := start + i
			if loop.Reversed {
				idx = start + n - 1 - i
			}
			ctx.Set(loop.Variable, it.Index(idx))
			fl["first"] = i == 0
			fl["last"] = i == n-1
			fl["index"] = i + 1
			fl["index0"] = i
			fl["rindex"] = n - i
			fl["rindex0"] = n - i - 1
			if table {
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
				if _, err := fmt.Fprintf(w, `<td class="col%d">`, i%cols+1); err != nil {
					return err
				}
			}
			ctx.Set(forloopName, fl)
			rerr := ctx.RenderChildren(w)
			if st.err != nil {
				return st.err
			}
			if table {
				if _, err := io.WriteString(w, `</td>`); err != nil {
					return err
				}
				if (i+1)%cols == 0 || i == n-1 {
					if _, err := io.WriteString(w, `</tr>`); err != nil {
						return err
					}
				}
			}
			if rerr != nil {
				switch rerr.Cause() {
				case errBreak:
					return nil
				case errContinue:
					continue
				}
				return rerr
			}
		}
		return nil
	}, nil
}
