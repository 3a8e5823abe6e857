package safeliquid

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/osteele/liquid/render"
)

var (
	// A literal range such as (1..20000000) after string literals are blanked.
	literalRangeRE = regexp.MustCompile(`\(\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*\)`)
	// A filter application: "| name".
	filterRE = regexp.MustCompile(`\|\s*([A-Za-z_][A-Za-z0-9_-]*\??)`)
)

// check walks a compiled template and refuses what the limits forbid up
// front: block nesting deeper than MaxDepth, unknown filters (which the
// library would only report when rendering), and literal ranges longer than
// MaxIterations.
func (e *Engine) check(root render.Node) *CompileError {
	return e.checkNode(root, 0)
}

func (e *Engine) checkNode(n render.Node, depth int) *CompileError {
	switch n := n.(type) {
	case *render.SeqNode:
		for _, c := range n.Children {
			if err := e.checkNode(c, depth); err != nil {
				return err
			}
		}
	case *render.BlockNode:
		depth++
		if depth > e.limits.MaxDepth {
			return &CompileError{Line: n.SourceLoc.LineNo, Msg: fmt.Sprintf(
				"blocks are nested %d deep here; the limit is %d", depth, e.limits.MaxDepth)}
		}
		if err := e.checkBlock(n, depth); err != nil {
			return err
		}
		for _, c := range n.Clauses {
			if err := e.checkBlock(c, depth); err != nil {
				return err
			}
		}
	case *render.TagNode:
		return e.checkArgs(n.Name, n.Args, n.SourceLoc.LineNo)
	case *render.ObjectNode:
		return e.checkArgs("", n.Args, n.SourceLoc.LineNo)
	}
	return nil
}

func (e *Engine) checkBlock(b *render.BlockNode, depth int) *CompileError {
	if err := e.checkArgs(b.Name, b.Args, b.SourceLoc.LineNo); err != nil {
		return err
	}
	for _, c := range b.Body {
		if err := e.checkNode(c, depth); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) checkArgs(tag, args string, line int) *CompileError {
	if tag == "capture" || tag == "comment" || tag == "raw" || args == "" {
		return nil
	}
	code := stripStrings(args)
	for _, m := range literalRangeRE.FindAllStringSubmatch(code, -1) {
		a, errA := strconv.ParseInt(m[1], 10, 64)
		b, errB := strconv.ParseInt(m[2], 10, 64)
		if errA != nil || errB != nil || b-a+1 > int64(e.limits.MaxIterations) || b-a+1 < -int64(e.limits.MaxIterations) {
			return &CompileError{Line: line, Msg: fmt.Sprintf(
				"range %s has more than %d elements; the limit on loop iterations per render is %d",
				strings.TrimSpace(m[0]), e.limits.MaxIterations, e.limits.MaxIterations)}
		}
	}
	for _, m := range filterRE.FindAllStringSubmatch(code, -1) {
		if !e.filterNames[m[1]] {
			return &CompileError{Line: line, Msg: fmt.Sprintf(
				"unknown filter %q; the filters are: %s", m[1], strings.Join(slices.Sorted(maps.Keys(e.filterNames)), ", "))}
		}
	}
	return nil
}
