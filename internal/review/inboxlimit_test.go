package review_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/ratelimit"
	"github.com/mcp-elicitation/elicitation/internal/review"
)

// TestInboxReadsBounded: every inbox GET reads up to MaxInbox+1 pending
// entries, and any account the issuer signs in may ask for one, so the
// views are counted per reviewer and in all (Options.InboxReads): past
// either, 429 with Retry-After, and nothing is read.
func TestInboxReadsBounded(t *testing.T) {
	t.Parallel()
	type view struct {
		who     string
		refused bool
	}
	for _, tc := range []struct {
		name      string
		each, all int
		views     []view
	}{
		{name: "per reviewer", each: 2, all: 100, views: []view{{"bob", false}, {"bob", false}, {"bob", true}, {"carol", false}}},
		{name: "in all", each: 100, all: 2, views: []view{{"bob", false}, {"carol", false}, {"eve", true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newSignedInEnv(t, func(o *review.Options) {
				o.InboxReads = ratelimit.New(ratelimit.Rate{Count: tc.each, Per: time.Hour}, ratelimit.Rate{Count: tc.all, Per: time.Hour}, 100)
			})
			e.create("ci-bot", elicitation.Input{Message: "Deploy?", TimeoutSeconds: 1800})
			for i, v := range tc.views {
				res, err := e.as(v.who).Get(e.srv.URL + "/review/")
				if err != nil {
					t.Fatal(err)
				}
				r := read(t, res)
				want, says := http.StatusOK, "Deploy?"
				if v.refused {
					want, says = http.StatusTooManyRequests, "more often than this server takes"
					if res.Header.Get("Retry-After") == "" {
						t.Errorf("view %d by %s: 429 without Retry-After", i, v.who)
					}
				}
				if r.Status != want || !strings.Contains(r.Body, says) {
					t.Errorf("view %d by %s: %d, want %d saying %q\n%.600s", i, v.who, r.Status, want, says, r.Body)
				}
			}
		})
	}
}
