package elicitation

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxAuditNote bounds an audit note, in bytes.
const MaxAuditNote = 200

type auditNoteKey struct{}

// WithAuditNote carries a caller's short note into the audit entries the
// Service writes for that call (a request's creation, a result's fetch):
// the proxy's human gate names the tool and the argument digest a review
// is for ("gate=confirm tool=delete_file digest=sha256:…"), so the request's
// own trail says what it decided. Like every Detail it must never hold
// argument values, keys or tokens. Control characters are dropped and the
// note is cut at MaxAuditNote bytes (on a character boundary).
func WithAuditNote(ctx context.Context, note string) context.Context {
	note = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.TrimSpace(note))
	if len(note) > MaxAuditNote {
		cut := MaxAuditNote
		for cut > 0 && !utf8.RuneStart(note[cut]) {
			cut--
		}
		note = note[:cut]
	}
	if note == "" {
		return ctx
	}
	return context.WithValue(ctx, auditNoteKey{}, note)
}

// AuditNoteFrom returns the note ctx carries, or "".
func AuditNoteFrom(ctx context.Context) string {
	n, _ := ctx.Value(auditNoteKey{}).(string)
	return n
}

// withNote appends ctx's audit note to a Detail.
func withNote(ctx context.Context, detail string) string {
	n := AuditNoteFrom(ctx)
	switch {
	case n == "":
		return detail
	case detail == "":
		return n
	}
	return detail + "; " + n
}

type repeatReadKey struct{}

// WithRepeatRead marks a call as a reader that is given the same outcome
// again and again (a task whose every poll carries the result): Result then
// consumes and audits only a fetch that finds the request not yet consumed,
// and a later one reads the outcome without writing anything. (Two first
// fetches at the same moment may both be audited.)
func WithRepeatRead(ctx context.Context) context.Context {
	return context.WithValue(ctx, repeatReadKey{}, true)
}

func isRepeatRead(ctx context.Context) bool {
	v, _ := ctx.Value(repeatReadKey{}).(bool)
	return v
}
