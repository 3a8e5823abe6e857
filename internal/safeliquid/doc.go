// Package safeliquid is a hardened Liquid engine for templates written by
// agents and rendered for reviewers. It is built on
// github.com/osteele/liquid v1.6.0 (Shopify's dialect) but defines every tag
// itself and wraps every filter, so that a template can neither read files,
// nor hang, nor exhaust memory, nor crash the process.
//
//	e := safeliquid.New(safeliquid.Limits{}) // zero fields take defaults
//	t, err := e.Compile("rowTemplate", src)   // *CompileError with Line
//	html, err := t.Render(map[string]any{"option": opt}) // *LimitError, *RenderError
//
// # Escaping
//
// Render passes every string in its bindings through Escape
// (html.EscapeString) before the template sees it, so data never become
// markup by accident. Map keys are not escaped in bindings (templates look
// values up by them); a for loop over a map yields its keys escaped. One
// residual: {{ obj }} on a whole map prints Go's map syntax with its keys as
// they are.
//
// Escaping is not a sandbox. A template author can turn escaped data back
// into markup with these standard filters, and no other: replace and
// replace_first (replace: "&lt;", "<"), url_decode (data that arrive
// percent-encoded are not HTML-escaped, so %3C becomes <), and the filters
// that splice in template literals (append, prepend, join, newline_to_br).
// remove, remove_first, slice and truncate can cut an entity in half but
// cannot produce a raw '<'. No decoding filter beyond the standard ones is
// offered (no base64_decode, no unescape). Output is meant to be shown only
// inside a sandboxed iframe, which is what makes any markup inert.
//
// # Bounds
//
// The library's render.Render takes no context and cannot be cancelled, so
// the bounds live inside the engine. They count work, not time, so that a
// template stops at the same point on every machine, however slow or busy:
//
//   - Compile refuses sources over MaxSourceBytes, the include, render and
//     layout tags (nothing can read a file or another template), unknown
//     filters, blocks nested deeper than MaxDepth, and literal ranges such as
//     (1..20000000) longer than MaxIterations.
//   - Every tag, every loop iteration, every filter call and every write of
//     output is a step, counted against MaxSteps; a filter call and a write
//     count one more step per 256 bytes of string they are given (an array
//     element weighs 64 bytes), so a step's cost is bounded however large
//     the data. A Budget shares steps between renders (RenderBudget): the
//     review page gives one to all the renders of a page.
//   - for and tablerow count every iteration against MaxIterations (total
//     per render, across nested loops).
//   - Every filter refuses a result over MaxStringBytes (an array over
//     MaxIterations elements) and charges what it built to MaxTotalBytes;
//     filters whose result can dwarf their input (replace, join, concat,
//     json, newline_to_br) check the size before building it. A range passed
//     to a filter is refused before the library expands it into an array.
//   - assign refuses strings over MaxStringBytes; capture writes into a
//     buffer capped at MaxStringBytes.
//   - Output goes through a writer that fails past MaxOutputBytes, which
//     stops the render at the next node.
//   - Last, a guard in time: every step checks MaxDuration of wall-clock time
//     from the start of Render (default 5 s, far above what the other bounds
//     allow on an idle machine). It is there for a step whose data make it
//     slow (an expression comparing large strings is one step), not to
//     decide what a template may do.
//
// The first bound exceeded is returned as a *LimitError naming it. The
// per-render state (counters, deadline) lives in a configuration taken from
// a pool for the length of one render, never shared by two renders at once.
// A panic inside the library is recovered into an error.
//
// # Differences from LiquidJS
//
// Templates from the seed that stay within the common tags and filters work
// unchanged. These are the differences their authors will meet:
//
//   - Data are already HTML-escaped. escape therefore behaves like
//     escape_once ({{ x | escape }} does not double-escape), and comparing
//     a value with a literal that contains <, >, &, ' or " must use the
//     escaped form (option.kind == "a&amp;b").
//   - Tags: assign, capture, case/when/else, comment, raw, for/else (with
//     limit:, offset:, reversed, break, continue, cycle), if/elsif/else,
//     unless/else, tablerow (cols:). Not available: include, render, layout
//     (refused), and LiquidJS's echo, liquid, increment, decrement,
//     ifchanged, block and the {% # %} inline comment (unknown tags).
//   - Filters: abs, append, at_least, at_most, capitalize, ceil, compact,
//     concat, date, default, divided_by, downcase, escape, escape_once,
//     first, floor, inspect, join, json, last, lstrip, map, minus, modulo,
//     newline_to_br, plus, prepend, remove, remove_first, replace,
//     replace_first, reverse, round, rstrip, size, slice, sort,
//     sort_natural, split, strip, strip_html, strip_newlines, times,
//     truncate, truncatewords, uniq, upcase, url_decode, url_encode, where.
//     Any other filter (where_exp, find, group_by, sum, push, base64_*,
//     default's allow_false, …) is a compile error, where LiquidJS by
//     default ignores an unknown filter.
//   - Numbers from JSON are float64. They print as LiquidJS prints them
//     (2, not 2.0), and limit:/offset:/cols: accept them, but a range
//     (1..n) needs an integer: n from data must be converted first
//     ({% assign m = n | floor %}{% for i in (1..m) %}).
//   - divided_by with an integer literal divisor truncates
//     ({{ 7 | divided_by: 2 }} is 3), as in Shopify Liquid; LiquidJS gives
//     3.5. Divide by 2.0 for a fraction.
//   - for over an object yields [key, value] pairs in sorted key order
//     (JSON objects carry no order); LiquidJS uses insertion order.
//   - forloop has index, index0, rindex, rindex0, first, last, length and
//     parentloop (not name); inside tablerow also col, col0, row,
//     col_first, col_last. It is one object updated on each iteration.
//   - for applies offset, then limit, then reversed (as LiquidJS and
//     Shopify do).
//   - date uses strftime through github.com/osteele/tuesday and parses its
//     input with the library's date parser; it takes no time-zone argument.
//     Dates print in UTC unless the input carries an offset.
//   - truncatewords joins the kept words with single spaces.
//   - {{ array }} prints the elements run together, {{ object }} prints Go
//     map syntax (LiquidJS prints [object Object]); use json or map/join.
//   - Errors: undefined variables render as empty (as in LiquidJS); a
//     filter given a value it cannot convert is a *RenderError with the
//     line, where LiquidJS often renders nothing.
package safeliquid
