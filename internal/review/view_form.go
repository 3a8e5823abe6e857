package review

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

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

func approval(p elicitation.Payload, out rendered, pr *prior) (*approvalView, error) {
	a := &approvalView{}
	if len(p.Context) > 0 {
		s, err := readableJSON(p.Context)
		if err != nil {
			return nil, fmt.Errorf("indent context: %w", err)
		}
		a.ContextJSON = s
	}
	a.DisplayDoc = markupFrame(p.CSS, out.Display, 96, 480)
	if p.Schema != nil {
		for i, f := range p.Schema.Fields {
			a.Fields = append(a.Fields, field(i, f, pr))
		}
	}
	return a, nil
}

// fieldState is what a field's control starts from: the values submitted
// last time (a 422 page), else the schema's default.
type fieldState struct {
	retry     bool // a refused submission is shown again
	submitted []string
}

func (s fieldState) text(f elicitation.Field) string {
	if s.retry {
		if len(s.submitted) > 0 {
			return s.submitted[0]
		}
		return ""
	}
	return defaultText(f)
}

// field builds one form field's control; each kind of field has its own
// builder below.
func field(i int, f elicitation.Field, pr *prior) fieldView {
	v := fieldView{ID: "f-" + strconv.Itoa(i), Name: f.Name, InputName: formPrefix + f.Name, Label: f.Title, Required: f.Required}
	if v.Label == "" {
		v.Label = f.Name
	}
	var fs fieldState
	if pr != nil {
		fs = fieldState{retry: true, submitted: pr.form[f.Name]}
		v.Error = pr.fields[f.Name]
	}
	if f.Description != "" {
		v.note("desc", f.Description)
	}
	switch f.Type {
	case elicitation.FieldBoolean:
		v.boolean(f, fs)
	case elicitation.FieldSelect, elicitation.FieldMultiSelect:
		v.choices(f, fs)
	case elicitation.FieldNumber, elicitation.FieldInteger:
		v.number(f, fs)
	default:
		v.text(f, fs)
	}
	if v.Error != "" {
		id := v.ID + "-err"
		v.Notes = append(v.Notes, noteView{ID: id, Class: "ferr", Text: v.Label + " " + v.Error + "."})
		v.Describe = strings.TrimSpace(v.Describe + " " + id)
	}
	return v
}

// note adds a line under the field and names it in aria-describedby.
func (v *fieldView) note(class, text string) {
	id := fmt.Sprintf("%s-%s%d", v.ID, class, len(v.Notes))
	v.Notes = append(v.Notes, noteView{ID: id, Class: class, Text: text})
	if v.Describe != "" {
		v.Describe += " "
	}
	v.Describe += id
}

func (v *fieldView) boolean(f elicitation.Field, fs fieldState) {
	v.Control = "checkbox"
	if fs.retry {
		v.Checked = len(fs.submitted) > 0 && (fs.submitted[0] == "true" || fs.submitted[0] == "on")
	} else if b, ok := f.Default.(bool); ok {
		v.Checked = b
	}
	v.note("note", "Unchecked means no.")
}

func (v *fieldView) choices(f elicitation.Field, fs fieldState) {
	chosen := map[string]bool{}
	if fs.retry {
		for _, s := range fs.submitted {
			chosen[s] = true
		}
	} else {
		for _, s := range defaultChoices(f.Default) {
			chosen[s] = true
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
	if f.Type != elicitation.FieldMultiSelect {
		return
	}
	v.Control = "multi"
	switch {
	case f.MinItems != nil && f.MaxItems != nil:
		v.note("note", fmt.Sprintf("Pick %d to %d.", *f.MinItems, *f.MaxItems))
	case f.MinItems != nil:
		v.note("note", fmt.Sprintf("Pick at least %d.", *f.MinItems))
	case f.MaxItems != nil:
		v.note("note", fmt.Sprintf("Pick at most %d.", *f.MaxItems))
	}
}

// defaultChoices reads a select's default: a string, or a list of them as
// parsed or as decoded from the store.
func defaultChoices(d any) []string {
	switch d := d.(type) {
	case string:
		return []string{d}
	case []string:
		return d
	case []any:
		var out []string
		for _, v := range d {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func (v *fieldView) number(f elicitation.Field, fs fieldState) {
	v.Control, v.InputType, v.Value = "input", "number", fs.text(f)
	v.Step, v.InputMode = "any", "decimal"
	if f.Type == elicitation.FieldInteger {
		v.Step, v.InputMode = "1", "numeric"
	}
	v.Min, v.Max = num(f.Minimum), num(f.Maximum)
	switch {
	case f.Minimum != nil && f.Maximum != nil:
		v.note("note", fmt.Sprintf("From %s to %s.", v.Min, v.Max))
	case f.Minimum != nil:
		v.note("note", "At least "+v.Min+".")
	case f.Maximum != nil:
		v.note("note", "At most "+v.Max+".")
	}
}

func (v *fieldView) text(f elicitation.Field, fs fieldState) {
	v.Control, v.InputType, v.Value = "input", "text", fs.text(f)
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
		if !fs.retry {
			v.Value = localDateTime(v.Value)
		}
		v.note("note", "Date and time in "+zoneName()+": a time without an offset is read as "+zoneName()+".")
	}
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
