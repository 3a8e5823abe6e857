package elicitation_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/receipt"
)

// inputErrors are the named errors Input.Payload refuses with.
var inputErrors = []error{
	elicitation.ErrMessageRequired, elicitation.ErrMessageTooLong, elicitation.ErrContentRequired,
	elicitation.ErrContextTooLarge, elicitation.ErrContextInvalid, elicitation.ErrNumberOutOfRange,
	elicitation.ErrSchemaTooLarge, elicitation.ErrSchemaTooManyFields, elicitation.ErrSchemaInvalid,
	elicitation.ErrTooFewOptions, elicitation.ErrTooManyOptions, elicitation.ErrOptionInvalid,
	elicitation.ErrOptionIDInvalid, elicitation.ErrOptionIDDuplicate, elicitation.ErrOptionTooLarge,
	elicitation.ErrSelectionBounds, elicitation.ErrTemplateTooLarge, elicitation.ErrCSSTooLarge,
	elicitation.ErrLabelInvalid, elicitation.ErrRequestTooLarge, elicitation.ErrFieldOfOtherKind,
	elicitation.ErrReviewersInvalid, elicitation.ErrApprovalsInvalid,
}

// FuzzPayload checks Input.Payload, the one validation of what an agent
// sends, for both kinds: a refusal is an invalid_argument *Error wrapping
// one of the named limit errors; an accepted payload stays within every
// stated bound, survives the JSON round trip a store makes unchanged, and
// its selection check accepts exactly the picks that are its own options,
// once each, within minSelections..maxSelections.
func FuzzPayload(f *testing.F) {
	f.Add(false, "Approve the refund?", `{"amount":12.5,"to":"acct-1"}`, "", "", 0, 0, "", 0, "", "")
	f.Add(false, "Fill in", "", formSchema, "", 0, 0, "ada@example.com,group:ops", 2, "Send", "")
	f.Add(false, "Not I-JSON", `{"a":"\ud800","a":1}`, "", "", 0, 0, "", 0, "", "")
	f.Add(false, "Both", `[1e400]`, `{"type":"object","properties":{"n":{"type":"number"}}}`, "", 0, 0, "", 0, "", "")
	f.Add(false, "Other kind", `{"a":1}`, "", `[{"id":"a"}]`, 0, 0, "", 0, "", "")
	f.Add(true, "Pick", "", "", `[{"id":"o0","label":"Option 0"},{"id":"o1"},{"id":"o2"}]`, 2, 3, "", 0, "", "o0,o2")
	f.Add(true, "Pick", "", "", `[{"id":"a"},{"id":"b"},{"id":"a"}]`, 0, 0, "", 0, "", "a")
	f.Add(true, "Pick", "", "", `[{"id":"x\ny"},{"id":7},"a",[1],null,{"label":"x"}]`, 0, 0, "", 0, "", "")
	f.Add(true, "Pick", "", "", `[{"id":"é","label":{"n":1e309}}]`, -1, 0, "a@b,A@B", 3, "  ", "é,é")
	f.Fuzz(func(t *testing.T, selection bool, message, context, schema, options string, minSel, maxSel int, reviewers string, approvals int, label, picks string) {
		// Text arrives as JSON strings (the MCP arguments, the HTTP API):
		// what is not UTF-8 is U+FFFD before Payload sees it.
		message, label, reviewers = asJSON(message), asJSON(label), asJSON(reviewers)
		in := elicitation.Input{Message: message, Labels: elicitation.Labels{Submit: label}, Approvals: approvals}
		kind := elicitation.KindApproval
		if selection {
			kind = elicitation.KindSelection
			in.MinSelections, in.MaxSelections = minSel, maxSel
			if err := json.Unmarshal([]byte(options), &in.Options); err != nil {
				in.Options = []json.RawMessage{json.RawMessage(options)}
			}
		} else {
			in.Context, in.RequestedSchema = rawOrNil(context), rawOrNil(schema)
			if options != "" {
				in.Options = []json.RawMessage{json.RawMessage(options)} // the other kind's field
			}
		}
		if reviewers != "" {
			in.Reviewers = strings.Split(reviewers, ",")
		}
		p, err := in.Payload(kind)
		if err != nil {
			var e *elicitation.Error
			if !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument || e.Message == "" {
				t.Fatalf("refusal is not an invalid_argument *Error: %#v", err)
			}
			if !isOneOf(err, inputErrors) {
				t.Fatalf("refusal wraps no named limit error: %v", err)
			}
			return
		}
		checkPayloadBounds(t, kind, p)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal accepted payload: %v", err)
		}
		var back elicitation.Payload
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("accepted payload does not read back: %v\n%s", err, b)
		}
		if b2, _ := json.Marshal(back); !bytes.Equal(b, b2) {
			t.Fatalf("payload changed through JSON:\n%s\n%s", b, b2)
		}
		if kind == elicitation.KindSelection {
			checkSelectionAgainst(t, p, strings.Split(picks, ","))
		}
	})
}

// asJSON is s as a JSON string carries it.
func asJSON(s string) string {
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &s)
	return s
}

