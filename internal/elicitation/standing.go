package elicitation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Standing approvals: a reviewer who approves a request may also approve
// "this and calls like it" for a bounded time and number of uses. The
// approval is a Rule: bound to the principal that asked, the kind, for a
// call the proxy's gate asks about the upstream tool, and to constraints
// on chosen fields of the request's context (for the gate, its arguments).
// A later request that matches one is decided at its creation, by the rule,
// in the rule's author's name (Service.create consults them; standing*.go).
//
// A rule is data, checked at each use against the store: a revoked,
// expired or used-up rule decides nothing more, at once, in every process.

// ViaRule is where a decision made by a standing approval was made.
const ViaRule Via = "rule"

// ActionRuleCreated records, in the trail of the request a rule was made
// from, that its decision also made a standing approval (Detail names it).
const ActionRuleCreated Action = "rule_created"

// Limits of standing approvals.
const (
	// DefaultRuleMaxTTL is how long a rule may last at most, unless the
	// operator raises it (StandingPolicy.MaxTTL).
	DefaultRuleMaxTTL = 24 * time.Hour
	// MaxRuleUses bounds the uses one rule may allow.
	MaxRuleUses = 1000
	// MaxRuleConstraints bounds the constraints of one rule.
	MaxRuleConstraints = 20
	// MaxConstraintValues bounds a one-of constraint's values.
	MaxConstraintValues = 20
	// MaxConstraintDepth bounds a constraint's path (fields within fields).
	MaxConstraintDepth = 8
	// MaxConstraintBytes bounds each value a constraint holds (serialized).
	MaxConstraintBytes = 4 << 10
	// MaxRulesPerAuthor bounds how many live rules one reviewer holds.
	MaxRulesPerAuthor = 50
)

// Named errors of standing approvals, matched with errors.Is.
var (
	ErrRuleInvalid       = errors.New("the standing approval is not valid")
	ErrRuleNeedsSignIn   = errors.New("standing approvals need reviewer sign-in")
	ErrRuleNeedsArgument = errors.New("a standing approval of a tool call must constrain one of its arguments")
	ErrRuleQuorum        = fmt.Errorf("a request that needs several approvals cannot be approved standing: %w", ErrForbidden)
	// ErrRuleSpent: the rule was revoked, has expired or has no use left
	// (a store's UseRule); it is a conflict.
	ErrRuleSpent = fmt.Errorf("the standing approval is revoked, expired or used up: %w", ErrConflict)
	// ErrTooManyRules: the author holds MaxRulesPerAuthor live rules.
	ErrTooManyRules = fmt.Errorf("too many standing approvals: %w", ErrBusy)
)

// StandingPolicy is the operator's bound on standing approvals.
type StandingPolicy struct {
	// MaxTTL is how long a rule may last at most; 0: DefaultRuleMaxTTL.
	MaxTTL time.Duration
	// RequireArgument refuses a rule for a tool call of the proxy's gate
	// that constrains none of the call's arguments.
	RequireArgument bool
}

// maxTTL is the policy's bound, its default when unset.
func (p StandingPolicy) maxTTL() time.Duration {
	if p.MaxTTL <= 0 {
		return DefaultRuleMaxTTL
	}
	return p.MaxTTL
}

// ConstraintOp is how a constraint compares a field.
type ConstraintOp string

// The constraint operators.
const (
	// ConstraintEqual: the field equals Values[0] (JSON values compared in
	// their RFC 8785 canonical form: 1.0 equals 1, key order is ignored).
	ConstraintEqual ConstraintOp = "equal"
	// ConstraintOneOf: the field equals one of Values.
	ConstraintOneOf ConstraintOp = "oneOf"
	// ConstraintRange: the field is a number within Min..Max (inclusive;
	// either may be absent, not both).
	ConstraintRange ConstraintOp = "range"
	// ConstraintPrefix: the field is a string starting with Prefix.
	ConstraintPrefix ConstraintOp = "prefix"
)

