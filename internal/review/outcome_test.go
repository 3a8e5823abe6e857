package review

import (
	"net/http"
	"testing"
)

// TestOutcomesTable: every outcome has its rule (status and page), and the
// pages that tell the reviewer what went wrong say something.
func TestOutcomesTable(t *testing.T) {
	for o := outPending; o <= outInternal; o++ {
		r, ok := outcomes[o]
		if !ok || r.status == 0 {
			t.Errorf("outcome %d has no rule", o)
			continue
		}
		if r.page == pageProblem && r.heading == "" {
			t.Errorf("outcome %d: a problem page without a heading", o)
		}
		if r.status >= 400 && r.page == pagePending && r.status != http.StatusUnprocessableEntity {
			t.Errorf("outcome %d: status %d with the answerable page", o, r.status)
		}
	}
	if len(outcomes) != int(outInternal)+1 {
		t.Errorf("%d rules for %d outcomes", len(outcomes), int(outInternal)+1)
	}
}
