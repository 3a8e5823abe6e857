package elicitation

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Submission is a reviewer's answer as it arrives from the review page.
type Submission struct {
	// ID names this attempt (one per rendered page); a retry of the same
	// attempt is answered as the success it was.
	ID       string
	Decision Decision
	// SelectedIDs are the picked option ids (selection, submitted).
	SelectedIDs []string
	// Form holds the raw form values (approval with a requestedSchema,
	// submitted), every value as text.
	Form map[string][]string
	// Comment is the reviewer's optional note, as typed (any decision).
	Comment string
	// By is the reviewer's principal; empty means Reviewer.
	By string
	// Via says where the answer was given; empty means ViaPage.
	Via Via
	// Rule, with an approval, also makes it a standing approval of
	// requests like this one (nil: none).
	Rule *RuleInput
}

// Via names where a decision was made: the review page, the MCP App in
// the agent's host, the host's own form (a form elicitation), or a Slack
// message's buttons.
type Via string

const (
	ViaPage     Via = "page"
	ViaApp      Via = "app"
	ViaHostForm Via = "host-form"
	ViaSlack    Via = "slack"
)

// CheckSelection validates picked option ids: every id one of the options,
// none twice, and their count within MinSelections..MaxSelections.
func (p Payload) CheckSelection(ids []string) error {
	known := make(map[string]bool, len(p.Options))
	for _, o := range p.Options {
		known[o.ID] = true
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		switch {
		case !known[id]:
			return invalid(ErrSelectionInvalid, "selectedIds", "%q is not one of the options", truncate(id, 64))
		case seen[id]:
			return invalid(ErrSelectionInvalid, "selectedIds", "%q was picked twice", truncate(id, 64))
		}
		seen[id] = true
	}
	if n := len(ids); n < p.MinSelections || n > p.MaxSelections {
		return invalid(ErrSelectionInvalid, "selectedIds", "%s; %d were picked", p.SelectionRule(), n)
	}
	return nil
}

// SelectionRule says in words how many options must be picked.
func (p Payload) SelectionRule() string {
	switch {
	case p.MinSelections == p.MaxSelections && p.MinSelections == 1:
		return "pick exactly one option"
	case p.MinSelections == p.MaxSelections:
		return fmt.Sprintf("pick exactly %d options", p.MinSelections)
	}
	return fmt.Sprintf("pick between %d and %d options", p.MinSelections, p.MaxSelections)
}

// answer validates a submission against the payload and builds the answer
// to store. A decline carries only its comment (nil without one).
func (p Payload) answer(kind Kind, sub Submission) (*Answer, error) {
	switch sub.Decision {
	case DecisionDeclined, DecisionSubmitted:
	default:
		return nil, invalid(ErrSelectionInvalid, "decision", "decision must be submitted or declined")
	}
	comment, err := CleanComment(sub.Comment)
	if err != nil {
		return nil, err
	}
	if sub.Decision == DecisionDeclined {
		if comment == "" {
			return nil, nil
		}
		return &Answer{Comment: comment}, nil
	}
	a, err := p.submitted(kind, sub)
	if err != nil {
		return nil, err
	}
	a.Comment = comment
	return a, nil
}

// submitted is the answer of a submitted decision, without its comment.
func (p Payload) submitted(kind Kind, sub Submission) (*Answer, error) {
	if kind == KindSelection {
		if err := p.CheckSelection(sub.SelectedIDs); err != nil {
			return nil, err
		}
		return &Answer{SelectedIDs: append([]string{}, sub.SelectedIDs...)}, nil
	}
	if p.Schema == nil {
		if len(sub.Form) > 0 {
			return nil, invalid(ErrFormInvalid, "form", "this approval has no form; submit no values")
		}
		return &Answer{}, nil
	}
	vals, err := p.Schema.ParseForm(sub.Form)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("encode form values: %w", err)
	}
	return &Answer{Form: b}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