func rawOrNil(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

func isOneOf(err error, named []error) bool {
	for _, n := range named {
		if errors.Is(err, n) {
			return true
		}
	}
	return false
}

// checkPayloadBounds asserts the stated limits of SPEC §2 on an accepted p.
func checkPayloadBounds(t *testing.T, kind elicitation.Kind, p elicitation.Payload) {
	t.Helper()
	if strings.TrimSpace(p.Message) == "" || len(p.Message) > elicitation.MaxMessageBytes {
		t.Fatalf("accepted message of %d bytes", len(p.Message))
	}
	if b, _ := json.Marshal(p); len(b) > elicitation.MaxRequestBytes {
		t.Fatalf("accepted request of %d bytes", len(b))
	}
	if l := p.Labels.Submit; l != "" && (strings.TrimSpace(l) == "" || utf8.RuneCountInString(l) > elicitation.MaxLabelChars) {
		t.Fatalf("accepted label %q", l)
	}
	if kind == elicitation.KindApproval {
		if p.Options != nil || p.MinSelections != 0 || p.MaxSelections != 0 {
			t.Fatalf("approval carries selection fields: %+v", p)
		}
		if p.Context == nil && p.Schema == nil {
			t.Fatal("approval accepted with neither context nor requestedSchema")
		}
		if p.Context != nil && (len(p.Context) > elicitation.MaxContextBytes || !json.Valid(p.Context)) {
			t.Fatalf("accepted context of %d bytes, valid %v", len(p.Context), json.Valid(p.Context))
		}
		if _, err := receipt.Digest(p.Context); err != nil {
			t.Fatalf("accepted context %q that no receipt can digest: %v", p.Context, err)
		}
		if p.Schema != nil && len(p.Schema.Fields) > elicitation.MaxSchemaFields {
			t.Fatalf("accepted schema of %d fields", len(p.Schema.Fields))
		}
		return
	}
	if n := len(p.Options); n == 0 || n > elicitation.MaxOptions || p.MinSelections < 1 || p.MinSelections > p.MaxSelections || p.MaxSelections > n {
		t.Fatalf("accepted %d options with selections %d..%d", n, p.MinSelections, p.MaxSelections)
	}
	seen := map[string]bool{}
	for _, o := range p.Options {
		if seen[o.ID] || strings.TrimSpace(o.ID) == "" || utf8.RuneCountInString(o.ID) > elicitation.MaxOptionIDChars ||
			!utf8.ValidString(o.ID) || strings.ContainsFunc(o.ID, unicode.IsControl) || len(o.Raw) > elicitation.MaxOptionBytes {
			t.Fatalf("accepted option id %q (raw %d bytes, seen %v)", o.ID, len(o.Raw), seen[o.ID])
		}
		seen[o.ID] = true
	}
}

// checkSelectionAgainst asserts that CheckSelection accepts ids exactly
// when they are distinct options of p, as many as p allows.
func checkSelectionAgainst(t *testing.T, p elicitation.Payload, ids []string) {
	t.Helper()
	known := map[string]bool{}
	for _, o := range p.Options {
		known[o.ID] = true
	}
	ok, seen := len(ids) >= p.MinSelections && len(ids) <= p.MaxSelections, map[string]bool{}
	for _, id := range ids {
		ok = ok && known[id] && !seen[id]
		seen[id] = true
	}
	err := p.CheckSelection(ids)
	switch {
	case ok && err != nil:
		t.Fatalf("valid picks %q refused: %v", ids, err)
	case !ok && err == nil:
		t.Fatalf("invalid picks %q accepted (options %d, %d..%d)", ids, len(p.Options), p.MinSelections, p.MaxSelections)
	case err != nil && (!errors.Is(err, elicitation.ErrSelectionInvalid) || elicitation.CodeOf(err) != elicitation.CodeInvalidArgument):
		t.Fatalf("refused picks without ErrSelectionInvalid: %v", err)
	}
}

// FuzzCleanComment checks a reviewer's comment: refused only with
// ErrCommentTooLong or ErrCommentInvalid; accepted text is trimmed, valid
// UTF-8, within MaxCommentChars, free of control characters other than
// newline and tab (no carriage return), and cleaning it again changes
// nothing.
func FuzzCleanComment(f *testing.F) {
	for _, s := range []string{"", "  fine \r\n thanks\r", "tab\tok", "bell\a", "\xff\xfe", strings.Repeat("é", elicitation.MaxCommentChars), "a\u0085b", "\u2028x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := elicitation.CleanComment(s)
		if err != nil {
			if !errors.Is(err, elicitation.ErrCommentTooLong) && !errors.Is(err, elicitation.ErrCommentInvalid) || elicitation.CodeOf(err) != elicitation.CodeInvalidArgument {
				t.Fatalf("refusal without a comment error: %v", err)
			}
			return
		}
		switch {
		case !utf8.ValidString(got), utf8.RuneCountInString(got) > elicitation.MaxCommentChars, got != strings.TrimSpace(got),
			strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
			t.Fatalf("accepted comment %q", got)
		}
		if again, err := elicitation.CleanComment(got); err != nil || again != got {
			t.Fatalf("cleaning %q again gave %q, %v", got, again, err)
		}
	})
}