// Constraint holds one field of a request's context to a value. Path names
// the field from the context's top (for a gate call: "arguments", then the
// argument's name). A field that is absent satisfies no constraint.
type Constraint struct {
	Path   []string          `json:"path"`
	Op     ConstraintOp      `json:"op"`
	Values []json.RawMessage `json:"values,omitempty"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
	Prefix string            `json:"prefix,omitempty"`
}

// PathString is the path as the page shows it: its fields joined by dots.
func (c Constraint) PathString() string { return strings.Join(c.Path, ".") }

// RuleAuthor is the reviewer who made a rule, as their sign-in vouched for
// them when they did: what ReviewerPolicy.MayDecide is asked with each time
// the rule would decide.
type RuleAuthor struct {
	Issuer        string   `json:"issuer,omitempty"`
	Subject       string   `json:"subject"`
	Email         string   `json:"email,omitempty"`
	EmailVerified bool     `json:"emailVerified,omitempty"`
	Groups        []string `json:"groups,omitempty"`
}

// Identity is the author as a signed-in reviewer.
func (a RuleAuthor) Identity() Identity {
	return Identity(a)
}

func authorOf(id Identity) RuleAuthor {
	a := RuleAuthor(id)
	a.Groups = slices.Clone(id.Groups)
	return a
}

// Rule is a standing approval.
type Rule struct {
	ID string `json:"id"`
	// By is the author's principal (Identity.Principal), what decidedBy
	// names; Author is the rest of their identity.
	By     string     `json:"by"`
	Author RuleAuthor `json:"author"`
	// Principal is who asks: the rule decides only that principal's requests.
	Principal string `json:"principal"`
	Kind      Kind   `json:"kind"`
	// Tool is the upstream tool of a gate call; "" for a rule that decides
	// requests that are not gate calls.
	Tool        string       `json:"tool,omitempty"`
	Constraints []Constraint `json:"constraints,omitempty"`
	// SelectedIDs are what a selection rule picks: the rule decides only
	// selections offering these options, and picks them.
	SelectedIDs []string `json:"selectedIds,omitempty"`
	// From is the request whose decision made the rule.
	From      string    `json:"from"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// RetainUntil is when a store may forget the rule (listings show it
	// until then).
	RetainUntil time.Time `json:"retainUntil"`
	MaxUses     int       `json:"maxUses"`
	Uses        int       `json:"uses"`
	RevokedAt   time.Time `json:"revokedAt,omitzero"`
}

// LiveAt reports whether r may still decide at now: not revoked, not
// expired, a use left. Stores apply the same rule in UseRule.
func (r Rule) LiveAt(now time.Time) bool {
	return r.RevokedAt.IsZero() && now.Before(r.ExpiresAt) && r.Uses < r.MaxUses
}

// RoomForRule is the one bound on an author's standing approvals, which
// the service checks before a decision and every store's CreateRule in
// its write: ErrTooManyRules, with the sentence the reviewer reads, if r's
// author already holds MaxRulesPerAuthor rules among rs live at
// r.CreatedAt.
func RoomForRule(rs []Rule, r Rule) error {
	live := 0
	for _, o := range rs {
		if o.By == r.By && o.LiveAt(r.CreatedAt) {
			live++
		}
	}
	if live >= MaxRulesPerAuthor {
		return &Error{Code: CodeBusy, Kind: ErrTooManyRules, Field: "rule",
			Message: fmt.Sprintf("you hold %d standing approvals, the most at once; revoke one in your inbox first", live)}
	}
	return nil
}

// SortNewest orders rules as RulesBy lists them: newest first.
func SortNewest(rules []Rule) {
	slices.SortFunc(rules, func(a, b Rule) int { return b.CreatedAt.Compare(a.CreatedAt) })
}

// StatusAt names where r stands at now: "active", "revoked", "expired" or
// "used up".
func (r Rule) StatusAt(now time.Time) string {
	switch {
	case !r.RevokedAt.IsZero():
		return "revoked"
	case !now.Before(r.ExpiresAt):
		return "expired"
	case r.Uses >= r.MaxUses:
		return "used up"
	}
	return "active"
}

// Rules holds standing approvals: every store keeps them, and reads them
// from the store on every use (no copy outlives a revoke).
type Rules interface {
	// CreateRule stores a new rule. It returns ErrConflict if a rule with
	// that id exists, and RoomForRule's ErrTooManyRules, writing nothing,
	// if its author's rules leave no room: of any number of concurrent
	// creations by one author, in any processes, no more succeed than
	// there is room for.
	CreateRule(ctx context.Context, r Rule) error

	// RulesFor lists the rules that may decide a request of principal and
	// kind at now (Rule.LiveAt), strongly consistent: a revoke or a use
	// that returned is seen.
	RulesFor(ctx context.Context, principal string, kind Kind, now time.Time) ([]Rule, error)

	// RulesBy lists the rules author (a Rule's By) made that the store
	// still keeps, live or not, newest first.
	RulesBy(ctx context.Context, author string) ([]Rule, error)

	// RevokeRule revokes author's rule id at at and returns it; revoking it
	// again keeps the first RevokedAt. It returns ErrNotFound if author has
	// no rule id.
	RevokeRule(ctx context.Context, author, id string, at time.Time) (Rule, error)

	// UseRule takes one use of r (by its Principal, Kind and ID) at at, in
	// one conditional write, and returns the rule after it. It returns
	// ErrRuleSpent, writing nothing, if the rule is revoked, expired at at
	// or used up: of any number of concurrent calls, in any processes, no
	// more succeed than the rule has uses left. ErrNotFound if it is gone.
	UseRule(ctx context.Context, r Rule, at time.Time) (Rule, error)
}

