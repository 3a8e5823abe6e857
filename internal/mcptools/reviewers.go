package mcptools

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// reviewers reads the optional reviewers: who may decide, checked against
// the signed-in reviewer (the Service validates the entries and refuses
// them on a server without reviewer sign-in).
func (a args) reviewers() ([]string, error) {
	r := a.raw("reviewers")
	if r == nil {
		return nil, nil
	}
	var list []string
	if r[0] != '[' || json.Unmarshal(r, &list) != nil {
		return nil, badArg("reviewers", `reviewers must be an array of e-mail addresses and "group:NAME" entries, such as ["alice@example.com", "group:ops"], not %s`, describe(r))
	}
	return list, nil
}

// approvals reads the optional approvals: how many distinct reviewers
// must approve (0 when absent: one).
func (a args) approvals() (int, error) {
	n, _, err := a.integer("approvals", 1, fmt.Sprintf("a whole number of distinct reviewers from 1 to %d (default 1)", elicitation.MaxApprovals))
	return n, err
}

// deciders reads reviewers and approvals into their destinations.
func (a args) deciders(reviewers *[]string, approvals *int) error {
	var err error
	if *reviewers, err = a.reviewers(); err != nil {
		return err
	}
	*approvals, err = a.approvals()
	return err
}
