package review_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Seed-style templates (LiquidJS syntax within the common filters).
const (
	rowTpl     = `<div class="org"><img src="{{ option.logo }}" alt=""><div class="t"><strong>{{ option.label }}</strong><span class="d">{{ option.domain | downcase }}{% if option.score > 50 %} · <em>likely</em>{% endif %}</span></div></div>`
	headingTpl = `<h2>{{ message }}</h2><p>{{ options | size }} candidates; pick {{ minSelections }}{% if maxSelections > minSelections %} to {{ maxSelections }}{% endif %}.</p>`
	footerTpl  = `<p class="small">Sources: {% for o in options limit:3 %}{{ o.domain }}{% unless forloop.last %}, {% endunless %}{% endfor %}</p>`
	hoverTpl   = `<dl><dt>Domain</dt><dd>{{ option.domain }}</dd><dt>Score</dt><dd>{{ option.score }}</dd></dl>`
	displayTpl = `<table><tr><th>Service</th><td>{{ context.service }}</td></tr><tr><th>Replicas</th><td>{{ context.replicas }}</td></tr>{% for c in context.changes %}<tr><th>{{ c.field }}</th><td>{{ c.from }} → {{ c.to }}</td></tr>{% endfor %}</table>`
	stockCSS   = `.org{display:flex;gap:10px;align-items:center;height:100%} .org img{width:36px;height:36px;flex:none;border-radius:6px} .t{min-width:0} .t strong{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis} .d{display:block;font-size:.85em;color:#555;white-space:nowrap;overflow:hidden;text-overflow:ellipsis} @media (prefers-color-scheme:dark){.d{color:#bbb}}`
)

var guggenheim = raws(
	`{"id":"gugg-nyc","label":"Solomon R. Guggenheim Museum","domain":"guggenheim.org","score":92,"logo":"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 32 32%22%3E%3Crect width=%2232%22 height=%2232%22 rx=%226%22 fill=%22%23c0392b%22/%3E%3C/svg%3E"}`,
	`{"id":"gugg-bilbao","label":"Guggenheim Museum Bilbao","domain":"guggenheim-bilbao.eus","score":71,"logo":"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 32 32%22%3E%3Crect width=%2232%22 height=%2232%22 rx=%226%22 fill=%22%232471a3%22/%3E%3C/svg%3E"}`,
	`{"id":"gugg-partners","label":"Guggenheim Partners","domain":"guggenheimpartners.com","score":33,"logo":"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 32 32%22%3E%3Crect width=%2232%22 height=%2232%22 rx=%226%22 fill=%22%231e8449%22/%3E%3C/svg%3E"}`,
	`{"id":"gugg-foundation","label":"John Simon Guggenheim Memorial Foundation <Fellowships>","domain":"gf.org","score":12,"logo":"data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 viewBox=%220 0 32 32%22%3E%3Crect width=%2232%22 height=%2232%22 rx=%226%22 fill=%22%237d3c98%22/%3E%3C/svg%3E"}`,
)

var deployContext = json.RawMessage(`{"service":"api","replicas":3,"changes":[{"field":"image","from":"v1.2","to":"v1.3"},{"field":"cpu","from":"500m","to":"1"}]}`)

// TestGolden renders the default and templated pages and compares them with
// testdata/*.golden.html (go test -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	e := newEnv(t)
	pages := map[string]created{
		"selection-default": e.selection(elicitation.Input{Message: "Build a presentation for Guggenheim: which one?", Options: guggenheim}),
		"selection-multi-default": e.selection(elicitation.Input{Message: "Pick the services to deploy", Options: options(4), MinSelections: 2, MaxSelections: 3,
			Labels: elicitation.Labels{Submit: "Deploy these", Decline: "Search again"}}),
		"selection-templated": e.selection(elicitation.Input{Message: "Build a presentation for Guggenheim: which one?", Options: guggenheim,
			RowTemplate: rowTpl, HeadingTemplate: headingTpl, FooterTemplate: footerTpl, HoverTemplate: hoverTpl, CSS: stockCSS}),
		"approval-default": e.approval(elicitation.Input{Message: "Deploy api v1.3 to production?", Context: deployContext, RequestedSchema: formSchema}),
		"approval-templated": e.approval(elicitation.Input{Message: "Deploy api v1.3 to production?", Context: deployContext, DisplayTemplate: displayTpl, CSS: stockCSS,
			Labels: elicitation.Labels{Submit: "Ship it", Decline: "Hold"}}),
	}
	for name, c := range pages {
		t.Run(name, func(t *testing.T) {
			e.t = t
			r := e.get(c.Path())
			if r.Status != 200 {
				t.Fatalf("status %d", r.Status)
			}
			compareGolden(t, name, normalize(r.Body, c))
		})
	}
}

var tokenValueRE = regexp.MustCompile(`v1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)

// normalize replaces what is random per run (the request's id and key, and
// so its page token) with placeholders.
func normalize(body string, c created) string {
	body = strings.ReplaceAll(body, c.ID, "ELICITATION-ID")
	body = strings.ReplaceAll(body, c.Key, "REVIEW-KEY")
	return tokenValueRE.ReplaceAllString(body, "PAGE-TOKEN")
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; run go test ./internal/review -run TestGolden -update and review the diff", path)
	}
}
