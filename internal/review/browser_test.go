package review_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// browserDeps finds node, the npm packages and Chromium, and fails (never
// skips) with what to install when one is missing.
func browserDeps(t *testing.T) (node, chromium string) {
	t.Helper()
	node = testenv.Node(t)
	for _, pkg := range []string{"playwright-core", "axe-core", "@axe-core/playwright"} {
		testenv.NodeModule(t, filepath.Join(pkg, "package.json"))
	}
	chromium = os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if p, err := exec.LookPath("chromium"); err == nil {
			chromium = p
		} else {
			t.Fatalf("browser tests need Chromium at %s (or CHROMIUM_PATH): run `apt-get install -y chromium`", chromium)
		}
	}
	return node, chromium
}

type flow map[string]any

type browserResult struct {
	Name    string          `json:"name"`
	OK      bool            `json:"ok"`
	MS      int             `json:"ms"`
	Error   string          `json:"error"`
	Details json.RawMessage `json:"details"`
}

// runBrowser writes the plan, runs browsertest/run.mjs and returns its results by name.
func runBrowser(t *testing.T, e *env, flows []flow, screenshots string) map[string]browserResult {
	t.Helper()
	node, chromium := browserDeps(t)
	plan, _ := json.Marshal(map[string]any{"base": e.srv.URL, "chromium": chromium, "screenshots": screenshots, "flows": flows})
	path := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(path, plan, 0o600); err != nil {
		t.Fatal(err)
	}
	// A guard against a hung browser, not a speed claim: the flows take
	// about 160 s on an idle machine and were killed at 8 min beside a
	// CI run and a second go test ./... (2026-12-04); go test's own
	// -timeout (20m in make test) stays the last word.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("browsertest", "run.mjs"), path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node run.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct{ Results []browserResult }
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node output: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	byName := map[string]browserResult{}
	for _, r := range out.Results {
		byName[r.Name] = r
		if !r.OK {
			t.Errorf("browser flow %s failed: %s", r.Name, r.Error)
		} else {
			t.Logf("browser flow %s ok (%d ms) %s", r.Name, r.MS, r.Details)
		}
	}
	if len(out.Results) != len(flows) {
		t.Errorf("%d results for %d flows", len(out.Results), len(flows))
	}
	return byName
}

// testHooks adds the test server's clock control and beacon.
type beacons struct {
	mu   sync.Mutex
	hits []string
}

func (b *beacons) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.hits...)
}

func addHooks(e *env) *beacons {
	b := &beacons{}
	e.mux.HandleFunc("/beacon/", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.hits = append(b.hits, r.Method+" "+r.URL.Path)
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	e.mux.HandleFunc("POST /__test/clock", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("reset") != "" {
			e.clock.Set(t0)
			return
		}
		d, err := time.ParseDuration(r.FormValue("advance"))
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		e.clock.Add(d)
	})
	return b
}

