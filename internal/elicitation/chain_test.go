package elicitation

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// chained returns n entries of request id, chained after unchained ones.
func chained(id string, unchained, n int) []AuditEntry {
	at := time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)
	var out []AuditEntry
	for i := range unchained {
		out = append(out, AuditEntry{At: at.Add(time.Duration(i) * time.Second), Action: ActionRendered, Principal: "old"})
	}
	var head AuditHead
	for i := range n {
		e := ChainEntry(id, head, AuditEntry{At: at.Add(time.Duration(unchained+i) * time.Second), Action: ActionRendered, Principal: "r", Detail: string(rune('a' + i))})
		out = append(out, e)
		head = e.Head()
	}
	return out
}

func TestEntryHashIsStable(t *testing.T) {
	t.Parallel()
	e := AuditEntry{At: time.Unix(1, 5).UTC(), Action: ActionCreated, Principal: "alice", Detail: "approval", Via: ViaPage}
	// Recomputed outside Go, in Python, from EntryHash's documentation: a
	// change to the encoding would break every stored chain.
	const want = "95853c89f2824f52651f71f6fde3c646dfdcbca6d151993789b2e715a6723c23"
	if got := ChainEntry("req-1", AuditHead{}, e).Hash; got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
	// Every field and the id are covered.
	base := ChainEntry("req-1", AuditHead{}, e)
	for name, alt := range map[string]AuditEntry{
		"at":        func() AuditEntry { x := base; x.At = x.At.Add(1); return x }(),
		"action":    func() AuditEntry { x := base; x.Action = ActionCanceled; return x }(),
		"principal": func() AuditEntry { x := base; x.Principal = "bob"; return x }(),
		"detail":    func() AuditEntry { x := base; x.Detail = "approvalx"; return x }(),
		"via":       func() AuditEntry { x := base; x.Via = ViaSlack; return x }(),
		"seq":       func() AuditEntry { x := base; x.Seq = 2; return x }(),
		"prev":      func() AuditEntry { x := base; x.Prev = "00"; return x }(),
		"issuer":    func() AuditEntry { x := base; x.Issuer = "https://slack.com"; return x }(),
		"shifted":   func() AuditEntry { x := base; x.Principal, x.Detail = "alicea", "pproval"; return x }(),
	} {
		if EntryHash("req-1", alt) == base.Hash {
			t.Errorf("%s is not covered by the hash", name)
		}
	}
	if EntryHash("req-2", base) == base.Hash {
		t.Error("the request id is not covered by the hash")
	}
}

func TestVerifyAudit(t *testing.T) {
	t.Parallel()
	const id = "req-1"
	good := chained(id, 2, 5)
	forged := ChainEntry(id, good[3].Head(), AuditEntry{At: good[3].At, Action: ActionDecided, Principal: "mallory"})
	for _, c := range []struct {
		name  string
		trail func([]AuditEntry) []AuditEntry
		kind  string
		index int
	}{
		{"intact", func(e []AuditEntry) []AuditEntry { return e }, "", 0},
		{"empty", func([]AuditEntry) []AuditEntry { return nil }, "", 0},
		{"cut at the end", func(e []AuditEntry) []AuditEntry { return e[:6] }, "", 0},
		{"edited", func(e []AuditEntry) []AuditEntry { e[4].Principal = "mallory"; return e }, BreakEdited, 4},
		{"removed", func(e []AuditEntry) []AuditEntry { return slices.Delete(e, 3, 4) }, BreakRemoved, 3},
		{"first removed", func(e []AuditEntry) []AuditEntry { return slices.Delete(e, 2, 3) }, BreakRemoved, 2},
		{"reordered", func(e []AuditEntry) []AuditEntry { e[3], e[4] = e[4], e[3]; return e }, BreakReordered, 3},
		{"inserted, forged", func(e []AuditEntry) []AuditEntry { return slices.Insert(e, 4, forged) }, BreakInserted, 5},
		{"inserted, copied", func(e []AuditEntry) []AuditEntry { return slices.Insert(e, 5, e[2]) }, BreakInserted, 5},
		{"inserted, unhashed", func(e []AuditEntry) []AuditEntry {
			return slices.Insert(e, 4, AuditEntry{Action: ActionDecided})
		}, BreakInserted, 4},
		{"replaced, rehashed", func(e []AuditEntry) []AuditEntry { e[4] = forged; return e }, BreakInserted, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			trail := c.trail(slices.Clone(good))
			check, err := VerifyAudit(id, trail)
			var b *AuditBreak
			switch {
			case c.kind == "" && err != nil:
				t.Fatalf("VerifyAudit: %v", err)
			case c.kind == "" && len(trail) == 0:
				if check != (AuditCheck{}) {
					t.Errorf("check = %+v", check)
				}
			case c.kind == "":
				if check.Unchained != 2 || check.Chained != len(trail)-2 || check.Head != trail[len(trail)-1].Head() {
					t.Errorf("check = %+v", check)
				}
			case !errors.As(err, &b):
				t.Fatalf("VerifyAudit = %v, want a %s break", err, c.kind)
			case b.Kind != c.kind || b.Index != c.index:
				t.Errorf("break = %v, want %s at %d", b, c.kind, c.index)
			}
		})
	}
	if _, err := VerifyAudit("req-2", good); err == nil {
		t.Error("a trail verifies as another request's")
	}
}
