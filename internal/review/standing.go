package review

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// Standing approvals on the decision form: "Approve, and also approve calls
// like this for…" (docs/review-page.md). The page offers it to a signed-in
// reviewer on an approval a rule can decide (no form to fill, no quorum):
// a duration, a number of uses and the fields of the context (of a gate
// call: its arguments) held to this request's values, every one ticked to
// start with. The form sends the fields' paths, never their values: the
// Service reads the values from the stored request. The Service checks
// everything again (elicitation.RuleInput).

// Names of the standing approval's form inputs.
const (
	ruleOn    = "rule"
	ruleFor   = "rule.for"
	ruleUses  = "rule.uses"
	ruleField = "rule.field"
)

// ruleDurations are the durations the page offers, up to the operator's cap.
var ruleDurations = []time.Duration{15 * time.Minute, time.Hour, 4 * time.Hour, 8 * time.Hour, 24 * time.Hour}

// defaultRuleUses is the page's starting number of uses.
const defaultRuleUses = 10

// maxValueShown bounds a field's value as the page shows it, in characters.
const maxValueShown = 80

type standingView struct {
	On        bool
	Selection bool // the rule picks this answer's options in later selections
	Principal string
	Tool      string
	Durations []choice
	Uses      string
	MaxUses   int
	Fields    []ruleFieldView
}

type ruleFieldView struct {
	ID, Value, Label, Shown string
	Checked                 bool
}

// standingOffer is the standing approval part of rec's decision form, or nil
// where the domain offers none (Record.StandingOffered).
func standingOffer(rec elicitation.Record, maxTTL time.Duration, pr *prior) *standingView {
	if !rec.StandingOffered() {
		return nil
	}
	v := &standingView{Selection: rec.State.Kind == elicitation.KindSelection, Principal: rec.State.Owner, Uses: strconv.Itoa(defaultRuleUses), MaxUses: elicitation.MaxRuleUses}
	if v.Principal == "" || v.Principal == elicitation.Anonymous {
		v.Principal = "an agent without credentials"
	}
	v.Tool, _ = elicitation.GateTool(rec.Payload.Context)
	var sent url.Values
	if pr != nil && pr.standing != nil {
		sent = pr.standing
		v.On = sent.Get(ruleOn) != ""
		v.Uses = sent.Get(ruleUses)
	}
	v.Durations = durationChoices(maxTTL, cmpDuration(sent.Get(ruleFor), time.Hour))
	fields, _ := rec.Payload.RuleFields()
	for i, f := range fields {
		b, _ := json.Marshal(f.Path)
		fv := ruleFieldView{ID: "rule-f" + strconv.Itoa(i), Value: string(b), Label: strings.Join(f.Path, "."), Shown: shownValue(f.Value), Checked: true}
		if sent != nil {
			fv.Checked = slices.Contains(sent[ruleField], fv.Value)
		}
		v.Fields = append(v.Fields, fv)
	}
	return v
}

// durationChoices are the durations offered under maxTTL (itself too, when
// the operator set another), want selected if offered, else an hour, else
// the shortest.
func durationChoices(maxTTL, want time.Duration) []choice {
	var ds []time.Duration
	for _, d := range ruleDurations {
		if d <= maxTTL {
			ds = append(ds, d)
		}
	}
	if !slices.Contains(ds, maxTTL) {
		ds = append(ds, maxTTL)
	}
	if !slices.Contains(ds, want) {
		want = time.Hour
		if !slices.Contains(ds, want) {
			want = ds[0]
		}
	}
	out := make([]choice, len(ds))
	for i, d := range ds {
		out[i] = choice{Value: d.String(), Label: elicitation.HumanDuration(d), Selected: d == want}
	}
	return out
}

func cmpDuration(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	return def
}

// ruleInput reads the standing approval the form asks for, at now: nil
// when it asks for none (or with a decline, which makes no rule).
func ruleInput(form url.Values, now time.Time) (*elicitation.RuleInput, error) {
	if form.Get(ruleOn) == "" || elicitation.Decision(form.Get("decision")) != elicitation.DecisionSubmitted {
		return nil, nil
	}
	d, err := time.ParseDuration(form.Get(ruleFor))
	if err != nil {
		return nil, &elicitation.Error{Code: elicitation.CodeInvalidArgument, Kind: elicitation.ErrRuleInvalid, Field: ruleFor, Message: "choose how long the standing approval lasts"}
	}
	uses, err := strconv.Atoi(strings.TrimSpace(form.Get(ruleUses)))
	if err != nil {
		return nil, &elicitation.Error{Code: elicitation.CodeInvalidArgument, Kind: elicitation.ErrRuleInvalid, Field: ruleUses, Message: "the standing approval's number of uses must be a whole number"}
	}
	in := &elicitation.RuleInput{ExpiresAt: now.Add(d), MaxUses: uses}
	for _, v := range form[ruleField] {
		var path []string
		if json.Unmarshal([]byte(v), &path) != nil || len(path) == 0 {
			return nil, &elicitation.Error{Code: elicitation.CodeInvalidArgument, Kind: elicitation.ErrRuleInvalid, Field: ruleField, Message: fmt.Sprintf("the field %q cannot be read; reload the page", truncateText(v, 64))}
		}
		in.Equal = append(in.Equal, path)
	}
	return in, nil
}

// shownValue is a field's JSON value as the page shows it, cut at
// maxValueShown characters.
func shownValue(v json.RawMessage) string {
	if r := []rune(string(v)); len(r) > maxValueShown {
		return string(r[:maxValueShown-1]) + "…"
	}
	return string(v)
}

func truncateText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// standingSent is the standing approval part of a form sent, kept to be
// shown again.
func standingSent(form url.Values) url.Values {
	out := url.Values{}
	for _, k := range []string{ruleOn, ruleFor, ruleUses, ruleField} {
		if vs, ok := form[k]; ok {
			out[k] = vs
		}
	}
	return out
}

// ruleMade is the sentence of the receipt page for a rule made with sub.
func ruleMade(sub elicitation.Submission, now time.Time) string {
	if sub.Rule == nil {
		return ""
	}
	return sub.Rule.Summary(now)
}