// TestBrowserFlows walks every reviewer flow in headless Chromium at a
// 390x844 touch viewport and at 320 px, then checks that the Service sees
// each outcome.
func TestBrowserFlows(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t)
	addHooks(e)
	ctx := context.Background()
	type expect struct {
		c        created
		status   elicitation.Status
		selected []string
		form     map[string]any
	}
	var flows []flow
	var expects []expect
	for _, vp := range []string{"p390", "p320"} {
		one := e.selection(elicitation.Input{Message: "Build a presentation for Guggenheim: which one?", Options: guggenheim})
		flows = append(flows, flow{"name": "pick one default/" + vp, "viewport": vp, "do": "pickOne", "url": one.Path(), "index": 1})
		expects = append(expects, expect{c: one, status: elicitation.StatusSubmitted, selected: []string{"gugg-bilbao"}})

		oneT := e.selection(elicitation.Input{Message: "Which one?", Options: guggenheim, RowTemplate: rowTpl, HeadingTemplate: headingTpl, HoverTemplate: hoverTpl, FooterTemplate: footerTpl, CSS: stockCSS})
		flows = append(flows, flow{"name": "pick one templated/" + vp, "viewport": vp, "do": "pickOne", "url": oneT.Path(), "index": 3})
		expects = append(expects, expect{c: oneT, status: elicitation.StatusSubmitted, selected: []string{"gugg-foundation"}})

		m := e.selection(elicitation.Input{Message: "Pick the services to deploy", Options: options(6), MinSelections: 2, MaxSelections: 3, RowTemplate: rowTpl})
		flows = append(flows, flow{"name": "multi bounds/" + vp, "viewport": vp, "do": "multi", "url": m.Path(), "rule": "Pick between 2 and 3 options", "bad": []int{0, 2, 4, 5}, "good": []int{2, 5}})
		expects = append(expects, expect{c: m, status: elicitation.StatusSubmitted, selected: []string{"opt-2", "opt-5"}})

		d := e.selection(elicitation.Input{Message: "Which one?", Options: guggenheim})
		flows = append(flows, flow{"name": "refine/" + vp, "viewport": vp, "do": "decline", "url": d.Path(), "expect": "Sent: none of these"})
		expects = append(expects, expect{c: d, status: elicitation.StatusDeclined})

		ad := e.approval(elicitation.Input{Message: "Deploy?", Context: deployContext})
		flows = append(flows, flow{"name": "approval decline/" + vp, "viewport": vp, "do": "decline", "url": ad.Path(), "expect": "Declined"})
		expects = append(expects, expect{c: ad, status: elicitation.StatusDeclined})

		a := e.approval(elicitation.Input{Message: "Deploy api v1.3?", Context: deployContext, RequestedSchema: formSchema, DisplayTemplate: displayTpl})
		flows = append(flows, flow{"name": "approval form/" + vp, "viewport": vp, "do": "approve", "url": a.Path(),
			"fill":    map[string]string{"f.email": "ops@example.com", "f.count": "4", "f.ratio": "0.5", "f.when": "2026-04-01T10:30", "f.note": "ok"},
			"select":  map[string]string{"f.env": "prod"},
			"check":   [][]string{{"f.tags", "c"}}, // "b" is the default
			"uncheck": []string{"f.notify"}})
		expects = append(expects, expect{c: a, status: elicitation.StatusSubmitted, form: map[string]any{
			"email": "ops@example.com", "count": 4.0, "ratio": 0.5, "when": "2026-04-01T10:30:00Z", "note": "ok", "env": "prod", "tags": []any{"b", "c"}, "notify": false}})

		dd := e.selection(elicitation.Input{Message: "Which one?", Options: guggenheim})
		flows = append(flows, flow{"name": "decided refuses/" + vp, "viewport": vp, "do": "decided", "url": dd.Path()})
		expects = append(expects, expect{c: dd, status: elicitation.StatusSubmitted, selected: []string{"gugg-nyc"}})

		ex := e.selection(elicitation.Input{Message: "Which one?", Options: guggenheim, TimeoutSeconds: 600})
		flows = append(flows, flow{"name": "expired refuses/" + vp, "viewport": vp, "do": "expired", "url": ex.Path(), "advance": "11m"})
		expects = append(expects, expect{c: ex, status: elicitation.StatusExpired})
	}
	runBrowser(t, e, flows, "")
	e.clock.Set(t0.Add(20 * time.Minute)) // past the short request's expiry, before the others'
	for _, x := range expects {
		st, err := e.svc.Await(ctx, "agent", x.c.ID, time.Second)
		if err != nil || st.Status != x.status {
			t.Errorf("%s: Await = %s, %v; want %s", x.c.ID, st.Status, err, x.status)
			continue
		}
		if x.status != elicitation.StatusSubmitted {
			continue
		}
		res, err := e.svc.Result(ctx, "agent", x.c.ID)
		if err != nil {
			t.Errorf("result: %v", err)
			continue
		}
		if x.selected != nil && fmt.Sprint(res.SelectedIDs) != fmt.Sprint(x.selected) {
			t.Errorf("selected %v, want %v", res.SelectedIDs, x.selected)
		}
		if x.form != nil {
			var got map[string]any
			_ = json.Unmarshal(res.Form, &got)
			if fmt.Sprint(got) != fmt.Sprint(x.form) {
				t.Errorf("form %v, want %v", got, x.form)
			}
		}
	}
}

