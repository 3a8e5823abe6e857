package review_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/review"
	"github.com/mcp-elicitation/elicitation/internal/safeliquid"
)

func TestCheckTemplatesErrors(t *testing.T) {
	c := review.NewTemplateChecker()
	sel := func(in elicitation.Input) elicitation.Payload {
		if in.Message == "" {
			in.Message = "m"
		}
		if in.Options == nil {
			in.Options = options(3)
		}
		p, err := in.Payload(elicitation.KindSelection)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name  string
		p     elicitation.Payload
		field string
		want  string
	}{
		{"syntax", sel(elicitation.Input{RowTemplate: "<b>\n\n{% if option.id %}x"}), "rowTemplate", "rowTemplate line 3"},
		{"unknown filter", sel(elicitation.Input{HeadingTemplate: "a\n{{ message | shout }}"}), "headingTemplate", "headingTemplate line 2: unknown filter"},
		{"include", sel(elicitation.Input{FooterTemplate: "{% include 'x' %}"}), "footerTemplate", "footerTemplate line 1"},
		{"render error on one option", sel(elicitation.Input{Options: raws(`{"id":"a","n":1}`, `{"id":"b","n":0}`), RowTemplate: "{{ 10 | divided_by: option.n }}"}), "rowTemplate", "(options[1])"},
		{"hover", sel(elicitation.Input{HoverTemplate: "{% for %}"}), "hoverTemplate", "hoverTemplate line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.CheckTemplates(tc.p)
			var e *elicitation.Error
			if !errors.As(err, &e) || e.Code != elicitation.CodeInvalidArgument || e.Field != tc.field || !errors.Is(err, elicitation.ErrTemplateInvalid) || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("CheckTemplates = %#v, want field %s and %q", err, tc.field, tc.want)
			}
			t.Log(e.Message)
		})
	}
	// Approval display template sees context.
	p, err := elicitation.Input{Message: "m", Context: json.RawMessage(`{"a":{"b":"<x>"}}`), DisplayTemplate: "{{ context.a.b | nope }}"}.Payload(elicitation.KindApproval)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckTemplates(p); err == nil || !strings.Contains(err.Error(), "displayTemplate line 1") {
		t.Fatalf("display: %v", err)
	}
	// The Service refuses such a request at creation, with the error.
	e := newEnv(t)
	_, err = e.svc.Create(context.Background(), "agent", elicitation.KindSelection, elicitation.Input{Message: "m", Options: options(2), RowTemplate: "ok\n{{ option.id | bogus }}"})
	if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || !strings.Contains(elicitation.PublicMessage(err), "rowTemplate line 2") {
		t.Fatalf("creating a selection: %v", err)
	}
}