// Matches reports whether r would decide a request of kind by principal
// with payload p: the same principal and kind, the same gate tool (or both
// not gate calls), every constraint holding on the context, no form to
// fill, and for a selection the rule's picks among the options. It does not
// look at time, uses or who may decide (LiveAt, ReviewerPolicy.MayDecide).
func (r Rule) Matches(principal string, kind Kind, p Payload) bool {
	if r.Principal != principal || r.Kind != kind {
		return false
	}
	if tool, _ := GateTool(p.Context); tool != r.Tool {
		return false
	}
	switch kind {
	case KindApproval:
		if p.Schema != nil {
			return false
		}
	case KindSelection:
		if len(r.SelectedIDs) == 0 || p.CheckSelection(r.SelectedIDs) != nil {
			return false
		}
	default:
		return false
	}
	doc, ok := decodeContext(p.Context)
	for _, c := range r.Constraints {
		if !ok || !c.holds(doc) {
			return false
		}
	}
	return true
}

// GateTool names the upstream tool of a request the proxy's gate made (its
// context is the call's view: "tool", "arguments" and "argumentsDigest"),
// and ok is false for any other request.
func GateTool(ctx json.RawMessage) (tool string, ok bool) {
	var v struct {
		Tool      *string         `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Digest    *string         `json:"argumentsDigest"`
	}
	if len(ctx) == 0 || json.Unmarshal(ctx, &v) != nil || v.Tool == nil || v.Digest == nil || !bytes.HasPrefix(bytes.TrimSpace(v.Arguments), []byte("{")) {
		return "", false
	}
	return *v.Tool, true
}

// StandingOffered reports whether a reviewer answering rec is offered to
// make the answer standing on the review page ("Approve, and also approve
// calls like this for…"; for a selection, "Send this choice, and also…"):
// an approval with no form to fill, or a selection, that one answer
// decides. The Service checks again when the rule is made
// (Submission.Rule), and refuses one that needs sign-in it does not have.
func (r Record) StandingOffered() bool {
	switch r.State.Kind {
	case KindApproval:
		return r.Payload.Schema == nil && r.State.Quorum() <= 1
	case KindSelection:
		return r.State.Quorum() <= 1
	}
	return false
}

// RuleField is a field of a request's context that a standing approval
// made from it holds to its value by default: Path names it from the
// context's top (RuleInput.Equal takes it), Value is its JSON as the
// request has it.
type RuleField struct {
	Path  []string
	Value json.RawMessage
}

// RuleFields are the fields a standing approval made from a request with
// payload p holds by default, the one choice every surface makes: of a
// call the proxy's gate asks about (GateTool names its tool), its
// arguments; else the context's top-level fields. In name order, at most
// MaxRuleConstraints, leaving out a value larger than MaxConstraintBytes
// (no constraint could hold it). None for a context that is not a JSON
// object.
//
// whole reports whether they hold all of the request a rule can tell
// requests by: every argument of a gate call that has some (its tool the
// rule holds anyway), or every field of a context that has some. A rule
// from a request that is not whole also decides requests that differ from
// it in what it leaves out (one from a request without context: any other
// of the agent's; from a gate call without arguments: any call of the
// tool); a surface that does not show the reviewer the fields
// (Record.StandingInPlace) offers none there.
func (p Payload) RuleFields() (fields []RuleField, whole bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(p.Context, &top) != nil {
		return nil, false
	}
	var prefix []string
	tool, _ := GateTool(p.Context)
	if tool != "" {
		prefix = []string{"arguments"}
		var v struct {
			Arguments map[string]json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(p.Context, &v)
		top = v.Arguments
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if len(fields) == MaxRuleConstraints {
			break
		}
		if len(top[k]) > MaxConstraintBytes {
			continue
		}
		fields = append(fields, RuleField{Path: append(slices.Clone(prefix), k), Value: top[k]})
	}
	return fields, len(top) > 0 && len(fields) == len(top)
}

// RuleHoldingAll is the standing approval, until expiresAt for at most
// uses requests, that holds every field RuleFields offers: what a surface
// that offers no choice of fields asks for (Slack, the MCP App).
func (p Payload) RuleHoldingAll(expiresAt time.Time, uses int) *RuleInput {
	in := &RuleInput{ExpiresAt: expiresAt, MaxUses: uses}
	fields, _ := p.RuleFields()
	for _, f := range fields {
		in.Equal = append(in.Equal, f.Path)
	}
	return in
}

// StandingInPlace reports whether an approval of r may be made standing
// where the reviewer sees only its message, not the fields a rule holds
// (a notice's buttons: Slack's Approve for 1 hour): an approval where the
// review page offers it (StandingOffered) and the default fields hold the
// whole request (RuleFields).
func (r Record) StandingInPlace() bool {
	_, whole := r.Payload.RuleFields()
	return r.State.Kind == KindApproval && r.StandingOffered() && whole
}

// decodeContext decodes a context for matching, numbers kept as written.
func decodeContext(ctx json.RawMessage) (any, bool) {
	if len(ctx) == 0 {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(ctx))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// lookup finds the field at path in doc.
func lookup(doc any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = m[k]; !ok {
			return nil, false
		}
	}
	return doc, true
}

// holds reports whether c holds on doc (a decoded context).
func (c Constraint) holds(doc any) bool {
	v, ok := lookup(doc, c.Path)
	if !ok {
		return false
	}
	switch c.Op {
	case ConstraintEqual, ConstraintOneOf:
		got, err := canonical(v)
		return err == nil && slices.ContainsFunc(c.Values, func(w json.RawMessage) bool {
			want, err := jcs.Transform(w)
			return err == nil && bytes.Equal(got, want)
		})
	case ConstraintRange:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && (c.Min == nil || f >= *c.Min) && (c.Max == nil || f <= *c.Max)
	case ConstraintPrefix:
		s, ok := v.(string)
		return ok && c.Prefix != "" && strings.HasPrefix(s, c.Prefix)
	}
	return false
}

func canonical(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jcs.Transform(b)
}

// EqualTo is the constraint that holds field path to its value in ctx (a
// request's context): what the review page pre-fills. It returns an error
// if ctx has no such field.
func EqualTo(ctx json.RawMessage, path []string) (Constraint, error) {
	doc, ok := decodeContext(ctx)
	if ok {
		var v any
		if v, ok = lookup(doc, path); ok {
			b, err := json.Marshal(v)
			if err != nil {
				return Constraint{}, fmt.Errorf("encode %s: %w", strings.Join(path, "."), err)
			}
			return Constraint{Path: slices.Clone(path), Op: ConstraintEqual, Values: []json.RawMessage{b}}, nil
		}
	}
	return Constraint{}, invalid(ErrRuleInvalid, "constraints", "this request has no field %q to constrain", truncate(strings.Join(path, "."), 64))
}

// check validates c, the i-th constraint of a rule.
func (c Constraint) check(i int) error {
	field := fmt.Sprintf("constraints[%d]", i)
	bad := func(format string, args ...any) error {
		return invalid(ErrRuleInvalid, field, "constraint %d: "+format, append([]any{i + 1}, args...)...)
	}
	if len(c.Path) == 0 || len(c.Path) > MaxConstraintDepth {
		return bad("names no field, or one more than %d fields deep", MaxConstraintDepth)
	}
	for _, k := range c.Path {
		if k == "" || utf8.RuneCountInString(k) > MaxOptionIDChars || !utf8.ValidString(k) {
			return bad("a field name is empty, longer than %d characters or not text", MaxOptionIDChars)
		}
	}
	switch c.Op {
	case ConstraintEqual, ConstraintOneOf:
		return c.checkValues(bad)
	case ConstraintRange:
		return c.checkRange(bad)
	case ConstraintPrefix:
		return c.checkPrefix(bad)
	}
	return bad("op %q is not one of equal, oneOf, range, prefix", truncate(string(c.Op), 32))
}

func (c Constraint) checkRange(bad func(string, ...any) error) error {
	switch {
	case len(c.Values) > 0 || c.Prefix != "":
		return bad("a range takes min and max only")
	case c.Min == nil && c.Max == nil:
		return bad("a range needs a min, a max or both")
	case c.Min != nil && c.Max != nil && *c.Min > *c.Max:
		return bad("min %g is above max %g", *c.Min, *c.Max)
	}
	return nil
}

func (c Constraint) checkPrefix(bad func(string, ...any) error) error {
	switch {
	case len(c.Values) > 0 || c.Min != nil || c.Max != nil:
		return bad("a prefix takes prefix only")
	case c.Prefix == "" || len(c.Prefix) > MaxConstraintBytes:
		return bad("the prefix must be 1 to %d bytes", MaxConstraintBytes)
	}
	return nil
}

func (c Constraint) checkValues(bad func(string, ...any) error) error {
	want := "exactly one value"
	if c.Op == ConstraintOneOf {
		want = fmt.Sprintf("1 to %d values", MaxConstraintValues)
	}
	switch n := len(c.Values); {
	case c.Min != nil || c.Max != nil || c.Prefix != "":
		return bad("%s takes values only", c.Op)
	case n == 0, c.Op == ConstraintEqual && n != 1, n > MaxConstraintValues:
		return bad("%s takes %s, not %d", c.Op, want, n)
	}
	for _, v := range c.Values {
		if len(v) > MaxConstraintBytes {
			return bad("a value is larger than %d bytes", MaxConstraintBytes)
		}
		if _, err := jcs.Transform(v); err != nil {
			return bad("a value is not JSON")
		}
	}
	return nil
}