// TestBrowserAccessibilityAndScreenshots runs axe-core on the default and
// templated pages in light and dark mode, takes the README screenshots
// (into docs/screenshots with -update, else a temporary directory) and
// measures a 500-option page on a phone.
func TestBrowserAccessibilityAndScreenshots(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t)
	pages := map[string]created{
		"selection default":   e.selection(elicitation.Input{Message: "Build a presentation for Guggenheim: which one?", Options: guggenheim, HoverTemplate: hoverTpl}),
		"selection multi":     e.selection(elicitation.Input{Message: "Pick reviewers", Options: options(5), MaxSelections: 3, Labels: elicitation.Labels{Submit: "Request review", Decline: "Find others"}}),
		"selection templated": e.selection(elicitation.Input{Message: "Build a presentation for Guggenheim: which one?", Options: guggenheim, RowTemplate: rowTpl, HeadingTemplate: headingTpl, FooterTemplate: footerTpl, HoverTemplate: hoverTpl, CSS: stockCSS}),
		"approval default":    e.approval(elicitation.Input{Message: "Deploy api v1.3 to production?", Context: deployContext, RequestedSchema: formSchema}),
		"approval templated":  e.approval(elicitation.Input{Message: "Deploy api v1.3 to production?", Context: deployContext, DisplayTemplate: displayTpl, CSS: stockCSS, Labels: elicitation.Labels{Submit: "Ship it", Decline: "Hold"}}),
	}
	var flows []flow
	for name, c := range pages {
		for _, scheme := range []string{"light", "dark"} {
			flows = append(flows, flow{"name": "axe " + name + "/" + scheme, "do": "axe", "url": c.Path(), "scheme": scheme})
		}
	}
	// Final and error pages too.
	gone := e.selection(elicitation.Input{Message: "m", Options: options(2), TimeoutSeconds: 60})
	flows = append(flows, flow{"name": "axe not found/dark", "do": "axe", "url": "/review/nope/nope", "scheme": "dark"})

	big := e.selection(elicitation.Input{Message: "Pick one of 500", Options: options(500), RowTemplate: rowTpl, HoverTemplate: hoverTpl, CSS: stockCSS})
	bigDefault := e.selection(elicitation.Input{Message: "Pick one of 500", Options: options(500)})
	flows = append(flows,
		flow{"name": "measure 500 templated/p390", "viewport": "p390", "do": "measure", "url": big.Path(), "repeat": 7},
		flow{"name": "measure 500 default/p390", "viewport": "p390", "do": "measure", "url": bigDefault.Path(), "repeat": 7},
	)
	longList := e.selection(elicitation.Input{Message: "Which **sites** should the crawler skip? Pick up to 3.", Options: options(500), MaxSelections: 3})
	// The README's screenshots are rewritten only under -update; a plain
	// run takes them into a temporary directory, so it writes no tracked file.
	abs := t.TempDir()
	if *update {
		shots := filepath.Join("..", "..", "docs", "screenshots")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
		abs, _ = filepath.Abs(shots)
	}
	flows = append(flows,
		flow{"name": "screenshot selection", "viewport": "p390", "do": "screenshot", "url": pages["selection templated"].Path(), "pick": 1, "file": "review-selection-templated-phone.png"},
		flow{"name": "screenshot selection dark", "viewport": "p390", "scheme": "dark", "do": "screenshot", "url": pages["selection templated"].Path(), "pick": 1, "file": "review-selection-templated-phone-dark.png"},
		flow{"name": "screenshot approval", "viewport": "p390", "do": "screenshot", "url": pages["approval default"].Path(), "fill": map[string]string{"f.email": "ops@example.com", "f.count": "2"}, "file": "review-approval-form-phone.png"},
		flow{"name": "screenshot approval dark", "viewport": "p390", "scheme": "dark", "do": "screenshot", "url": pages["approval default"].Path(), "fill": map[string]string{"f.email": "ops@example.com", "f.count": "2"}, "file": "review-approval-form-phone-dark.png"},
		flow{"name": "screenshot long list", "viewport": "p390", "do": "screenshot", "url": longList.Path(), "pick": 2, "scroll": 0, "file": "review-long-list-phone.png"},
		flow{"name": "screenshot long list dark", "viewport": "p390", "scheme": "dark", "do": "screenshot", "url": longList.Path(), "pick": 2, "scroll": 0, "file": "review-long-list-phone-dark.png"},
	)
	e.clock.Add(2 * time.Minute)
	flows = append(flows, flow{"name": "axe expired/light", "do": "axe", "url": gone.Path(), "scheme": "light"})
	res := runBrowser(t, e, flows, abs)
	for _, n := range []string{"measure 500 templated/p390", "measure 500 default/p390"} {
		t.Logf("%s: %s", n, res[n].Details)
	}
}

