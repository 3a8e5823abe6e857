package elicitation

import (
	"context"
	"strings"
	"testing"
)

func TestAuditNote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if AuditNoteFrom(WithAuditNote(ctx, "  \x00\n ")) != "" {
		t.Error("a blank note is kept")
	}
	if got := AuditNoteFrom(WithAuditNote(ctx, " gate=confirm\ttool=x\r\n ")); got != "gate=confirmtool=x" {
		t.Errorf("control characters kept: %q", got)
	}
	long := strings.Repeat("é", MaxAuditNote) // 2 bytes each
	got := AuditNoteFrom(WithAuditNote(ctx, long))
	if len(got) > MaxAuditNote || !strings.HasPrefix(long, got) || len(got) < MaxAuditNote-1 {
		t.Errorf("cut to %d bytes: %q", len(got), got)
	}
	if withNote(WithAuditNote(ctx, "n"), "approval") != "approval; n" || withNote(ctx, "approval") != "approval" || withNote(WithAuditNote(ctx, "n"), "") != "n" {
		t.Error("withNote")
	}
}
