package elicitation

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzAnswer checks how a submission becomes the answer to store
// (Payload.answer, what Service.Submit records): a refusal is an
// invalid_argument error naming the selection, the form or the comment;
// a decline carries nothing but its comment; an accepted selection is
// exactly the picks sent; an accepted form is a JSON object of the
// schema's own fields; an approval without a form carries no values.
func FuzzAnswer(f *testing.F) {
	const schema = `{"type":"object","properties":{"name":{"type":"string","minLength":2},"n":{"type":"integer","maximum":10},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}},"required":["name"]}`
	f.Add(true, "", "submitted", "a,b", "", "", "", "")
	f.Add(true, "", "submitted", "a,a", "", "", "", "nope")
	f.Add(true, "", "declined", "z", "", "", "", "why\r\nnot")
	f.Add(false, schema, "submitted", "", "name", "Ada", "n", "3")
	f.Add(false, schema, "submitted", "", "tags", "a", "tags", "c")
	f.Add(false, "", "submitted", "", "x", "1", "", "")
	f.Add(false, schema, "maybe", "", "name", "A", "", "\a")
	f.Fuzz(func(t *testing.T, selection bool, schema, decision, picks, k1, v1, k2, v2 string) {
		kind, p := KindApproval, Payload{}
		if selection {
			kind = KindSelection
			p.Options = []Option{{ID: "a"}, {ID: "b"}, {ID: "c"}}
			p.MinSelections, p.MaxSelections = 1, 2
		} else if schema != "" {
			s, err := ParseFormSchema(json.RawMessage(schema))
			if err != nil {
				return
			}
			p.Schema = s
		}
		sub := Submission{Decision: Decision(decision), Comment: v2, Form: map[string][]string{}}
		if picks != "" {
			sub.SelectedIDs = strings.Split(picks, ",")
		}
		if k1 != "" {
			sub.Form[k1] = []string{v1}
		}
		if k2 != "" {
			sub.Form[k2] = append(sub.Form[k2], v2)
		}
		a, err := p.answer(kind, sub)
		if err != nil {
			if CodeOf(err) != CodeInvalidArgument || !isOneOfErr(err, ErrSelectionInvalid, ErrFormInvalid, ErrCommentTooLong, ErrCommentInvalid) {
				t.Fatalf("refusal is not a named invalid_argument: %v", err)
			}
			return
		}
		if sub.Decision != DecisionSubmitted && sub.Decision != DecisionDeclined {
			t.Fatalf("decision %q accepted", sub.Decision)
		}
		if comment, _ := CleanComment(sub.Comment); CommentOf(a) != comment {
			t.Fatalf("comment %q stored as %q", comment, CommentOf(a))
		}
		if sub.Decision == DecisionDeclined {
			if a != nil && (a.SelectedIDs != nil || a.Form != nil) {
				t.Fatalf("decline carries an answer: %+v", a)
			}
			return
		}
		checkSubmitted(t, kind, p, sub, a)
	})
}

func isOneOfErr(err error, named ...error) bool {
	return slices.ContainsFunc(named, func(n error) bool { return errors.Is(err, n) })
}

// checkSubmitted asserts what an accepted submitted answer a holds.
func checkSubmitted(t *testing.T, kind Kind, p Payload, sub Submission, a *Answer) {
	t.Helper()
	switch {
	case kind == KindSelection:
		if !slices.Equal(a.SelectedIDs, sub.SelectedIDs) || p.CheckSelection(a.SelectedIDs) != nil {
			t.Fatalf("picks %q stored as %q", sub.SelectedIDs, a.SelectedIDs)
		}
	case p.Schema == nil:
		if len(sub.Form) > 0 || a.Form != nil {
			t.Fatalf("approval without a form accepted values %v as %s", sub.Form, a.Form)
		}
	default:
		var vals map[string]any
		if err := json.Unmarshal(a.Form, &vals); err != nil {
			t.Fatalf("stored form %s is not a JSON object: %v", a.Form, err)
		}
		for name := range vals {
			if _, ok := p.Schema.Field(name); !ok {
				t.Fatalf("stored form holds %q, not a field of the schema", name)
			}
		}
	}
}
