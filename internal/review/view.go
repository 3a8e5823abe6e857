package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/pagetoken"
)

// pageView is what page.html renders.
type pageView struct {
	Title   string
	PageCSS template.CSS
	Final   *finalView
	// Reviewer is the signed-in reviewer the page is shown to (empty
	// without sign-in).
	Reviewer string

	Message, Expires, ExpiresISO, ExpiresIn string
	Token                                   string
	Notice                                  string
	Errors                                  []string
	Selection                               *selectionView
	Approval                                *approvalView

	SubmitLabel, SubmitMeaning, DeclineLabel, DeclineMeaning string
}

type finalView struct {
	Class   string // done | closed | problem
	Heading string
	Text    []string
	Picked  []string
	Reload  bool
}

type frameView struct {
	Doc    string
	Height int
}

type selectionView struct {
	Legend, Rule string
	InputType    string // radio | checkbox
	Required     bool   // single select: the browser asks for a pick
	Rows         []rowView
	HasHover     bool   // one details frame per option
	HoverAllDoc  string // one frame with every option's details (long lists)
	HeadingDoc   *frameView
	FooterDoc    *frameView
	RowsDoc      string // templated rows: one frame
	RowHeight    int
}

type rowView struct {
	Index       int
	ID, Label   string
	Checked     bool
	HoverDoc    string
	HoverHeight int
}

type approvalView struct {
	DisplayDoc  *frameView
	ContextJSON string
	Fields      []fieldView
}

type fieldView struct {
	ID, Name, InputName, Label string
	Control                    string // input | checkbox | select | multi
	InputType                  string
	Required, Checked          bool
	Value                      string
	Min, Max, Step             string
	MinLength, MaxLength       string
	InputMode, Autocomplete    string
	Choices                    []choiceView
	Notes                      []noteView
	Describe                   string
	Error                      string
}

type choiceView struct {
	Name, Value, Title string
	Selected           bool
}

type noteView struct{ ID, Class, Text string }

// prior is what a refused submission carried, shown again on the 422 page.
type prior struct {
	errors   []string
	fields   map[string]string
	selected []string
	form     map[string][]string
}

const formPrefix = "f."

func (h *Handler) labels(p elicitation.Payload, kind elicitation.Kind) (submit, submitMeaning, decline, declineMeaning string) {
	defSubmit, defDecline := "Approve", "Decline"
	if kind == elicitation.KindSelection {
		defSubmit, defDecline = "Submit selection", "None of these — refine"
	}
	submit, decline = defSubmit, defDecline
	if l := strings.TrimSpace(p.Labels.Submit); l != "" && l != defSubmit {
		submit, submitMeaning = l, strings.ToLower(defSubmit[:1])+defSubmit[1:]
	}
	if l := strings.TrimSpace(p.Labels.Decline); l != "" && l != defDecline {
		decline, declineMeaning = l, strings.ToLower(defDecline[:1])+defDecline[1:]
	}
	return
}

// pendingView builds the page of a pending request with a fresh page token.
func (h *Handler) pendingView(rv elicitation.Review, pr *prior) (*pageView, error) {
	rec := rv.Record
	now := h.now()
	exp := now.Add(h.ttl)
	if rec.State.ExpiresAt.Before(exp) {
		exp = rec.State.ExpiresAt
	}
	tok, err := h.tokens.Seal(pagetoken.Claims{ElicitationID: rec.State.ID, RenderID: h.renderID(), Expires: exp, RequestExpires: rec.State.ExpiresAt})
	if err != nil {
		return nil, fmt.Errorf("seal page token: %w", err)
	}
	v := &pageView{
		Message: rec.Payload.Message, Token: tok,
		Expires:    rec.State.ExpiresAt.UTC().Format("Mon 2 Jan 2006, 15:04 MST"),
		ExpiresISO: rec.State.ExpiresAt.UTC().Format(time.RFC3339),
		ExpiresIn:  "in " + humanDuration(rec.State.ExpiresAt.Sub(now)),
	}
	v.SubmitLabel, v.SubmitMeaning, v.DeclineLabel, v.DeclineMeaning = h.labels(rec.Payload, rec.State.Kind)
	if pr != nil {
		v.Errors = pr.errors
	}
	out, terr := h.tpl.render(rec.Payload)
	if terr != nil {
		// Templates were checked at creation; if one fails now (a slower
		// machine, a changed bound), fall back to the default rendering.
		h.log.Warn("review page: template failed, showing the default rendering", "id", rec.State.ID, "err", terr)
		v.Notice = "The presentation supplied with this request could not be shown, so it is shown plainly."
		out = rendered{}
	}
	css := rec.Payload.CSS
	switch rec.State.Kind {
	case elicitation.KindSelection:
		v.Title = "Choose: review request"
		v.Selection = selection(rec.Payload, out, css, pr)
	default:
		v.Title = "Approve: review request"
		a, err := approval(rec.Payload, out, css, pr)
		if err != nil {
			return nil, err
		}
		v.Approval = a
	}
	return v, nil
}

