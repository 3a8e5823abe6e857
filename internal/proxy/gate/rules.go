package gate

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// needsConfirmation reports why a call needs a human's approval, or "" when
// it does not: "always", "destructive" (the tool's annotations, under
// policies.confirm_destructive) or "argument <field>".
func needsConfirmation(c *config.Confirm, destructivePolicy bool, t Tool, args map[string]any) string {
	if c != nil && c.Always {
		return "always"
	}
	if destructivePolicy && t.Destructive() {
		return "destructive"
	}
	if c == nil {
		return ""
	}
	for _, cond := range c.Arguments {
		if holds(cond, args[cond.Field], fieldPresent(args, cond.Field)) {
			return "argument " + cond.Field
		}
	}
	return ""
}

func fieldPresent(args map[string]any, f string) bool {
	v, ok := args[f]
	return ok && !blank(v)
}

func blank(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func holds(c config.Condition, v any, present bool) bool {
	switch {
	case c.Present:
		return present
	case c.Matches != nil:
		s, ok := v.(string)
		return ok && c.Matches.MatchString(s)
	case len(c.Equals) > 0:
		for _, want := range c.Equals {
			if equal(v, want) {
				return true
			}
		}
		return false
	case c.Above != nil || c.Below != nil:
		f, ok := number(v)
		if !ok {
			return false
		}
		return (c.Above == nil || f > *c.Above) && (c.Below == nil || f < *c.Below)
	}
	return false
}

// equal compares an argument with a configured YAML scalar: numbers as
// numbers, strings and booleans exactly.
func equal(v, want any) bool {
	if wf, ok := number(want); ok {
		f, ok := number(v)
		return ok && f == wf
	}
	switch w := want.(type) {
	case string:
		s, ok := v.(string)
		return ok && s == w
	case bool:
		b, ok := v.(bool)
		return ok && b == w
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

// ambiguous reports whether the configured field is ambiguous: a string
// shorter than query_min_length runes once trimmed, or one of the generic
// terms (trimmed, ignoring case). An absent or non-string field is not
// ambiguous (the required-field checks own absence).
func ambiguous(a *config.Ambiguity, args map[string]any) bool {
	if !a.Active() {
		return false
	}
	s, ok := args[a.Field].(string)
	if !ok {
		return false
	}
	s = strings.TrimSpace(s)
	if a.QueryMinLength > 0 && len([]rune(s)) < a.QueryMinLength {
		return true
	}
	for _, g := range a.GenericTerms {
		if strings.EqualFold(strings.TrimSpace(g), s) {
			return true
		}
	}
	return false
}

// ambiguityHint tells the human and the agent what a good value looks like.
func ambiguityHint(a *config.Ambiguity) string {
	var parts []string
	if a.QueryMinLength > 0 {
		parts = append(parts, "at least "+strconv.Itoa(a.QueryMinLength)+" characters")
	}
	if len(a.GenericTerms) > 0 {
		parts = append(parts, "not a generic term ("+strings.Join(a.GenericTerms, ", ")+")")
	}
	return strings.Join(parts, " and ")
}
