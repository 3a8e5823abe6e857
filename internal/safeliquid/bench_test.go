package safeliquid

import (
	"fmt"
	"strings"
	"testing"

	"github.com/osteele/liquid"
)

// typicalRow is a row template in the style of the seed's LiquidJS examples.
const typicalRow = `<div class="row" data-id="{{ option.id }}">
  <strong>{{ option.label | default: option.id | truncate: 60 }}</strong>
  {% if option.price %}<span class="price">{{ option.price | times: 1.2 | round: 2 }} €</span>{% endif %}
  {% if option.tags.size > 0 %}<ul>{% for t in option.tags limit: 5 %}<li class="{% cycle 'a', 'b' %}">{{ t | upcase }}</li>{% endfor %}</ul>{% endif %}
  {% case option.kind %}{% when "fruit" %}🍎{% when "veg" %}🥕{% else %}·{% endcase %}
  <small>{{ option.description | strip | truncatewords: 12 }}</small>
</div>`

func option(i int) map[string]any {
	return map[string]any{
		"id":          fmt.Sprintf("opt-%d", i),
		"label":       fmt.Sprintf("Option number %d <with markup>", i),
		"price":       float64(i%50) + 0.99,
		"tags":        []any{"alpha", "beta", "gamma"},
		"kind":        []string{"fruit", "veg", "nut"}[i%3],
		"description": strings.Repeat("A longer description of the option. ", 3),
	}
}

func BenchmarkCompileRow(b *testing.B) {
	e := New(Limits{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Compile("row", typicalRow); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompileRowRaw(b *testing.B) {
	e := liquid.NewEngine()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.ParseString(typicalRow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderRows renders the row template once per option, as the
// review page does, for 10, 100 and 500 options: safeliquid vs the raw
// library (which also gets pre-escaped data, so both do the same work apart
// from the bounds).
func BenchmarkRenderRows(b *testing.B) {
	for _, n := range []int{10, 100, 500} {
		opts := make([]map[string]any, n)
		for i := range opts {
			opts[i] = option(i)
		}
		b.Run(fmt.Sprintf("safeliquid/%d", n), func(b *testing.B) {
			tpl := New(Limits{}).MustCompile("row", typicalRow)
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range opts {
					if _, err := tpl.Render(map[string]any{"option": o}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(fmt.Sprintf("raw/%d", n), func(b *testing.B) {
			tpl, err := liquid.NewEngine().ParseString(typicalRow)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, o := range opts {
					if _, err := tpl.RenderString(map[string]any{"option": Escape(o)}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkNewEnv is the cost of one per-render configuration (paid only
// when the pool is empty: the first render, and after a GC empties it).
func BenchmarkNewEnv(b *testing.B) {
	e := New(Limits{})
	b.ReportAllocs()
	for b.Loop() {
		_ = e.newEnv()
	}
}

// plainRow uses only tags and filters whose implementation is the same in
// both engines, so the difference is the cost of the bounds themselves.
const plainRow = `<div class="row" data-id="{{ option.id }}"><strong>{{ option.label | upcase }}</strong>{% if option.price > 10 %}<em>{{ option.price | plus: 1 }}</em>{% endif %}{% for t in option.tags %}<i>{{ t }}</i>{% endfor %}</div>`

func BenchmarkRenderPlainRows(b *testing.B) {
	opts := make([]map[string]any, 100)
	for i := range opts {
		opts[i] = option(i)
	}
	b.Run("safeliquid/100", func(b *testing.B) {
		tpl := New(Limits{}).MustCompile("row", plainRow)
		b.ReportAllocs()
		for b.Loop() {
			for _, o := range opts {
				if _, err := tpl.Render(map[string]any{"option": o}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("raw/100", func(b *testing.B) {
		tpl, err := liquid.NewEngine().ParseString(plainRow)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, o := range opts {
				if _, err := tpl.RenderString(map[string]any{"option": Escape(o)}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