// hostileTemplates: each must be refused at creation or stopped within the
// bound; the process survives.
var hostileTemplates = map[string]string{
	"huge literal range":         `{% for i in (1..100000000) %}x{% endfor %}`,
	"empty huge range":           `{% for i in (1..20000000) %}{% endfor %}`,
	"range from data":            `{% assign n = option.score | times: 100000000 %}{% for i in (1..n) %}{% endfor %}`,
	"nested loops":               `{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}{% endfor %}{% endfor %}{% endfor %}`,
	"nested output loops":        `{% for a in (1..2000) %}{% for b in (1..2000) %}xxxxxxxxxxxxxxxx{% endfor %}{% endfor %}`,
	"string doubling":            `{% assign s = "xxxxxxxx" %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}`,
	"capture doubling":           `{% capture s %}xxxxxxxxxxxxxxxx{% endcapture %}{% for i in (1..64) %}{% capture s %}{{ s }}{{ s }}{% endcapture %}{% endfor %}`,
	"replace growth":             `{% assign s = "ab" %}{% for i in (1..40) %}{% assign s = s | replace: "a", "aaaaaaaa" %}{% endfor %}`,
	"self include":               `{% include 'rowTemplate' %}`,
	"include a file":             `{% include '/etc/passwd' %}`,
	"include relative":           `{% include '../../go.mod' %}`,
	"render tag":                 `{% render 'x' %}`,
	"layout tag":                 `{% layout 'x' %}`,
	"deep nesting":               strings.Repeat(`{% if true %}`, 500) + "x" + strings.Repeat(`{% endif %}`, 500),
	"deep unclosed":              strings.Repeat(`{% for i in (1..2) %}`, 1000),
	"too large to accept":        strings.Repeat(`{% for i in (1..2) %}`, 5000),
	"slow on every row":          `{% for i in (1..99000) %}{% endfor %}{{ option.id }}`,
	"slow page":                  `{% for i in (1..15000) %}{% endfor %}{{ option.id }}`,
	"huge output":                `{% for i in (1..100000) %}<div>{{ option.label }}{{ option.label }}{{ option.label }}</div>{% endfor %}`,
	"split join growth":          `{% assign a = "a,a,a,a,a,a,a,a" | split: "," %}{% for i in (1..30) %}{% assign a = a | concat: a %}{% endfor %}{{ a | join: "" }}`,
	"tablerow huge":              `{% tablerow i in (1..10000000) %}{{ i }}{% endtablerow %}`,
	"cycle in huge loop":         `{% for i in (1..99999) %}{% cycle "a","b" %}{% endfor %}{% for i in (1..99999) %}{% cycle "a","b" %}{% endfor %}`,
	"truncate huge":              `{{ "x" | truncate: 1000000000000 }}`,
	"slice huge":                 `{{ "abc" | slice: 0, 99999999999 }}`,
	"times huge string":          `{% assign s = "x" %}{% for i in (1..99999) %}{% assign s = s | append: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" %}{% endfor %}`,
	"recursion via capture loop": `{% for i in (1..99999) %}{% capture c %}{% for j in (1..99999) %}{% endfor %}{% endcapture %}{% endfor %}`,
}

// refusedBySteps are the hostile templates only the count of steps stops:
// each render is within its own bounds, the page is not. (The clock used
// to stop them, at a time that depended on the machine.)
var refusedBySteps = map[string]string{
	"slow on every row": "rendering the whole page took more than 500000 steps",
	"slow page":         "rendering the whole page took more than 500000 steps",
	"nested loops":      "steps per render",
}

// TestHostileTemplates: each hostile template, as the row template of a
// 500-option selection, is refused at creation by a bound that counts work,
// or accepted with a page that renders. The default bounds hold here but
// the two in time, the last guard, which are raised so that the answer
// cannot depend on the machine's speed or load (-race, a busy CI).
func TestHostileTemplates(t *testing.T) {
	e := newEnvWith(t, review.NewTemplateCheckerWith(review.TemplateLimits{
		Engine:     safeliquid.Limits{MaxDuration: time.Hour},
		PageBudget: time.Hour,
	}))
	for name, src := range hostileTemplates {
		t.Run(name, func(t *testing.T) {
			e.t = t
			start := time.Now()
			c, err := e.svc.Create(context.Background(), "agent", elicitation.KindSelection, elicitation.Input{Message: "m", Options: options(500), RowTemplate: src})
			took := time.Since(start)
			if err != nil {
				if elicitation.CodeOf(err) != elicitation.CodeInvalidArgument || !(errors.Is(err, elicitation.ErrTemplateInvalid) || errors.Is(err, elicitation.ErrTemplateTooLarge)) {
					t.Fatalf("refused with %v", err)
				}
				if want, ok := refusedBySteps[name]; ok && !strings.Contains(elicitation.PublicMessage(err), want) {
					t.Errorf("refused with %q, want it refused by %q", elicitation.PublicMessage(err), want)
				}
				t.Logf("refused at creation in %s: %s", took.Round(time.Millisecond), elicitation.PublicMessage(err))
				return
			}
			if _, ok := refusedBySteps[name]; ok {
				t.Errorf("accepted, want it refused by the steps")
			}
			// Accepted: the page renders.
			if r := e.get(review.Path(c.State.ID, c.ReviewKey)); r.Status != 200 {
				t.Errorf("page: %d", r.Status)
			}
			t.Logf("accepted (bounded output) in %s", took.Round(time.Millisecond))
		})
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	t.Logf("heap in use after the corpus: %d MiB", m.HeapInuse>>20)
}