// TestBrowserXSS loads an XSS corpus through every input that reaches the
// page: option data, templates, context, labels, css and the message.
func TestBrowserXSS(t *testing.T) {
	testenv.Slow(t, "Chromium")
	t.Parallel()
	e := newEnv(t)
	b := addHooks(e)
	corpus := xssCorpus(e.srv.URL + "/beacon/")
	if len(corpus) < 50 {
		t.Fatalf("corpus has %d payloads", len(corpus))
	}
	var flows []flow
	add := func(name string, c created, values []string, pick any) {
		f := flow{"name": name, "do": "xss", "url": c.Path(), "values": values, "aligned": strings.Contains(name, "css") || strings.Contains(name, "templated")}
		if pick != nil {
			f["pick"] = pick
		}
		flows = append(flows, f)
	}
	// Option data: every payload as a label and as data, default and templated.
	var opts []json.RawMessage
	var ids []string
	for i, p := range corpus {
		id := fmt.Sprintf("x-%d", i)
		ids = append(ids, id)
		o, _ := json.Marshal(map[string]any{"id": id, "label": p, "extra": p, "nested": map[string]any{"v": p}})
		opts = append(opts, o)
	}
	// Ids themselves may be hostile too.
	hostileIDs := raws(`{"id":"\"><img src=x onerror=alert(1)>","label":"a"}`, `{"id":"</script><script>alert(1)</script>","label":"b"}`, `{"id":"x' onfocus='alert(1)","label":"c"}`)
	var hIDs []string
	for _, o := range hostileIDs {
		var v struct{ ID string }
		_ = json.Unmarshal(o, &v)
		hIDs = append(hIDs, v.ID)
	}
	msg := strings.Join(corpus[:20], "\n")
	if len(msg) > 4000 {
		msg = msg[:4000]
	}
	unescape := `| replace: "&lt;", "<" | replace: "&gt;", ">" | replace: "&#34;", '"' | replace: "&quot;", '"' | replace: "&#39;", "'" | replace: "&amp;", "&"`
	def := e.selection(elicitation.Input{Message: msg, Options: opts, MaxSelections: 3})
	add("xss option data default", def, ids, 7)
	tpl := e.selection(elicitation.Input{Message: msg, Options: opts,
		RowTemplate:     `{{ option.label }} {{ option.extra ` + unescape + ` }} {{ option.nested.v ` + unescape + ` }}`,
		HoverTemplate:   `{{ option.extra ` + unescape + ` }}`,
		HeadingTemplate: `{{ message ` + unescape + ` }}`,
		FooterTemplate:  `{% for o in options %}{{ o.label ` + unescape + ` }}{% endfor %}`,
	})
	add("xss option data templated (unescaped on purpose)", tpl, ids, 11)
	add("xss hostile ids", e.selection(elicitation.Input{Message: "ids", Options: hostileIDs, RowTemplate: `{{ option.id }}`}), hIDs, 1)
	// Templates: each payload is a template (4 per request).
	nTemplates, refused := 0, 0
	for i := 0; i+3 < len(corpus); i += 4 {
		c, err := e.svc.Create(context.Background(), "agent", elicitation.KindSelection, elicitation.Input{Message: "templates", Options: guggenheim,
			RowTemplate: corpus[i], HeadingTemplate: corpus[i+1], FooterTemplate: corpus[i+2], HoverTemplate: corpus[i+3]})

		if err != nil {
			refused++ // refused at creation: the agent gets the error
			continue
		}
		nTemplates++
		add(fmt.Sprintf("xss templates %d-%d", i, i+3), created{c.State.ID, c.ReviewKey}, []string{"gugg-nyc", "gugg-bilbao", "gugg-partners", "gugg-foundation"}, 2)
	}
	// Context, default and through a display template that unescapes.
	ctxObj := map[string]any{"list": corpus}
	for i, p := range corpus[:30] {
		ctxObj[p] = i
	}
	raw, _ := json.Marshal(ctxObj)
	add("xss context default", e.approval(elicitation.Input{Message: msg, Context: raw}), []string{}, nil)
	add("xss context templated", e.approval(elicitation.Input{Message: msg, Context: raw,
		DisplayTemplate: `{% for p in context.list %}<div>{{ p }} {{ p ` + unescape + ` }}</div>{% endfor %}`}), []string{}, nil)
	// Labels (at most 40 characters each).
	short := labelCorpus
	for i := 0; i+1 < len(short); i += 2 {
		add(fmt.Sprintf("xss labels %d", i), e.approval(elicitation.Input{Message: "labels", Context: json.RawMessage(`{}`),
			Labels: elicitation.Labels{Submit: short[i], Decline: short[i+1]}}), []string{}, nil)
	}
	// css.
	for i, css := range cssCorpus(e.srv.URL + "/beacon/") {
		add(fmt.Sprintf("xss css %d", i), e.selection(elicitation.Input{Message: "css", Options: guggenheim, RowTemplate: rowTpl, HoverTemplate: hoverTpl, HeadingTemplate: headingTpl, CSS: css}),
			[]string{"gugg-nyc", "gugg-bilbao", "gugg-partners", "gugg-foundation"}, 0)
	}
	t.Logf("corpus: %d payloads; %d template requests accepted, %d refused at creation; %d pages", len(corpus), nTemplates, refused, len(flows))
	runBrowser(t, e, flows, "")
	time.Sleep(300 * time.Millisecond)
	if hits := b.list(); len(hits) > 0 {
		t.Errorf("beacon reached %d times: %v", len(hits), hits)
	}
	// No template changed what a control submits.
	for _, f := range flows {
		if f["pick"] == nil {
			continue
		}
		var id string
		if _, err := fmt.Sscanf(strings.TrimPrefix(f["url"].(string), "/review/"), "%s", &id); err != nil {
			t.Fatal(err)
		}
		id = strings.Split(id, "/")[0]
		res, err := e.svc.Result(context.Background(), "agent", id)
		values := f["values"].([]string)
		want := values[f["pick"].(int)]
		if err != nil || len(res.SelectedIDs) != 1 || res.SelectedIDs[0] != want {
			t.Errorf("%s: picked control %d submitted %v (%v), want %q", f["name"], f["pick"], res.SelectedIDs, err, want)
		}
	}
}

