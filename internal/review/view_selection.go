package review

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// FilterMinOptions is the smallest list that gets a filter box.
const FilterMinOptions = 15

// Bounds of a filter: longer queries are cut, further words ignored, so a
// filter costs at most MaxFilterTerms substring scans of each option.
const (
	MaxFilterChars = 200
	MaxFilterTerms = 8
)

type selectionView struct {
	Legend, Rule string
	Count        string // the bounds beside the live pick count
	InputType    string // radio | checkbox
	Required     bool   // single select: the browser asks for a pick
	Filter       *filterView
	Groups       []rowGroup // the rows shown, in option order; see groups
	Templated    bool       // rows come from rowTemplate, in one frame per group
	HasHover     bool       // one details frame per shown option
	Hovers       []rowView  // the shown rows that have a details frame
	HoverAllDoc  string     // one frame with every option's details (long lists)
	HeadingDoc   *frameView
	FooterDoc    *frameView
	RowHeight    int
}

// filterView is the search box of a long list.
type filterView struct {
	Query        string
	Shown, Total int
	Active       bool
}

// rowGroup is a run of rows with its own caption (and, templated, its own
// rows frame, so that frame rows stay beside their controls).
type rowGroup struct {
	ID, Caption string
	Rows        []rowView
	RowsDoc     string
}

type rowView struct {
	Index       int
	ID, Label   string
	Checked     bool
	HoverDoc    string
	HoverHeight int
	row         string // rowTemplate output
}

func selection(p elicitation.Payload, out rendered, pr *prior) *selectionView {
	s := &selectionView{InputType: "checkbox", RowHeight: RowHeight, Templated: out.Rows != nil}
	if p.MaxSelections == 1 {
		s.InputType, s.Required = "radio", true
		s.Legend = "Pick one"
	} else {
		s.Legend = "Pick options"
	}
	rule := p.SelectionRule()
	s.Rule = sentence(rule)
	s.Count = rule
	if p.MaxSelections > 1 {
		s.Rule += " The server checks the count when you submit."
	}
	picked := map[string]bool{}
	query := ""
	if pr != nil {
		for _, id := range pr.selected {
			picked[id] = true
		}
		query = pr.query
	}
	rows := make([]rowView, len(p.Options))
	perOption := len(out.Hovers) <= MaxHoverFrames
	if out.Hovers != nil && !perOption {
		s.HoverAllDoc = hoversDoc(p.CSS, p.Options, out.Hovers)
	}
	for i, o := range p.Options {
		r := rowView{Index: i, ID: o.ID, Label: o.DisplayLabel(), Checked: picked[o.ID]}
		if out.Hovers != nil && perOption {
			r.HoverDoc = frameDoc(p.CSS, "", balance(out.Hovers[i]))
			r.HoverHeight = frameHeight(out.Hovers[i], 64, 360)
			s.HasHover = true
		}
		if out.Rows != nil {
			r.row = out.Rows[i]
		}
		rows[i] = r
	}
	if len(p.Options) >= FilterMinOptions {
		s.Filter = &filterView{Query: query, Total: len(p.Options)}
	}
	s.Groups = groups(p.Options, rows, s.Filter)
	for gi := range s.Groups {
		g := &s.Groups[gi]
		if s.Templated {
			frameRows := make([]string, len(g.Rows))
			for i, r := range g.Rows {
				frameRows[i] = r.row
			}
			g.RowsDoc = rowsDoc(p.CSS, frameRows)
		}
		for _, r := range g.Rows {
			if r.HoverDoc != "" {
				s.Hovers = append(s.Hovers, r)
			}
		}
	}
	s.HeadingDoc = markupFrame(p.CSS, out.Heading, 48, 320)
	s.FooterDoc = markupFrame(p.CSS, out.Footer, 48, 320)
	return s
}

// groups splits the rows to show. Without an active filter: every row, in
// one group. With one: first the picks the filter does not match (so that
// a pick is never lost, and can still be unpicked), then the matches. Each
// picked option is a checked native control wherever it is, so the form
// always sends every pick.
func groups(opts []elicitation.Option, rows []rowView, f *filterView) []rowGroup {
	terms := []string(nil)
	if f != nil {
		if q := []rune(f.Query); len(q) > MaxFilterChars {
			f.Query = string(q[:MaxFilterChars])
		}
		terms = strings.Fields(strings.ToLower(f.Query))
		terms = terms[:min(len(terms), MaxFilterTerms)]
	}
	if len(terms) == 0 {
		if f != nil {
			f.Shown = len(rows)
		}
		return []rowGroup{{ID: "all", Rows: rows}}
	}
	f.Active = true
	var kept, matched []rowView
	for i, r := range rows {
		switch {
		case matches(opts[i], terms):
			matched = append(matched, r)
		case r.Checked:
			kept = append(kept, r)
		}
	}
	f.Shown = len(matched)
	var gs []rowGroup
	if len(kept) > 0 {
		gs = append(gs, rowGroup{ID: "kept", Caption: "Picked earlier, not matching “" + f.Query + "” (" + strconv.Itoa(len(kept)) + ")", Rows: kept})
	}
	caption := strconv.Itoa(len(matched)) + " of " + strconv.Itoa(f.Total) + " match “" + f.Query + "”"
	if len(matched) == 0 {
		caption = "No option matches “" + f.Query + "”. Clear the filter to see them all."
	}
	return append(gs, rowGroup{ID: "matched", Caption: caption, Rows: matched})
}

// matches reports whether every term occurs (case-insensitively) in the
// option's id, label or any string or number value of its data.
func matches(o elicitation.Option, terms []string) bool {
	text := strings.ToLower(o.ID + "\n" + o.Label + "\n" + strings.Join(leafText(o.Raw), "\n"))
	for _, t := range terms {
		if !strings.Contains(text, t) {
			return false
		}
	}
	return true
}

// leafText is every string and number in raw JSON, in document order.
func leafText(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case float64:
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
