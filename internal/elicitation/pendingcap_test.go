package elicitation_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/boltstore"
	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testclock"
)

// TestPendingCap (#38.1): one principal's pending requests are bounded
// (Config.MaxPending), so that they cannot push other principals' out of a
// reviewer's inbox, which reads the MaxInbox most urgent: past the bound a
// create is refused with busy, saying which bound and what to do, and the
// other principal's request stays in the inbox; a decision makes room,
// and so does an expiry; a negative bound is none, the default far below
// MaxInbox.
func TestPendingCap(t *testing.T) {
	t.Parallel()
	if elicitation.DefaultMaxPending*10 > elicitation.MaxInbox {
		t.Errorf("DefaultMaxPending %d is not far below MaxInbox %d", elicitation.DefaultMaxPending, elicitation.MaxInbox)
	}
	ctx := context.Background()
	c := testclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	const bound = 4
	svc := elicitation.NewService(elicitation.Config{Store: store, Now: c.Now, SignIn: true, MaxPending: bound})
	create := func(svc *elicitation.Service, owner string, timeout int) (elicitation.Created, error) {
		return svc.Create(ctx, owner, elicitation.KindApproval, elicitation.Input{Message: "Deploy?", Context: json.RawMessage(`1`), TimeoutSeconds: timeout})
	}
	other, err := create(svc, "honest-agent", 3600)
	if err != nil {
		t.Fatal(err)
	}
	var flood []elicitation.Created
	for i := range bound {
		cr, err := create(svc, "flooder", 60+i) // all more urgent than the honest agent's
		if err != nil {
			t.Fatalf("create %d of %d: %v", i+1, bound, err)
		}
		flood = append(flood, cr)
	}
	_, err = create(svc, "flooder", 60)
	var e *elicitation.Error
	if !errors.As(err, &e) || e.Code != elicitation.CodeBusy || !errors.Is(err, elicitation.ErrBusy) || !strings.Contains(e.Message, "4 requests pending") {
		t.Fatalf("create past the bound: %v, want busy naming the bound", err)
	}
	if _, err := create(svc, "honest-agent", 3600); err != nil {
		t.Fatalf("another principal's create: %v", err)
	}
	l, err := svc.ReviewerInbox(ctx, elicitation.Identity{Subject: "r", Email: "r@example.com", EmailVerified: true}, elicitation.InboxFilter{Owner: "honest-agent"})
	if err != nil || l.Total != 2 || !slices.Contains(itemIDs(l.Items), other.State.ID) {
		t.Fatalf("the honest agent's inbox rows: %v (%v), want both of its requests", itemIDs(l.Items), err)
	}

	if _, err := svc.Cancel(ctx, "flooder", flood[0].State.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := create(svc, "flooder", 3600); err != nil {
		t.Fatalf("create after a cancel made room: %v", err)
	}
	c.Add(61 * time.Second) // flood[1] (61 s) expires
	if _, err := create(svc, "flooder", 60); err != nil {
		t.Fatalf("create after an expiry made room: %v", err)
	}
	if _, err := create(svc, "flooder", 60); !errors.Is(err, elicitation.ErrBusy) {
		t.Fatalf("create past the bound again: %v, want busy", err)
	}

	unbounded := elicitation.NewService(elicitation.Config{Store: store, Now: c.Now, MaxPending: -1})
	if _, err := create(unbounded, "flooder", 60); err != nil {
		t.Fatalf("create with no bound: %v", err)
	}
}