// xssCorpus is the payloads; b is the beacon URL prefix.
func xssCorpus(b string) []string {
	n := 0
	u := func() string { n++; return fmt.Sprintf("%s%d", b, n) }
	return []string{
		`<script>fetch('` + u() + `')</script>`,
		`<script>document.title='pwned';parent.document.title='pwned'</script>`,
		`<img src=x onerror="fetch('` + u() + `')">`,
		`<img src="` + u() + `">`,
		`<svg onload="fetch('` + u() + `')">`,
		`<svg><script>fetch('` + u() + `')</script></svg>`,
		`<body onload="fetch('` + u() + `')">`,
		`<iframe src="` + u() + `"></iframe>`,
		`<iframe srcdoc="<script>fetch('` + u() + `')</script>"></iframe>`,
		`<object data="` + u() + `"></object>`,
		`<embed src="` + u() + `">`,
		`<meta http-equiv="refresh" content="0;url=` + u() + `">`,
		`<link rel="stylesheet" href="` + u() + `">`,
		`<link rel="prefetch" href="` + u() + `">`,
		`<base href="` + u() + `/"><a href="x">base</a>`,
		`<a href="javascript:fetch('` + u() + `')">js link</a>`,
		`<a href="` + u() + `" target="_top">top link</a>`,
		`<a href="` + u() + `" target="_blank">blank link</a>`,
		`<a href="` + u() + `">plain link</a>`,
		`<form action="` + u() + `" method="post"><button>form</button></form>`,
		`<form action="/review/x/y" method="post"><input name="decision" value="submitted"><button>spoof submit</button></form>`,
		`<input autofocus onfocus="fetch('` + u() + `')">`,
		`<details open ontoggle="fetch('` + u() + `')">`,
		`<video src=x onerror="fetch('` + u() + `')"></video>`,
		`<audio src="` + u() + `" autoplay></audio>`,
		`<style>@import url("` + u() + `");</style>`,
		`<style>body{background:url("` + u() + `")}</style>`,
		`<div style="background-image:url('` + u() + `')">bg</div>`,
		`"><script>fetch('` + u() + `')</script>`,
		`'><script>fetch('` + u() + `')</script>`,
		`</textarea><script>fetch('` + u() + `')</script>`,
		`</title><script>fetch('` + u() + `')</script>`,
		`</style><script>fetch('` + u() + `')</script>`,
		`</iframe><script>fetch('` + u() + `')</script>`,
		`</div></div></div></li></ol></form><script>fetch('` + u() + `')</script>`,
		`&lt;script&gt;fetch('` + u() + `')&lt;/script&gt;`,
		`&#60;script&#62;fetch('` + u() + `')&#60;/script&#62;`,
		`%3Cscript%3Efetch('` + u() + `')%3C/script%3E`,
		`<scr<script>ipt>fetch('` + u() + `')</scr</script>ipt>`,
		`<SCRIPT SRC=` + u() + `></SCRIPT>`,
		`<img src=x:x onerror=javascript:fetch('` + u() + `')>`,
		`<math><mtext><table><mglyph><style><img src=x onerror=fetch('` + u() + `')>`,
		`<noscript><p title="</noscript><img src=x onerror=fetch('` + u() + `')>">`,
		`<template><script>fetch('` + u() + `')</script></template>`,
		`<isindex action="` + u() + `" type=image src=x>`,
		`<marquee onstart="fetch('` + u() + `')">m</marquee>`,
		`<input type="image" src="` + u() + `">`,
		`<portal src="` + u() + `"></portal>`,
		`<img srcset="` + u() + ` 1x">`,
		`<picture><source srcset="` + u() + `"><img></picture>`,
		`<a href="data:text/html,<script>fetch('` + u() + `')</script>" target="_top">data link</a>`,
		`javascript:fetch('` + u() + `')`,
		`{{ 'x' }}<script>fetch('` + u() + `')</script>`,
		`<div id="r0" style="position:fixed;inset:0;background:red">cover</div>`,
		`<button popovertarget="pop">open</button><div id="pop" popover style="position:fixed;inset:0;width:auto;height:auto;margin:0;background:red">popover cover</div>`,
		`<button popovertarget="pm" popovertargetaction="show">show</button><div id="pm" popover="manual" style="position:fixed;inset:0;background:red">manual cover</div>`,
		`<button commandfor="dm" command="show-modal">modal</button><dialog id="dm" style="position:fixed;inset:0;max-width:none;max-height:none;background:red">modal cover</dialog>`,
		`<button commandfor="pc" command="show-popover">command</button><div id="pc" popover style="position:fixed;inset:0;background:red">command cover</div>`,
		`<button interestfor="pi">interest</button><div id="pi" popover="hint" style="position:fixed;inset:0;background:red">interest cover</div>`,
		`<label><input type="radio" name="option" value="x-0" checked>fake control</label>`,
		`<button form="x" formaction="` + u() + `">formaction</button>`,
		`<svg><a xlink:href="javascript:fetch('` + u() + `')"><text y="20">svg link</text></a></svg>`,
		`<img src=x onerror=alert(1)>`,
		`<script>alert(document.domain)</script>`,
		`<body onpageshow=alert(1)>`,
		`<img src=x onerror=prompt(1)>`,
		`<svg/onload=confirm(1)>`,
	}
}