func selection(p elicitation.Payload, out rendered, css string, pr *prior) *selectionView {
	s := &selectionView{InputType: "checkbox", RowHeight: RowHeight}
	if p.MaxSelections == 1 {
		s.InputType, s.Required = "radio", true
		s.Legend = "Pick one"
	} else {
		s.Legend = "Pick options"
	}
	rule := p.SelectionRule()
	s.Rule = strings.ToUpper(rule[:1]) + rule[1:] + "."
	if p.MaxSelections > 1 {
		s.Rule += " The server checks the count when you submit."
	}
	picked := map[string]bool{}
	if pr != nil {
		for _, id := range pr.selected {
			picked[id] = true
		}
	}
	s.Rows = make([]rowView, len(p.Options))
	perOption := len(out.Hovers) <= MaxHoverFrames
	if out.Hovers != nil && !perOption {
		s.HoverAllDoc = hoversDoc(css, p.Options, out.Hovers)
	}
	for i, o := range p.Options {
		r := rowView{Index: i, ID: o.ID, Label: o.DisplayLabel(), Checked: picked[o.ID]}
		if out.Hovers != nil && perOption {
			r.HoverDoc = frameDoc(css, "", out.Hovers[i])
			r.HoverHeight = frameHeight(out.Hovers[i], 64, 360)
			s.HasHover = true
		}
		s.Rows[i] = r
	}
	if out.Rows != nil {
		s.RowsDoc = rowsDoc(css, out.Rows)
	}
	if out.Heading != "" {
		s.HeadingDoc = &frameView{Doc: frameDoc(css, "", out.Heading), Height: frameHeight(out.Heading, 48, 320)}
	}
	if out.Footer != "" {
		s.FooterDoc = &frameView{Doc: frameDoc(css, "", out.Footer), Height: frameHeight(out.Footer, 48, 320)}
	}
	return s
}

func approval(p elicitation.Payload, out rendered, css string, pr *prior) (*approvalView, error) {
	a := &approvalView{}
	if len(p.Context) > 0 {
		var b bytes.Buffer
		if err := json.Indent(&b, p.Context, "", "  "); err != nil {
			return nil, fmt.Errorf("indent context: %w", err)
		}
		a.ContextJSON = b.String()
	}
	if out.Display != "" {
		a.DisplayDoc = &frameView{Doc: frameDoc(css, "", out.Display), Height: frameHeight(out.Display, 96, 480)}
	}
	if p.Schema != nil {
		for i, f := range p.Schema.Fields {
			a.Fields = append(a.Fields, field(i, f, pr))
		}
	}
	return a, nil
}

func field(i int, f elicitation.Field, pr *prior) fieldView {
	v := fieldView{ID: "f-" + strconv.Itoa(i), Name: f.Name, InputName: formPrefix + f.Name, Label: f.Title, Required: f.Required}
	if v.Label == "" {
		v.Label = f.Name
	}
	var submitted []string
	if pr != nil {
		submitted = pr.form[f.Name]
		v.Error = pr.fields[f.Name]
	}
	note := func(class, text string) {
		id := fmt.Sprintf("%s-%s%d", v.ID, class, len(v.Notes))
		v.Notes = append(v.Notes, noteView{ID: id, Class: class, Text: text})
		if v.Describe != "" {
			v.Describe += " "
		}
		v.Describe += id
	}
	if f.Description != "" {
		note("desc", f.Description)
	}
	// The value to show: what was submitted, else the default.
	value := func() string {
		if pr != nil {
			if len(submitted) > 0 {
				return submitted[0]
			}
			return ""
		}
		return defaultText(f)
	}
	switch f.Type {
	case elicitation.FieldBoolean:
		v.Control = "checkbox"
		if pr != nil {
			v.Checked = len(submitted) > 0 && (submitted[0] == "true" || submitted[0] == "on")
		} else if b, ok := f.Default.(bool); ok {
			v.Checked = b
		}
		note("note", "Unchecked means no.")
	case elicitation.FieldSelect, elicitation.FieldMultiSelect:
		chosen := map[string]bool{}
		if pr != nil {
			for _, s := range submitted {
				chosen[s] = true
			}
		} else {
			switch d := f.Default.(type) {
			case string:
				chosen[d] = true
			case []string:
				for _, s := range d {
					chosen[s] = true
				}
			case []any: // as decoded from the store
				for _, v := range d {
					if s, ok := v.(string); ok {
						chosen[s] = true
					}
				}
			}
		}
		for _, c := range f.Choices {
			t := c.Title
			if t == "" {
				t = c.Value
			}
			v.Choices = append(v.Choices, choiceView{Name: v.InputName, Value: c.Value, Title: t, Selected: chosen[c.Value]})
		}
		v.Control = "select"
		if f.Type == elicitation.FieldMultiSelect {
			v.Control = "multi"
			switch {
			case f.MinItems != nil && f.MaxItems != nil:
				note("note", fmt.Sprintf("Pick %d to %d.", *f.MinItems, *f.MaxItems))
			case f.MinItems != nil:
				note("note", fmt.Sprintf("Pick at least %d.", *f.MinItems))
			case f.MaxItems != nil:
				note("note", fmt.Sprintf("Pick at most %d.", *f.MaxItems))
			}
		}
	default:
		v.Control, v.InputType, v.Value = "input", "text", value()
		switch f.Type {
		case elicitation.FieldNumber, elicitation.FieldInteger:
			v.InputType, v.Step, v.InputMode = "number", "any", "decimal"
			if f.Type == elicitation.FieldInteger {
				v.Step, v.InputMode = "1", "numeric"
			}
			v.Min, v.Max = num(f.Minimum), num(f.Maximum)
			switch {
			case f.Minimum != nil && f.Maximum != nil:
				note("note", fmt.Sprintf("From %s to %s.", v.Min, v.Max))
			case f.Minimum != nil:
				note("note", "At least "+v.Min+".")
			case f.Maximum != nil:
				note("note", "At most "+v.Max+".")
			}
		default:
			if f.MinLength != nil {
				v.MinLength = strconv.Itoa(*f.MinLength)
			}
			if f.MaxLength != nil {
				v.MaxLength = strconv.Itoa(*f.MaxLength)
			}
			switch f.Format {
			case elicitation.FormatEmail:
				v.InputType, v.Autocomplete = "email", "email"
			case elicitation.FormatURI:
				v.InputType = "url"
			case elicitation.FormatDate:
				v.InputType = "date"
			case elicitation.FormatDateTime:
				v.InputType = "datetime-local"
				if pr == nil {
					v.Value = localDateTime(v.Value)
				}
				note("note", "Date and time in "+zoneName()+": a time without an offset is read as "+zoneName()+".")
			}
		}
	}
	if v.Error != "" {
		id := v.ID + "-err"
		v.Notes = append(v.Notes, noteView{ID: id, Class: "ferr", Text: v.Label + " " + v.Error + "."})
		v.Describe = strings.TrimSpace(v.Describe + " " + id)
	}
	return v
}

