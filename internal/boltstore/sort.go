package boltstore

import (
	"slices"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

func sortEntries(es []elicitation.AuditEntry) {
	slices.SortStableFunc(es, func(a, b elicitation.AuditEntry) int { return a.At.Compare(b.At) })
}