// labelCorpus are short payloads for button labels (1..40 characters).
var labelCorpus = []string{
	`<img src=x onerror=alert(1)>`, `<script>alert(1)</script>`,
	`"><svg onload=alert(1)>`, `</button><button value=submitted>`,
	`Approve`, `Approve (this declines nothing)`,
	`javascript:alert(1)`, `'-alert(1)-'`,
	`<a href=//x.test target=_top>x</a>`, `{{7*7}}<b>bold</b>`,
	`</form><form action=//x.test>`, `<style>*{display:none}</style>`,
}

func cssCorpus(b string) []string {
	return []string{
		`</style><script>fetch('` + b + `css1')</script>`,
		`@import url("` + b + `css2");`,
		`body{background:url("` + b + `css3")}`,
		`.org img{content:url("` + b + `css4")}`,
		`@font-face{font-family:x;src:url("` + b + `css5")} body{font-family:x}`,
		`body{background:url("javascript:fetch('` + b + `css6')")}`,
		`body{behavior:url("` + b + `css7");-moz-binding:url("` + b + `css8")}`,
		`html,body{margin-top:300px!important;transform:translateY(144px)!important} body::before{content:"";display:block;height:72px!important}`,
		`@layer x{body>.r{height:10px!important}} body>.r:nth-child(1){position:fixed!important;top:72px!important} .r{order:-1;display:none!important}`,
		`*{all:initial!important} body>.r{height:1px!important;zoom:3}`,
	}
}
