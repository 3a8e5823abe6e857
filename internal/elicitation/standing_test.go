package elicitation

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

func raws(vs ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = json.RawMessage(v)
	}
	return out
}

// gateContext is a context as the proxy's gate writes it (its view).
const gateContext = `{"tool":"deploy","arguments":{"env":"staging","replicas":3,"path":"/srv/api/v2","opts":{"b":1,"a":[1,2]}},"argumentsDigest":"sha256:x"}`

func TestConstraintHolds(t *testing.T) {
	t.Parallel()
	doc, _ := decodeContext(json.RawMessage(gateContext))
	path := func(p ...string) []string { return append([]string{"arguments"}, p...) }
	for _, tc := range []struct {
		name string
		c    Constraint
		want bool
	}{
		{"equal string", Constraint{Path: path("env"), Op: ConstraintEqual, Values: raws(`"staging"`)}, true},
		{"equal other string", Constraint{Path: path("env"), Op: ConstraintEqual, Values: raws(`"production"`)}, false},
		{"equal number written otherwise", Constraint{Path: path("replicas"), Op: ConstraintEqual, Values: raws(`3.0`)}, true},
		{"equal number is not its string", Constraint{Path: path("replicas"), Op: ConstraintEqual, Values: raws(`"3"`)}, false},
		{"equal object, keys in another order", Constraint{Path: path("opts"), Op: ConstraintEqual, Values: raws(`{"a":[1,2],"b":1}`)}, true},
		{"equal object, another array order", Constraint{Path: path("opts"), Op: ConstraintEqual, Values: raws(`{"a":[2,1],"b":1}`)}, false},
		{"one of", Constraint{Path: path("env"), Op: ConstraintOneOf, Values: raws(`"dev"`, `"staging"`)}, true},
		{"none of", Constraint{Path: path("env"), Op: ConstraintOneOf, Values: raws(`"dev"`, `"qa"`)}, false},
		{"range within", Constraint{Path: path("replicas"), Op: ConstraintRange, Min: f64(1), Max: f64(3)}, true},
		{"range above", Constraint{Path: path("replicas"), Op: ConstraintRange, Max: f64(2)}, false},
		{"range below", Constraint{Path: path("replicas"), Op: ConstraintRange, Min: f64(4)}, false},
		{"range of a string", Constraint{Path: path("env"), Op: ConstraintRange, Min: f64(0)}, false},
		{"prefix", Constraint{Path: path("path"), Op: ConstraintPrefix, Prefix: "/srv/api/"}, true},
		{"other prefix", Constraint{Path: path("path"), Op: ConstraintPrefix, Prefix: "/srv/db/"}, false},
		{"prefix of a number", Constraint{Path: path("replicas"), Op: ConstraintPrefix, Prefix: "3"}, false},
		{"absent field", Constraint{Path: path("region"), Op: ConstraintEqual, Values: raws(`null`)}, false},
		{"field within a string", Constraint{Path: path("env", "x"), Op: ConstraintEqual, Values: raws(`1`)}, false},
		{"top-level tool", Constraint{Path: []string{"tool"}, Op: ConstraintEqual, Values: raws(`"deploy"`)}, true},
		{"unknown op", Constraint{Path: path("env"), Op: "like", Values: raws(`"staging"`)}, false},
	} {
		if got := tc.c.holds(doc); got != tc.want {
			t.Errorf("%s: holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestConstraintCheck(t *testing.T) {
	t.Parallel()
	env := []string{"arguments", "env"}
	deep := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	many := make([]json.RawMessage, MaxConstraintValues+1)
	for i := range many {
		many[i] = json.RawMessage(`1`)
	}
	for _, tc := range []struct {
		name string
		c    Constraint
		want string // "" valid, else a part of the message
	}{
		{"equal", Constraint{Path: env, Op: ConstraintEqual, Values: raws(`"x"`)}, ""},
		{"one of", Constraint{Path: env, Op: ConstraintOneOf, Values: raws(`"x"`, `"y"`)}, ""},
		{"range", Constraint{Path: env, Op: ConstraintRange, Min: f64(1)}, ""},
		{"prefix", Constraint{Path: env, Op: ConstraintPrefix, Prefix: "/srv/"}, ""},
		{"no path", Constraint{Op: ConstraintEqual, Values: raws(`1`)}, "names no field"},
		{"too deep", Constraint{Path: deep, Op: ConstraintEqual, Values: raws(`1`)}, "names no field"},
		{"empty field name", Constraint{Path: []string{"arguments", ""}, Op: ConstraintEqual, Values: raws(`1`)}, "field name is empty"},
		{"equal of two", Constraint{Path: env, Op: ConstraintEqual, Values: raws(`1`, `2`)}, "exactly one value"},
		{"equal of none", Constraint{Path: env, Op: ConstraintEqual}, "exactly one value"},
		{"one of too many", Constraint{Path: env, Op: ConstraintOneOf, Values: many}, "1 to 20 values"},
		{"value not JSON", Constraint{Path: env, Op: ConstraintEqual, Values: raws(`{`)}, "not JSON"},
		{"equal with a prefix", Constraint{Path: env, Op: ConstraintEqual, Values: raws(`1`), Prefix: "a"}, "takes values only"},
		{"range of nothing", Constraint{Path: env, Op: ConstraintRange}, "needs a min, a max or both"},
		{"range upside down", Constraint{Path: env, Op: ConstraintRange, Min: f64(5), Max: f64(1)}, "above max"},
		{"range with values", Constraint{Path: env, Op: ConstraintRange, Min: f64(1), Values: raws(`1`)}, "min and max only"},
		{"empty prefix", Constraint{Path: env, Op: ConstraintPrefix}, "1 to 4096 bytes"},
		{"prefix with a range", Constraint{Path: env, Op: ConstraintPrefix, Prefix: "a", Max: f64(1)}, "prefix only"},
		{"unknown op", Constraint{Path: env, Op: "like"}, "not one of equal, oneOf, range, prefix"},
	} {
		err := tc.c.check(0)
		var e *Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (!errors.As(err, &e) || !errors.Is(err, ErrRuleInvalid) || e.Field != "constraints[0]" || !strings.Contains(e.Message, tc.want)):
			t.Errorf("%s: %v, want an invalid constraints[0] saying %q", tc.name, err, tc.want)
		}
	}
}

func TestRuleMatches(t *testing.T) {
	t.Parallel()
	gate := Payload{Context: json.RawMessage(gateContext)}
	plain := Payload{Context: json.RawMessage(`{"service":"api","env":"staging"}`)}
	form := Payload{Context: plain.Context, Schema: &FormSchema{}}
	opts := Payload{Options: []Option{{ID: "a"}, {ID: "b"}}, MinSelections: 1, MaxSelections: 1}
	onEnv := []Constraint{{Path: []string{"arguments", "env"}, Op: ConstraintEqual, Values: raws(`"staging"`)}}
	rule := Rule{Principal: "agent", Kind: KindApproval, Tool: "deploy", Constraints: onEnv}
	for _, tc := range []struct {
		name      string
		r         Rule
		principal string
		kind      Kind
		p         Payload
		want      bool
	}{
		{"the same call", rule, "agent", KindApproval, gate, true},
		{"another principal", rule, "other", KindApproval, gate, false},
		{"another kind", rule, "agent", KindSelection, gate, false},
		{"another tool", Rule{Principal: "agent", Kind: KindApproval, Tool: "destroy", Constraints: onEnv}, "agent", KindApproval, gate, false},
		{"a gate rule on a request that is no gate call", rule, "agent", KindApproval, plain, false},
		{"a plain rule on a gate call", Rule{Principal: "agent", Kind: KindApproval}, "agent", KindApproval, gate, false},
		{"a plain rule", Rule{Principal: "agent", Kind: KindApproval, Constraints: []Constraint{{Path: []string{"service"}, Op: ConstraintPrefix, Prefix: "ap"}}}, "agent", KindApproval, plain, true},
		{"a form to fill", Rule{Principal: "agent", Kind: KindApproval}, "agent", KindApproval, form, false},
		{"a constraint that fails", Rule{Principal: "agent", Kind: KindApproval, Tool: "deploy", Constraints: []Constraint{{Path: []string{"arguments", "env"}, Op: ConstraintEqual, Values: raws(`"prod"`)}}}, "agent", KindApproval, gate, false},
		{"a selection offering the pick", Rule{Principal: "agent", Kind: KindSelection, SelectedIDs: []string{"b"}}, "agent", KindSelection, opts, true},
		{"a selection without the pick", Rule{Principal: "agent", Kind: KindSelection, SelectedIDs: []string{"c"}}, "agent", KindSelection, opts, false},
		{"a selection rule with no pick", Rule{Principal: "agent", Kind: KindSelection}, "agent", KindSelection, opts, false},
		{"no context to constrain", Rule{Principal: "agent", Kind: KindApproval, Constraints: []Constraint{{Path: []string{"x"}, Op: ConstraintEqual, Values: raws(`1`)}}}, "agent", KindApproval, Payload{}, false},
	} {
		if got := tc.r.Matches(tc.principal, tc.kind, tc.p); got != tc.want {
			t.Errorf("%s: Matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRuleLiveAt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := Rule{ExpiresAt: t0.Add(time.Hour), MaxUses: 2, Uses: 1}
	revoked := r
	revoked.RevokedAt = t0
	used := r
	used.Uses = 2
	for _, tc := range []struct {
		r      Rule
		at     time.Time
		live   bool
		status string
	}{
		{r, t0, true, "active"},
		{r, t0.Add(time.Hour), false, "expired"},
		{revoked, t0, false, "revoked"},
		{used, t0, false, "used up"},
	} {
		if tc.r.LiveAt(tc.at) != tc.live || tc.r.StatusAt(tc.at) != tc.status {
			t.Errorf("%+v at %v: live %v %q, want %v %q", tc.r, tc.at, tc.r.LiveAt(tc.at), tc.r.StatusAt(tc.at), tc.live, tc.status)
		}
	}
}

func TestGateTool(t *testing.T) {
	t.Parallel()
	for ctx, want := range map[string]string{
		gateContext:                        "deploy",
		`{"tool":"deploy","arguments":{}}`: "",
		`{"tool":"deploy","arguments":[],"argumentsDigest":"x"}`: "",
		`{"tool":"x","arguments":{"a":1},"argumentsDigest":"d"}`: "x",
		`[]`: "",
		``:   "",
	} {
		if got, _ := GateTool(json.RawMessage(ctx)); got != want {
			t.Errorf("GateTool(%s) = %q, want %q", ctx, got, want)
		}
	}
}

// TestRuleFields: the fields a standing approval holds by default, the
// one choice the review page and Slack make: a gate call's arguments,
// else the context's top-level fields, in name order, at most
// MaxRuleConstraints, none too large to hold.
func TestRuleFields(t *testing.T) {
	t.Parallel()
	var many strings.Builder
	many.WriteString("{")
	for i := range MaxRuleConstraints + 5 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"f%02d":%d`, i, i)
	}
	many.WriteString("}")
	big := `"` + strings.Repeat("x", MaxConstraintBytes) + `"`
	for _, tc := range []struct {
		name, ctx string
		want      []string // paths joined by dots
		whole     bool
	}{
		{"context", `{"version":"1.3","service":"api"}`, []string{"service", "version"}, true},
		{"gate call", gateContext, []string{"arguments.env", "arguments.opts", "arguments.path", "arguments.replicas"}, true},
		{"gate call without arguments", `{"tool":"deploy","arguments":{},"argumentsDigest":"sha256:x"}`, nil, false},
		{"too many", many.String(), func() (out []string) {
			for i := range MaxRuleConstraints {
				out = append(out, fmt.Sprintf("f%02d", i))
			}
			return out
		}(), false},
		{"too large", `{"a":` + big + `,"b":1}`, []string{"b"}, false},
		{"empty", `{}`, nil, false},
		{"not an object", `[1,2]`, nil, false},
		{"none", ``, nil, false},
	} {
		var got []string
		fs, whole := Payload{Context: json.RawMessage(tc.ctx)}.RuleFields()
		if whole != tc.whole {
			t.Errorf("%s: whole %v, want %v", tc.name, whole, tc.whole)
		}
		for _, f := range fs {
			got = append(got, strings.Join(f.Path, "."))
			if _, err := EqualTo(json.RawMessage(tc.ctx), f.Path); err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: fields %v, want %v", tc.name, got, tc.want)
		}
	}
	if fs, _ := (Payload{Context: json.RawMessage(gateContext)}).RuleFields(); string(fs[1].Value) != `{"b":1,"a":[1,2]}` {
		t.Errorf("a value as the request has it: %s", fs[1].Value)
	}
}

// TestStandingOffered: an approval with no form that one approval
// decides may be made standing (StandingOffered); from a notice's
// buttons, only where its default fields hold the whole request
// (StandingInPlace).
func TestStandingOffered(t *testing.T) {
	t.Parallel()
	schema, err := ParseFormSchema(json.RawMessage(`{"type":"object","properties":{"note":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := json.RawMessage(`{"service":"api"}`)
	for _, tc := range []struct {
		name             string
		rec              Record
		offered, inPlace bool
	}{
		{"approval", Record{State: State{Kind: KindApproval}, Payload: Payload{Context: ctx}}, true, true},
		{"approval, quorum of one", Record{State: State{Kind: KindApproval, Approvals: 1}, Payload: Payload{Context: ctx}}, true, true},
		{"approval without context", Record{State: State{Kind: KindApproval}}, true, false},
		{"quorum of two", Record{State: State{Kind: KindApproval, Approvals: 2}, Payload: Payload{Context: ctx}}, false, false},
		{"a form", Record{State: State{Kind: KindApproval}, Payload: Payload{Schema: schema, Context: ctx}}, false, false},
		{"a selection", Record{State: State{Kind: KindSelection}, Payload: Payload{Context: ctx}}, true, false},
		{"a selection, quorum of two", Record{State: State{Kind: KindSelection, Approvals: 2}, Payload: Payload{Context: ctx}}, false, false},
	} {
		if got := tc.rec.StandingOffered(); got != tc.offered {
			t.Errorf("%s: offered %v, want %v", tc.name, got, tc.offered)
		}
		if got := tc.rec.StandingInPlace(); got != tc.inPlace {
			t.Errorf("%s: in place %v, want %v", tc.name, got, tc.inPlace)
		}
	}
}

func TestRuleInputSummary(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		time.Hour:                    "up to 10, for 1 hour.",
		15*time.Minute + time.Second: "up to 10, for 15 minutes.",
		90 * time.Minute:             "up to 10, for 1 h 30 min.",
		24 * time.Hour:               "up to 10, for 24 hours.",
	} {
		got := RuleInput{ExpiresAt: now.Add(d), MaxUses: 10}.Summary(now)
		if !strings.HasPrefix(got, "Later requests like this one are approved for you too: ") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want it to say %q", d, got, want)
		}
	}
}
