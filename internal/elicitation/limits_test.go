package elicitation_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

func options(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"id":"o%d","label":"Option %d"}`, i, i))
	}
	return out
}

func raws(s ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(s))
	for i, v := range s {
		out[i] = json.RawMessage(v)
	}
	return out
}

func TestSelectionLimits(t *testing.T) {
	t.Parallel()
	valid := func() elicitation.Input {
		return elicitation.Input{Message: "Pick", Options: options(3)}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*elicitation.Input)
		want   error  // nil means valid
		field  string // the field the error names
	}{
		{"valid defaults", func(*elicitation.Input) {}, nil, ""},
		{"500 options", func(in *elicitation.Input) { in.Options = options(500) }, nil, ""},
		{"missing message", func(in *elicitation.Input) { in.Message = "" }, elicitation.ErrMessageRequired, "message"},
		{"blank message", func(in *elicitation.Input) { in.Message = " \n\t" }, elicitation.ErrMessageRequired, "message"},
		{"message at limit", func(in *elicitation.Input) { in.Message = strings.Repeat("m", 4096) }, nil, ""},
		{"message over limit", func(in *elicitation.Input) { in.Message = strings.Repeat("m", 4097) }, elicitation.ErrMessageTooLong, "message"},
		{"no options", func(in *elicitation.Input) { in.Options = nil }, elicitation.ErrTooFewOptions, "options"},
		{"501 options", func(in *elicitation.Input) { in.Options = options(501) }, elicitation.ErrTooManyOptions, "options"},
		{"option not an object", func(in *elicitation.Input) { in.Options = raws(`"a"`) }, elicitation.ErrOptionInvalid, "options[0]"},
		{"option array", func(in *elicitation.Input) { in.Options = raws(`[1]`) }, elicitation.ErrOptionInvalid, "options[0]"},
		{"option null", func(in *elicitation.Input) { in.Options = raws(`null`) }, elicitation.ErrOptionInvalid, "options[0]"},
		{"option without id", func(in *elicitation.Input) { in.Options = raws(`{"label":"x"}`) }, elicitation.ErrOptionInvalid, "options[0].id"},
		{"numeric id", func(in *elicitation.Input) { in.Options = raws(`{"id":7}`) }, elicitation.ErrOptionInvalid, "options[0].id"},
		{"empty id", func(in *elicitation.Input) { in.Options = raws(`{"id":""}`) }, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"blank id", func(in *elicitation.Input) { in.Options = raws(`{"id":"  "}`) }, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"id at 128 chars", func(in *elicitation.Input) {
			in.Options = raws(fmt.Sprintf(`{"id":%q}`, strings.Repeat("é", 128)))
		}, nil, ""},
		{"id of 129 chars", func(in *elicitation.Input) {
			in.Options = raws(fmt.Sprintf(`{"id":%q}`, strings.Repeat("i", 129)))
		}, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"id with a newline", func(in *elicitation.Input) { in.Options = raws(`{"id":"x\ny"}`) }, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"id with a carriage return", func(in *elicitation.Input) { in.Options = raws(`{"id":"x\ry"}`) }, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"id with NUL", func(in *elicitation.Input) { in.Options = raws(`{"id":"a\u0000"}`) }, elicitation.ErrOptionIDInvalid, "options[0].id"},
		{"duplicate ids", func(in *elicitation.Input) { in.Options = raws(`{"id":"a"}`, `{"id":"b"}`, `{"id":"a"}`) }, elicitation.ErrOptionIDDuplicate, "options[2].id"},
		{"option over 4 KiB", func(in *elicitation.Input) {
			in.Options = raws(fmt.Sprintf(`{"id":"a","x":%q}`, strings.Repeat("x", 4096)))
		}, elicitation.ErrOptionTooLarge, "options[0]"},
		{"min above max", func(in *elicitation.Input) { in.MinSelections, in.MaxSelections = 3, 2 }, elicitation.ErrSelectionBounds, "minSelections"},
		{"max above options", func(in *elicitation.Input) { in.MaxSelections = 4 }, elicitation.ErrSelectionBounds, "minSelections"},
		{"negative min", func(in *elicitation.Input) { in.MinSelections = -1 }, elicitation.ErrSelectionBounds, "minSelections"},
		{"multi within bounds", func(in *elicitation.Input) { in.MinSelections, in.MaxSelections = 2, 3 }, nil, ""},
		{"template at limit", func(in *elicitation.Input) { in.RowTemplate = strings.Repeat("t", 32<<10) }, nil, ""},
		{"row template over limit", func(in *elicitation.Input) { in.RowTemplate = strings.Repeat("t", 32<<10+1) }, elicitation.ErrTemplateTooLarge, "rowTemplate"},
		{"hover template over limit", func(in *elicitation.Input) { in.HoverTemplate = strings.Repeat("t", 32<<10+1) }, elicitation.ErrTemplateTooLarge, "hoverTemplate"},
		{"css over limit", func(in *elicitation.Input) { in.CSS = strings.Repeat("c", 32<<10+1) }, elicitation.ErrCSSTooLarge, "css"},
		{"label of 40 chars", func(in *elicitation.Input) { in.Labels.Submit = strings.Repeat("ß", 40) }, nil, ""},
		{"label of 41 chars", func(in *elicitation.Input) { in.Labels.Submit = strings.Repeat("l", 41) }, elicitation.ErrLabelInvalid, "labels.submit"},
		{"blank decline label", func(in *elicitation.Input) { in.Labels.Decline = "   " }, elicitation.ErrLabelInvalid, "labels.decline"},
		{"whole request over 256 KiB", func(in *elicitation.Input) {
			in.Options = nil
			for i := range 100 {
				in.Options = append(in.Options, json.RawMessage(fmt.Sprintf(`{"id":"o%d","x":%q}`, i, strings.Repeat("x", 4000))))
			}
			in.RowTemplate = strings.Repeat("t", 32<<10)
		}, elicitation.ErrRequestTooLarge, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := valid()
			tc.mutate(&in)
			p, err := in.Payload(elicitation.KindSelection)
			checkErr(t, err, tc.want, tc.field)
			if err == nil && (p.MinSelections < 1 || p.MaxSelections < p.MinSelections) {
				t.Errorf("bounds %d..%d", p.MinSelections, p.MaxSelections)
			}
		})
	}
}

func checkErr(t *testing.T, err, want error, field string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var e *elicitation.Error
	if !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument || e.Field != field {
		t.Fatalf("err = %#v, want an invalid_argument *Error about %q", err, field)
	}
	if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || elicitation.PublicMessage(err) != e.Message || e.Message == "" {
		t.Errorf("code %q, public message %q", elicitation.CodeOf(err), elicitation.PublicMessage(err))
	}
}

func TestSelectionDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ min, max, wantMin, wantMax int }{
		{0, 0, 1, 1}, {0, 3, 1, 3}, {2, 0, 2, 2}, {2, 3, 2, 3},
	} {
		p, err := elicitation.Input{Message: "m", Options: options(3), MinSelections: tc.min, MaxSelections: tc.max}.Payload(elicitation.KindSelection)
		if err != nil {
			t.Fatal(err)
		}
		if p.MinSelections != tc.wantMin || p.MaxSelections != tc.wantMax {
			t.Errorf("min %d max %d -> %d..%d, want %d..%d", tc.min, tc.max, p.MinSelections, p.MaxSelections, tc.wantMin, tc.wantMax)
		}
	}
	p, _ := elicitation.Input{Message: "m", Options: raws(`{"id":"a","label":"Alpha"}`, `{"id":"b","label":5}`)}.Payload(elicitation.KindSelection)
	if p.Options[0].DisplayLabel() != "Alpha" || p.Options[1].DisplayLabel() != "b" {
		t.Errorf("display labels %q %q", p.Options[0].DisplayLabel(), p.Options[1].DisplayLabel())
	}
	if string(p.Options[1].Raw) != `{"id":"b","label":5}` {
		t.Errorf("raw option not kept: %s", p.Options[1].Raw)
	}
}

func TestApprovalLimits(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"n":{"type":"integer"}}}`
	for _, tc := range []struct {
		name  string
		in    elicitation.Input
		want  error
		field string
	}{
		{"context only", elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":1}`)}, nil, ""},
		{"schema only", elicitation.Input{Message: "m", RequestedSchema: json.RawMessage(schema)}, nil, ""},
		{"scalar context", elicitation.Input{Message: "m", Context: json.RawMessage(`"just text"`)}, nil, ""},
		{"neither", elicitation.Input{Message: "m"}, elicitation.ErrContentRequired, "context"},
		{"null context only", elicitation.Input{Message: "m", Context: json.RawMessage(`null`)}, elicitation.ErrContentRequired, "context"},
		{"no message", elicitation.Input{Context: json.RawMessage(`1`)}, elicitation.ErrMessageRequired, "message"},
		{"bad context", elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":`)}, elicitation.ErrContextInvalid, "context"},
		// Valid JSON a receipt cannot digest (RFC 8785 reads I-JSON only).
		{"context repeating a member", elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":1,"a":2}`)}, elicitation.ErrContextInvalid, "context"},
		{"context with a lone surrogate", elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":"x\ud800"}`)}, elicitation.ErrContextInvalid, "context"},
		{"context with a pair", elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":"\ud83d\ude00","b":{"a":1}}`)}, nil, ""},
		{"context over 64 KiB", elicitation.Input{Message: "m", Context: json.RawMessage(fmt.Sprintf("%q", strings.Repeat("c", 64<<10)))}, elicitation.ErrContextTooLarge, "context"},
		{"schema over 32 KiB", elicitation.Input{Message: "m", RequestedSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","description":%q,"properties":{"a":{"type":"string"}}}`, strings.Repeat("d", 32<<10)))}, elicitation.ErrSchemaTooLarge, "requestedSchema"},
		{"51 fields", elicitation.Input{Message: "m", RequestedSchema: manyFields(51)}, elicitation.ErrSchemaTooManyFields, "requestedSchema.properties"},
		{"50 fields", elicitation.Input{Message: "m", RequestedSchema: manyFields(50)}, nil, ""},
		{"display template over limit", elicitation.Input{Message: "m", Context: json.RawMessage(`1`), DisplayTemplate: strings.Repeat("x", 32<<10+1)}, elicitation.ErrTemplateTooLarge, "displayTemplate"},
		{"bad schema", elicitation.Input{Message: "m", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object"}}}`)}, elicitation.ErrSchemaInvalid, "requestedSchema.properties.o.type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.in.Payload(elicitation.KindApproval)
			checkErr(t, err, tc.want, tc.field)
		})
	}
}

// TestInputOfOneKind: approvals and selections share one Input; a field
// of the other kind is refused by name (it would otherwise be dropped
// unseen), on both kinds; a kind's own fields make its payload.
func TestInputOfOneKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind  elicitation.Kind
		in    elicitation.Input
		field string
	}{
		{elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), Options: options(2)}, "options"},
		{elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), RowTemplate: "{{ option.id }}"}, "rowTemplate"},
		{elicitation.KindApproval, elicitation.Input{Message: "m", Context: json.RawMessage(`1`), MaxSelections: 2}, "maxSelections"},
		{elicitation.KindSelection, elicitation.Input{Message: "m", Options: options(2), Context: json.RawMessage(`1`)}, "context"},
		{elicitation.KindSelection, elicitation.Input{Message: "m", Options: options(2), DisplayTemplate: "x"}, "displayTemplate"},
	} {
		_, err := tc.in.Payload(tc.kind)
		checkErr(t, err, elicitation.ErrFieldOfOtherKind, tc.field)
	}
	sel := elicitation.Input{Message: "m", Options: options(3), MaxSelections: 2, RowTemplate: "{{ option.label }}", Approvals: 0}
	p, err := sel.Payload(elicitation.KindSelection)
	if err != nil || len(p.Options) != 3 || p.MaxSelections != 2 || p.Templates != (elicitation.Templates{Row: "{{ option.label }}"}) {
		t.Errorf("a selection's Payload: %+v, %v", p, err)
	}
	if _, err := (elicitation.Input{Message: "m"}).Payload("poll"); err == nil {
		t.Error("a payload of an unknown kind was built")
	}
}