func zoneName() string {
	if elicitation.DateTimeZone == time.UTC {
		return "UTC"
	}
	return elicitation.DateTimeZone.String()
}

// localDateTime turns an RFC 3339 default into a datetime-local value in
// DateTimeZone.
func localDateTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.In(elicitation.DateTimeZone).Format("2006-01-02T15:04:05")
}

func defaultText(f elicitation.Field) string {
	switch d := f.Default.(type) {
	case nil:
		return ""
	case string:
		return d
	case float64:
		return strconv.FormatFloat(d, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(d, 10)
	}
	return fmt.Sprint(f.Default)
}

func num(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < 2*time.Minute:
		return "1 minute"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	h := int(math.Round(d.Hours()*10)) / 10
	m := int(d/time.Minute) % 60
	if m == 0 {
		if h == 1 {
			return "1 hour"
		}
		return strconv.Itoa(h) + " hours"
	}
	return fmt.Sprintf("%d h %d min", int(d/time.Hour), m)
}

// finalView is the page of a request that can no longer be decided; sub,
// when set, is the submission that just landed (or its retry).
func (h *Handler) finalView(rec elicitation.Record, st elicitation.State, sub *elicitation.Submission) *pageView {
	v := &pageView{Message: rec.Payload.Message, Final: &finalView{Class: "closed"}}
	at := func(t time.Time) string { return t.UTC().Format("Mon 2 Jan 2006, 15:04 MST") }
	f := v.Final
	switch st.Status {
	case elicitation.StatusExpired:
		f.Heading = "This request expired"
		f.Text = []string{"It expired at " + at(st.ExpiresAt) + " before anyone answered, so nothing was decided.", "Ask the agent to send the request again."}
	case elicitation.StatusCanceled:
		f.Heading = "The agent canceled this request"
		f.Text = []string{"Nothing needs to be decided any more."}
	default: // submitted, declined, consumed
		declined := st.Decision == elicitation.DecisionDeclined
		selection := st.Kind == elicitation.KindSelection
		if sub != nil {
			f.Class = "done"
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
				f.Picked = sub.SelectedIDs
			default:
				f.Heading = "Approved"
				f.Text = []string{"The agent has your approval."}
			}
			break
		}
		f.Heading = "This request has been answered"
		if st.DecidedAt.IsZero() {
			f.Text = []string{"It was answered a moment ago. It cannot be answered again."}
			break
		}
		answer := "approved"
		switch {
		case declined && selection:
			answer = "answered with “none of these — refine”"
		case declined:
			answer = "declined"
		case selection:
			answer = "answered with a selection"
		}
		f.Text = []string{"It was " + answer + " on " + at(st.DecidedAt) + ". It cannot be answered again."}
	}
	v.Title = f.Heading
	return v
}
