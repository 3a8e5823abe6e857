package review

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

type finalView struct {
	Class   string // done | closed | problem
	Heading string
	Text    []string
	Receipt *receiptView
	Reload  bool
	// SwitchAccount links to signing in with another account (a
	// signed-in reviewer who may not decide).
	SwitchAccount string
}

// receiptView is what was recorded, read back from the store after the
// decision landed.
type receiptView struct {
	At, AtISO string
	By        string // the signed-in reviewer who decided; "" when anonymous
	Picked    []pickedView
	Fields    []valueView
	Comment   string
}

type pickedView struct{ ID, Label string }

type valueView struct{ Label, Value string }

// closedView is the page of a request that can no longer be decided: kind
// is one of the closed outcomes of the outcomes table.
func closedView(kind closedKind, rec elicitation.Record, st elicitation.State) *pageView {
	v := &pageView{Message: messageHTML(rec.Payload.Message), Final: &finalView{Class: "closed"}}
	f := v.Final
	switch kind {
	case closedExpired:
		f.Heading = "This request expired"
		f.Text = []string{"It expired at " + timeText(st.ExpiresAt) + " before anyone answered, so nothing was decided.", "Ask the agent to send the request again."}
	case closedCanceled:
		f.Heading = "The agent canceled this request"
		f.Text = []string{"Nothing needs to be decided any more."}
	default:
		f.Heading = "This request has been answered"
		f.Text = []string{answeredText(st)}
		if rec.State.ID != "" {
			// Read with the review key (a GET): what was recorded.
			f.Receipt = recorded(rec, st, rec.Answer)
		}
	}
	v.Title = f.Heading
	return v
}

func answeredText(st elicitation.State) string {
	if st.DecidedAt.IsZero() {
		return "It was answered a moment ago. It cannot be answered again."
	}
	declined := st.Decision == elicitation.DecisionDeclined
	selection := st.Kind == elicitation.KindSelection
	answer := "approved"
	switch {
	case declined && selection:
		answer = "answered with “none of these — refine”"
	case declined:
		answer = "declined"
	case selection:
		answer = "answered with a selection"
	}
	return "It was " + answer + " on " + timeText(st.DecidedAt) + ". It cannot be answered again."
}

// receiptPage is the page after a decision landed (or its retry): what was
// recorded and when. rec is the request read back after the decision; if
// that read failed, rec is zero and the page falls back to sub. ruleLost:
// the standing approval sub asked for could not be saved.
func receiptPage(rec elicitation.Record, st elicitation.State, sub elicitation.Submission, ruleLost bool) *pageView {
	v := &pageView{Message: messageHTML(rec.Payload.Message), Final: &finalView{Class: "done"}}
	f := v.Final
	declined := st.Decision == elicitation.DecisionDeclined
	selection := st.Kind == elicitation.KindSelection
	switch {
	case declined && selection:
		f.Heading = "Sent: none of these"
		f.Text = []string{"The agent will refine the options and may ask again."}
	case declined:
		f.Heading = "Declined"
		f.Text = []string{"The agent has been told that you declined."}
	case selection:
		f.Heading = "Selection sent"
		f.Text = []string{"The agent has your choice."}
	default:
		f.Heading = "Approved"
		f.Text = []string{"The agent has your approval."}
		switch t := ruleMade(sub, st.DecidedAt); {
		case ruleLost:
			f.Text = append(f.Text, "The standing approval could not be saved: later requests like this one will be asked of you as before. Approve the next one with a standing approval to try again.")
		case t != "":
			f.Text = append(f.Text, t)
		}
	}
	v.Title = f.Heading
	answer := rec.Answer
	if rec.State.ID == "" {
		// The read-back failed: show what this page sent.
		answer = &elicitation.Answer{SelectedIDs: sub.SelectedIDs, Comment: strings.TrimSpace(sub.Comment)}
	}
	f.Receipt = recorded(rec, st, answer)
	return v
}

// recorded is the receipt of a decided request: when, by whom (if signed
// in), the picks by label, the form values and the comment.
func recorded(rec elicitation.Record, st elicitation.State, answer *elicitation.Answer) *receiptView {
	r := &receiptView{}
	at, by := st.DecidedAt, st.DecidedBy
	if at.IsZero() {
		at, by = rec.State.DecidedAt, rec.State.DecidedBy
	}
	if !at.IsZero() {
		r.At, r.AtISO = timeText(at), at.UTC().Format(time.RFC3339)
	}
	if by != elicitation.Reviewer {
		r.By = by
	}
	if answer != nil {
		r.Comment = answer.Comment
		if st.Decision != elicitation.DecisionDeclined {
			r.Picked = picked(rec.Payload, answer.SelectedIDs)
			r.Fields = recordedValues(rec.Payload, answer.Form)
		}
	}
	return r
}

// picked names the picked options by label, in the order they were sent.
func picked(p elicitation.Payload, ids []string) []pickedView {
	labels := make(map[string]string, len(p.Options))
	for _, o := range p.Options {
		labels[o.ID] = o.DisplayLabel()
	}
	out := make([]pickedView, len(ids))
	for i, id := range ids {
		l, ok := labels[id]
		if !ok {
			l = id
		}
		out[i] = pickedView{ID: id, Label: l}
	}
	return out
}

// recordedValues lists the recorded form values in the schema's field order,
// as a person reads them.
func recordedValues(p elicitation.Payload, form json.RawMessage) []valueView {
	if p.Schema == nil || len(form) == 0 {
		return nil
	}
	var vals map[string]any
	if json.Unmarshal(form, &vals) != nil {
		return nil
	}
	var out []valueView
	for _, f := range p.Schema.Fields {
		v, ok := vals[f.Name]
		if !ok {
			continue
		}
		label := f.Title
		if label == "" {
			label = f.Name
		}
		out = append(out, valueView{Label: label, Value: valueText(f, v)})
	}
	return out
}

func valueText(f elicitation.Field, v any) string {
	title := func(s string) string {
		for _, c := range f.Choices {
			if c.Value == s && c.Title != "" {
				return c.Title
			}
		}
		return s
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "Yes"
		}
		return "No"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		if x == "" {
			return "(empty)"
		}
		return title(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				parts = append(parts, title(s))
			}
		}
		if len(parts) == 0 {
			return "(none)"
		}
		return strings.Join(parts, ", ")
	case nil:
		return "(empty)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