func manyFields(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":{"type":"boolean"}`, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

func TestClampTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   int
		want time.Duration
	}{
		{0, time.Hour}, {-5, time.Hour}, {1, time.Minute}, {59, time.Minute}, {60, time.Minute},
		{61, 61 * time.Second}, {86400, 24 * time.Hour}, {86401, 24 * time.Hour}, {1 << 62, 24 * time.Hour},
	} {
		if got := elicitation.ClampTimeout(tc.in); got != tc.want {
			t.Errorf("ClampTimeout(%d) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCheckSelection(t *testing.T) {
	t.Parallel()
	p, err := elicitation.Input{Message: "m", Options: options(5), MinSelections: 2, MaxSelections: 3}.Payload(elicitation.KindSelection)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ids  []string
		want string // substring of the error, "" for valid
	}{
		{[]string{"o0", "o1"}, ""},
		{[]string{"o0", "o1", "o4"}, ""},
		{[]string{"o0"}, "pick between 2 and 3 options; 1 were picked"},
		{nil, "pick between 2 and 3 options; 0 were picked"},
		{[]string{"o0", "o1", "o2", "o3"}, "4 were picked"},
		{[]string{"o0", "nope"}, `"nope" is not one of the options`},
		{[]string{"o0", "o0"}, `"o0" was picked twice`},
	} {
		err := p.CheckSelection(tc.ids)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.ids, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, elicitation.ErrSelectionInvalid)):
			t.Errorf("%v: err = %v, want %q", tc.ids, err, tc.want)
		}
	}
}

