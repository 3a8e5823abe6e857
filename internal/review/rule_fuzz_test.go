package review

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// FuzzSubmissionForm checks what the review page reads of a POSTed form
// besides the page token: the standing approval (ruleInput) is asked only
// with an approval and the rule box ticked; a refusal is an
// invalid_argument ErrRuleInvalid naming one of its inputs, quoting at
// most 64 characters (escaped) of what was sent; an accepted one lasts the
// duration sent and allows the uses sent, one non-empty path per field
// sent; and the form's fields (formValues) are exactly its "f." inputs.
func FuzzSubmissionForm(f *testing.F) {
	for _, s := range []string{
		"decision=submitted&rule=on&rule.for=1h&rule.uses=10&rule.field=%5B%22arguments%22%2C%22env%22%5D&rule.field=%5B%22tool%22%5D",
		"decision=submitted&rule=on&rule.for=forever&rule.uses=1",
		"decision=submitted&rule=on&rule.for=15m&rule.uses=+3+&rule.field=%5B%5D",
		"decision=declined&rule=on&rule.for=1h&rule.uses=x",
		"decision=submitted&rule=on&rule.for=-9223372036s&rule.uses=99999999999999999999",
		"decision=submitted&f.name=Ada&f.tags=a&f.tags=b&f.=x&option=o1&comment=hi",
		"rule.field=" + strings.Repeat("%22x", 50),
	} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body string) {
		form, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		in, err := ruleInput(form, now)
		asked := form.Get(ruleOn) != "" && form.Get("decision") == string(elicitation.DecisionSubmitted)
		switch {
		case !asked && (in != nil || err != nil):
			t.Fatalf("a rule read from a form that asks none: %+v, %v", in, err)
		case err != nil:
			var e *elicitation.Error
			if !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument || !errors.Is(err, elicitation.ErrRuleInvalid) || !slices.Contains([]string{ruleFor, ruleUses, ruleField}, e.Field) {
				t.Fatalf("refusal %#v", err)
			}
			if utf8.RuneCountInString(e.Message) > 64*len(`\U0010ffff`)+100 { // 64 characters, each escaped at most so
				t.Fatalf("refusal quotes too much: %q", e.Message)
			}
		case asked:
			d, _ := time.ParseDuration(form.Get(ruleFor))
			uses, _ := strconv.Atoi(strings.TrimSpace(form.Get(ruleUses)))
			if !in.ExpiresAt.Equal(now.Add(d)) || in.MaxUses != uses || len(in.Equal) != len(form[ruleField]) {
				t.Fatalf("rule %+v from %v", in, form)
			}
			for _, p := range in.Equal {
				if len(p) == 0 {
					t.Fatalf("an empty path accepted from %q", form[ruleField])
				}
			}
		}
		fields, n := formValues(form), 0
		for k, vs := range form {
			if name, ok := strings.CutPrefix(k, formPrefix); ok {
				n++
				if got := fields[name]; !slices.Equal(got, vs) {
					t.Fatalf("form input %q: field %q = %q", k, name, got)
				}
			}
		}
		if len(fields) != n {
			t.Fatalf("%d fields from %d form inputs", len(fields), n)
		}
	})
}