func TestStatusAtDerivesExpiry(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		stored elicitation.Status
		at     time.Time
		want   elicitation.Status
	}{
		{elicitation.StatusPending, exp.Add(-time.Nanosecond), elicitation.StatusPending},
		{elicitation.StatusPending, exp, elicitation.StatusExpired},
		{elicitation.StatusPending, exp.Add(time.Hour), elicitation.StatusExpired},
		{elicitation.StatusSubmitted, exp.Add(time.Hour), elicitation.StatusSubmitted},
		{elicitation.StatusDeclined, exp.Add(time.Hour), elicitation.StatusDeclined},
		{elicitation.StatusCanceled, exp.Add(time.Hour), elicitation.StatusCanceled},
		{elicitation.StatusConsumed, exp.Add(time.Hour), elicitation.StatusConsumed},
	} {
		st := elicitation.State{Status: tc.stored, ExpiresAt: exp}
		if got := st.StatusAt(tc.at); got != tc.want {
			t.Errorf("%s at %v: %s, want %s", tc.stored, tc.at.Sub(exp), got, tc.want)
		}
	}
}

func TestCodeOfAndPublicMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		code elicitation.Code
		msg  string
	}{
		{fmt.Errorf("read x: %w", elicitation.ErrNotFound), elicitation.CodeNotFound, "no elicitation with that id"},
		{fmt.Errorf("resolve x: %w", elicitation.ErrConflict), elicitation.CodeConflict, "the elicitation was already resolved"},
		{fmt.Errorf("resolve x: %w", elicitation.ErrExpired), elicitation.CodeExpired, "the elicitation expired before it was resolved"},
		{elicitation.ErrCanceled, elicitation.CodeCanceled, "the elicitation was canceled"},
		{elicitation.ErrNotDecided, elicitation.CodeNotDecided, "the elicitation is still pending; call elicit_await first"},
		{elicitation.ErrForbidden, elicitation.CodeForbidden, "not allowed"},
		{errors.New("dial tcp 10.0.0.1:443: secret internals"), elicitation.CodeInternal, "internal error; the server logged the details"},
	} {
		if got := elicitation.CodeOf(tc.err); got != tc.code {
			t.Errorf("CodeOf(%v) = %q, want %q", tc.err, got, tc.code)
		}
		if got := elicitation.PublicMessage(tc.err); got != tc.msg {
			t.Errorf("PublicMessage(%v) = %q, want %q", tc.err, got, tc.msg)
		}
	}
}

func TestIDsAndReviewKeys(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		id := elicitation.NewID()
		if len(id) != 22 || strings.ContainsAny(id, "+/=") || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	key, hash := elicitation.NewReviewKey()
	p := elicitation.Payload{ReviewKeyHash: hash}
	if len(key) != 43 || !p.ReviewKeyMatches(key) || p.ReviewKeyMatches(key[:42]) || p.ReviewKeyMatches("") {
		t.Errorf("review key %q does not match as it should", key)
	}
	if (elicitation.Payload{}).ReviewKeyMatches("") {
		t.Error("an empty hash matched")
	}
}
