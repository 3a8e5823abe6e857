// An MCP Apps host, as the ext-apps SDK's host side runs one: a real MCP
// client (@modelcontextprotocol/client 2.x, declaring the
// io.modelcontextprotocol/ui extension) reads the ui:// page over MCP from
// the real server, and the SDK's AppBridge talks to the page in a
// sandboxed frame (sandbox="allow-scripts", no same origin, the CSP the
// spec prescribes for a resource that declares no domains) in headless
// Chromium. The bridge runs here in Node: its transport carries each
// message between it and the frame through the host page (postMessage
// into the frame, a binding out of it), where a browser host's
// PostMessageTransport would do the same in the page itself.
// argv: a JSON plan {mcp, signedIn, chromium}. Prints one JSON line.
import { launchChromium } from "../../../internal/testenv/chromium.mjs";
import { AxeBuilder } from "@axe-core/playwright";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";

const plan = JSON.parse(process.argv[2]);
const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const results = [];
function must(cond, msg) { if (!cond) throw new Error(msg); }

async function connect(endpoint) {
  const client = new Client({ name: "apps-test-host", version: "1.0.0" }, { capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
  return client;
}
function structured(res) { return res.structuredContent || JSON.parse(res.content[0].text); }
async function tool(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  return { isError: !!res.isError, text: (res.content || []).map((c) => c.text || "").join(" "), out: res.structuredContent };
}

// The page, as a host gets it: the tool's _meta.ui.resourceUri, read over MCP.
async function appPage(client) {
  const { tools } = await client.listTools();
  const t = tools.find((x) => x.name === "elicit_approval");
  const uri = t?._meta?.ui?.resourceUri;
  must(typeof uri === "string" && uri.startsWith("ui://"), "elicit_approval names no ui:// resource: " + JSON.stringify(t?._meta));
  for (const n of ["elicit_app_view", "elicit_app_decide"]) {
    const v = tools.find((x) => x.name === n)?._meta?.ui?.visibility;
    must(JSON.stringify(v) === '["app"]', n + " visibility " + JSON.stringify(v));
  }
  const read = await client.readResource({ uri });
  const c = read.contents[0];
  must(c.mimeType === MIME, "mimeType " + c.mimeType);
  must(c._meta?.ui?.csp && c._meta.ui.csp.connectDomains.length === 0, "resource _meta " + JSON.stringify(c._meta));
  return { uri, html: c.text };
}

// The CSP a host sets for a resource whose _meta.ui.csp declares no domains
// (the ext-apps specification's restrictive default).
const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; media-src data:; font-src data:; connect-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'";

const browser = await launchChromium(plan.chromium);

// host shows the page for one tool call (or, with args null, for an
// elicitation the host then sends it): it returns the frame, the bridge
// and what the host saw (dialogs, the methods the app sent, its
// ui/initialize params, requests the browser made).
async function host(client, html, toolName, args, result, { width = 480, theme = "light", variables = {}, wrapCall = null } = {}) {
  const ctx = await browser.newContext({ viewport: { width: width + 40, height: 900 }, colorScheme: theme });
  const page = await ctx.newPage();
  const seen = { dialogs: [], methods: [], requests: [], console: [] };
  page.on("dialog", async (d) => { seen.dialogs.push(d.message()); await d.dismiss().catch(() => {}); });
  page.on("request", (r) => { if (!r.url().startsWith("about:") && !r.url().startsWith("data:")) seen.requests.push(r.url()); });
  page.on("console", (m) => seen.console.push(m.text()));
  const transport = {
    async start() {},
    async send(msg) { await page.evaluate((m) => document.getElementById("app").contentWindow.postMessage(m, "*"), msg); },
    async close() { this.onclose?.(); },
  };
  await page.exposeBinding("__toHost", (_src, msg) => {
    if (msg && msg.method) seen.methods.push(msg.method);
    if (msg && msg.method === "ui/initialize") seen.init = msg.params;
    transport.onmessage?.(msg);
  });
  await page.setContent(`<!DOCTYPE html><html lang="en"><head><title>Host</title></head><body style="margin:20px"><main aria-label="Conversation"><h1>A conversation</h1>
<iframe id="app" title="Elicitation review" sandbox="allow-scripts" style="width:${width}px;height:840px;border:1px solid #888"></iframe></main>
<script>window.addEventListener("message", (e) => { const f = document.getElementById("app"); if (f && e.source === f.contentWindow) window.__toHost(e.data); });</script></body></html>`);
  const bridge = new AppBridge(client, { name: "apps-test-host", version: "1.0.0" }, { openLinks: {}, serverTools: {}, serverResources: {} }, {
    hostContext: { theme, displayMode: "inline", platform: "web", containerDimensions: { maxWidth: width }, styles: { variables } },
  });
  const initialized = new Promise((r) => { bridge.oninitialized = r; });
  bridge.onopenlink = async ({ url }) => { seen.opened = url; return {}; };
  bridge.onsizechange = (p) => { seen.size = p; };
  await bridge.connect(transport);
  if (wrapCall) {
    // The host's own hand in the app's tool calls (connect set the forwarding to the server).
    const forward = bridge.oncalltool;
    bridge.oncalltool = (params, extra) => wrapCall(params, (p) => forward(p, extra));
  }
  const doc = html.replace("<head>", `<head><meta http-equiv="Content-Security-Policy" content="${CSP}">`);
  await page.evaluate((d) => { document.getElementById("app").srcdoc = d; }, doc);
  await initialized;
  if (args) {
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
  }
  const frame = page.frames().find((f) => f !== page.mainFrame());
  return { ctx, page, frame, bridge, seen, app: page.frameLocator("#app") };
}

async function status(app, re) {
  const s = app.locator("#status");
  await s.filter({ hasText: re }).waitFor({ timeout: 20000 }).catch(async () => { throw new Error("status is " + JSON.stringify(await s.textContent())); });
  return (await s.textContent()).trim();
}

async function axe(h) {
  const r = await new AxeBuilder({ page: h.page }).analyze();
  return r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

// nothingRan: the frame holds the page's one script and no markup of the
// agent's making, nothing opened a dialog, and the app sent only protocol
// methods.
async function nothingRan(h) {
  const dom = await h.frame.evaluate(() => ({ scripts: document.scripts.length, imgs: document.images.length, pwned: !!window.__pwned, frames: document.querySelectorAll("iframe").length }));
  must(dom.scripts === 1 && dom.imgs === 0 && !dom.pwned && dom.frames === 0, "the app's DOM: " + JSON.stringify(dom));
  must(h.seen.dialogs.length === 0, "dialogs: " + h.seen.dialogs.join("; "));
  const known = new Set(["ui/initialize", "ui/notifications/initialized", "ui/notifications/size-changed", "tools/call", "ui/open-link"]);
  const odd = h.seen.methods.filter((m) => !known.has(m));
  must(odd.length === 0, "unexpected messages from the app: " + odd.join(", "));
  must(h.seen.requests.length === 0, "the browser fetched: " + h.seen.requests.join(", "));
}

async function flow(name, fn) {
  const t0 = Date.now();
  try {
    const details = await fn();
    results.push({ name, ok: true, ms: Date.now() - t0, details });
  } catch (e) {
    results.push({ name, ok: false, ms: Date.now() - t0, error: String(e && e.stack || e) });
  }
}

const client = await connect(plan.mcp);
const { html } = await appPage(client);

await flow("approval-form", async () => {
  const args = {
    message: "Deploy **build 8**?", context: { build: 8 },
    requestedSchema: {
      type: "object", required: ["name", "count"], properties: {
        name: { type: "string", title: "Release name", minLength: 2 },
        count: { type: "integer", title: "Replicas", minimum: 1, maximum: 5 },
        canary: { type: "boolean", title: "Canary first" },
        env: { type: "string", title: "Environment", enum: ["staging", "prod"] },
      },
    },
  };
  const res = await client.callTool({ name: "elicit_approval", arguments: args });
  const created = structured(res);
  const vars = { "--color-background-primary": "rgb(20, 24, 28)", "--color-text-primary": "rgb(240, 240, 240)" };
  const h = await host(client, html, "elicit_approval", args, res, { theme: "dark", variables: vars });
  // The review page, rendered before the app decides, answers second.
  const review = await h.ctx.newPage();
  await review.goto(created.reviewUrl);
  await h.app.locator("#submit").waitFor();
  must((await h.app.locator("#message strong").textContent()) === "build 8", "message not rendered as Markdown");
  const look = await h.frame.evaluate(() => ({ bg: getComputedStyle(document.body).backgroundColor, fg: getComputedStyle(document.body).color, theme: document.documentElement.dataset.theme }));
  must(look.bg === "rgb(20, 24, 28)" && look.fg === "rgb(240, 240, 240)" && look.theme === "dark", "host theme not applied: " + JSON.stringify(look));
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await h.app.getByLabel("Release name").fill("r8");
  await h.app.getByLabel("Replicas").fill("9");
  await h.app.getByLabel("Canary first").check();
  await h.app.getByLabel("Environment").selectOption("prod");
  await h.app.locator("#submit").click();
  const refused = await status(h.app, /^Not recorded: /);
  must(/maximum|at most|5/.test(refused), "out of bounds refused with: " + refused);
  must((await tool(client, "elicit_status", { elicitationId: created.elicitationId })).out.status === "pending", "decided by a refused answer");
  await h.app.getByLabel("Replicas").fill("3");
  await h.app.getByLabel("Comment (optional)").fill("ship it");
  await h.app.locator("#submit").click();
  await status(h.app, /^Recorded: approved/);
  must(await h.app.locator("#submit").isDisabled(), "controls still live after the decision");
  const result = (await tool(client, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(result.decision === "submitted" && result.decidedVia === "app" && result.comment === "ship it", "result " + JSON.stringify(result));
  const fsub = result.formSubmission || {};
  must(Object.keys(fsub).length === 4 && fsub.name === "r8" && fsub.count === 3 && fsub.canary === true && fsub.env === "prod", "formSubmission " + JSON.stringify(fsub));
  // The page's answer comes second: refused, and the app's decision stands.
  await review.getByLabel(/Release name/).fill("other");
  await review.getByLabel(/Replicas/).fill("1");
  const post = review.waitForResponse((r) => r.request().method() === "POST");
  await review.locator("button[name=decision][value=submitted]").click();
  const code = (await post).status();
  must(code === 409, "the page's second answer got HTTP " + code);
  const again = (await tool(client, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(again.decidedVia === "app" && again.formSubmission.name === "r8", "the page's answer changed the decision: " + JSON.stringify(again));
  await nothingRan(h);
  await h.ctx.close();
  return { refused, size: h.seen.size, pageStatus: code };
});

await flow("selection-500", async () => {
  const options = Array.from({ length: 500 }, (_, i) => ({ id: "opt-" + i, label: "Option number " + i }));
  const args = { message: "Pick two or three", options, minSelections: 2, maxSelections: 3 };
  const res = await client.callTool({ name: "elicit_selection", arguments: args });
  const created = structured(res);
  const h = await host(client, html, "elicit_selection", args, res, { width: 320 });
  await h.app.locator("#opts input").nth(499).waitFor({ state: "attached" });
  must((await h.app.locator("#opts input[type=checkbox]").count()) === 500, "not 500 checkboxes");
  must(/between 2 and 3/.test(await h.app.locator("#rule").textContent()), "bounds not shown");
  const wide = await h.frame.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  must(wide <= 0, "the app is " + wide + " px wider than its 320 px frame");
  const pick = async (i) => {
    await h.app.getByLabel("Filter the options").fill("number " + i);
    await h.app.locator(`#opts input[value="opt-${i}"]`).check();
  };
  for (const i of [7, 250, 417, 499]) await pick(i);
  await h.app.getByLabel("Filter the options").fill("");
  must((await h.app.locator("#count").textContent()) === "4 picked.", "count " + (await h.app.locator("#count").textContent()));
  await h.app.locator("#submit").click();
  const refused = await status(h.app, /^Not recorded: /);
  must(refused.includes("pick between 2 and 3 options; 4 were picked"), "too many refused with: " + refused);
  await h.app.locator('#opts input[value="opt-7"]').uncheck();
  await h.app.locator("#submit").click();
  await status(h.app, /^Recorded: /);
  const result = (await tool(client, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(result.decidedVia === "app" && JSON.stringify(result.selectedIds) === JSON.stringify(["opt-250", "opt-417", "opt-499"]), "result " + JSON.stringify(result));
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await nothingRan(h);
  await h.ctx.close();
  return { refused, scrollExcess: wide };
});

await flow("decline-templated", async () => {
  const evil = `<script>window.__pwned=1;alert("script")</script><img src="data:," onerror="alert('img')"><b>{{ context.v }}</b>`;
  const args = { message: "Approve <script>alert('msg')</script>?", context: { v: "x" }, displayTemplate: evil };
  const res = await client.callTool({ name: "elicit_approval", arguments: args });
  must(!res.isError, "create: " + JSON.stringify(res.content));
  const created = structured(res);
  const h = await host(client, html, "elicit_approval", args, res);
  await h.app.locator("#decline").waitFor();
  const link = h.app.locator("#review-link a");
  must((await link.getAttribute("href")) === created.reviewUrl, "no review link for the templated view");
  await link.click();
  must(h.seen.opened === created.reviewUrl, "ui/open-link not sent: " + h.seen.opened);
  must((await h.app.locator("#message").textContent()).includes("<script>alert('msg')</script>"), "message markup not shown as text");
  await h.app.getByLabel("Comment (optional)").fill("not this week");
  await h.app.locator("#decline").click();
  await status(h.app, /^Recorded: declined/);
  const result = (await tool(client, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(result.decision === "declined" && result.decidedVia === "app" && result.comment === "not this week", "result " + JSON.stringify(result));
  await nothingRan(h);
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await h.ctx.close();
  return {};
});

// standing-offer: the view's standing (here added by the host to this
// server's view, as a server with sign-in sends it) shows one checkbox
// under the comment, "for 30 minutes" (the cap, shorter than 1 hour), the
// held fields as text; ticked, Approve sends standing {minutes, uses}, which
// this server (no sign-in) refuses with the reason, deciding nothing; a
// decline never sends it. Tests with sign-in: TestAppStanding
// (internal/mcptools).
await flow("standing-offer", async () => {
  const args = { message: "Deploy?", context: { env: "staging" } };
  const res = await client.callTool({ name: "elicit_approval", arguments: args });
  const created = structured(res);
  const sent = [];
  const evil = "<img src=x onerror=alert(1)>";
  const wrapCall = async (params, forward) => {
    if (params.name === "elicit_app_decide") sent.push(params.arguments);
    const r = await forward(params);
    if (params.name === "elicit_app_view" && !r.isError) {
      r.structuredContent = { ...r.structuredContent, standing: { maxMinutes: 30, fields: [{ path: ["env"], value: "staging" }, { path: ["note"], value: evil }] } };
    }
    return r;
  };
  const h = await host(client, html, "elicit_approval", args, res, { wrapCall });
  const box = h.app.getByLabel("Also approve later requests like this one for 30 minutes (up to 10)");
  await box.waitFor();
  const listed = await h.app.locator("#standing-fields li").allTextContents();
  must(JSON.stringify(listed) === JSON.stringify(['env = "staging"', "note = " + JSON.stringify(evil)]), "held fields " + JSON.stringify(listed));
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await box.check();
  await h.app.locator("#submit").click();
  const refused = await status(h.app, /^Not recorded: /);
  must(refused.includes("sign-in"), "standing without sign-in refused with: " + refused);
  must(JSON.stringify(sent[0]?.standing) === JSON.stringify({ minutes: 30, uses: 10 }), "approve sent " + JSON.stringify(sent[0]));
  must((await tool(client, "elicit_status", { elicitationId: created.elicitationId })).out.status === "pending", "decided by a refused standing approval");
  await h.app.locator("#decline").click();
  await status(h.app, /^Recorded: declined/);
  must(sent.length === 2 && sent[1].decision === "declined" && !("standing" in sent[1]), "decline sent " + JSON.stringify(sent[1]));
  await nothingRan(h);
  await h.ctx.close();
  return { refused };
});

await flow("signed-in-refused", async () => {
  const other = await connect(plan.signedIn);
  const page = await appPage(other);
  const args = { message: "Which?", options: [{ id: "a" }, { id: "b" }] };
  const res = await other.callTool({ name: "elicit_selection", arguments: args });
  const created = structured(res);
  const h = await host(other, page.html, "elicit_selection", args, res);
  await h.app.locator("#review-link").waitFor();
  const why = (await h.app.locator("#review-link").textContent()).trim();
  must(why.includes("cannot be decided here") && why.includes("signs reviewers in"), "why: " + why);
  must((await h.app.locator("#review-link a").getAttribute("href")) === created.reviewUrl, "no review link");
  must((await h.app.locator("#submit, #decline, input").count()) === 0, "decision controls shown on a signed-in deployment");
  const direct = await tool(other, "elicit_app_decide", { elicitationId: created.elicitationId, renderToken: "forged", decision: "submitted", selectedIds: ["a"] });
  must(direct.isError, "a forged decision was accepted");
  must((await tool(other, "elicit_status", { elicitationId: created.elicitationId })).out.status === "pending", "decided");
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await nothingRan(h);
  await h.ctx.close();
  await other.close();
  return { why, direct: direct.text };
});

// app-elicitation: a host that renders elicitations in apps (SEP-3118)
// declares elicitation inside the ui extension, beside form elicitation;
// elicit_await (no askInHost) asks it a form elicitation naming the page
// in _meta.ui.resourceUri and the request in _meta.elicitationId; the host
// renders the page, sends it the elicitation/create over the bridge once
// the app declared appCapabilities.elicitation, and returns the app's
// ElicitResult as its answer, which lands as the review page's would.
await flow("app-elicitation", async () => {
  const asks = [];
  let shown;
  const nextShown = () => new Promise((r) => { shown = r; });
  const asker = new Client({ name: "apps-elicitation-host", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} }, extensions: { [UI]: { mimeTypes: [MIME], elicitation: {} } } } });
  asker.setRequestHandler("elicitation/create", async (req) => {
    const p = req.params;
    const uri = p._meta?.ui?.resourceUri;
    must(p.mode === undefined || p.mode === "form", "mode " + p.mode);
    must(typeof uri === "string" && uri.startsWith("ui://"), "no ui:// resource in the elicitation: " + JSON.stringify(p._meta));
    const read = await asker.readResource({ uri });
    const h = await host(asker, read.contents[0].text, "", null, null);
    const caps = h.seen.init?.appCapabilities?.elicitation;
    must(caps && typeof caps === "object" && !Array.isArray(caps), "the app declared no elicitation capability: " + JSON.stringify(h.seen.init));
    const answer = h.bridge.request({ method: "elicitation/create", params: p }, { timeout: 60000 });
    shown({ h, params: p });
    const result = await answer;
    asks.push({ params: p, result });
    return result;
  });
  await asker.connect(new StreamableHTTPClientTransport(new URL(plan.mcp)));
  must(typeof asker.getServerCapabilities()?.extensions?.[UI]?.elicitation === "object", "server capabilities " + JSON.stringify(asker.getServerCapabilities()));

  // A single-select, accepted with a comment.
  let created = structured(await asker.callTool({ name: "elicit_selection", arguments: { message: "Which **region**?", options: [{ id: "eu", label: "Europe" }, { id: "us", label: "America" }], minSelections: 1, maxSelections: 1 } }));
  let showing = nextShown();
  let awaiting = tool(asker, "elicit_await", { elicitationId: created.elicitationId, waitSeconds: 20 });
  let { h, params } = await showing;
  must(params._meta.elicitationId === created.elicitationId, "elicitationId " + JSON.stringify(params._meta));
  await h.app.locator("#submit").waitFor();
  must((await h.app.locator("#message strong").textContent()) === "region", "the app shows no rendered message");
  const violations = await axe(h);
  must(violations.length === 0, "axe: " + violations.join(" | "));
  await h.app.getByLabel("America").check();
  await h.app.getByLabel("Comment (optional)").fill("closer to users");
  await h.app.locator("#submit").click();
  await status(h.app, /^Sent: /);
  await nothingRan(h);
  await h.ctx.close();
  let awaited = await awaiting;
  must(!awaited.isError && awaited.out.status === "submitted", "await " + JSON.stringify(awaited));
  must(JSON.stringify(asks[0].result) === JSON.stringify({ action: "accept", content: { selection: "us", comment: "closer to users" } }), "the app answered " + JSON.stringify(asks[0].result));
  let result = (await tool(asker, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(result.decision === "submitted" && JSON.stringify(result.selectedIds) === '["us"]' && result.comment === "closer to users" && result.decidedVia === "host-form", "result " + JSON.stringify(result));

  // An approval whose form has its own comment field, declined: the
  // reviewer's note goes under reviewerComment, as the server's form says.
  created = structured(await asker.callTool({ name: "elicit_approval", arguments: { message: "Publish?", requestedSchema: { type: "object", properties: { comment: { type: "string", title: "Release note" } } } } }));
  showing = nextShown();
  awaiting = tool(asker, "elicit_await", { elicitationId: created.elicitationId, waitSeconds: 20 });
  ({ h, params } = await showing);
  must(params.requestedSchema.properties.reviewerComment, "no reviewerComment in the form " + JSON.stringify(params.requestedSchema));
  await h.app.locator("#decline").waitFor();
  await h.app.locator("#comment").fill("not yet");
  await h.app.locator("#decline").click();
  await status(h.app, /^Sent: declined/);
  await nothingRan(h);
  await h.ctx.close();
  awaited = await awaiting;
  must(!awaited.isError && awaited.out.status === "declined", "await " + JSON.stringify(awaited));
  must(JSON.stringify(asks[1].result) === JSON.stringify({ action: "decline", content: { reviewerComment: "not yet" } }), "the app answered " + JSON.stringify(asks[1].result));
  result = (await tool(asker, "elicit_result", { elicitationId: created.elicitationId })).out;
  must(result.decision === "declined" && result.comment === "not yet" && result.decidedVia === "host-form", "result " + JSON.stringify(result));
  await asker.close();
  return { answers: asks.map((a) => a.result) };
});

await client.close();
await browser.close();
process.stdout.write(JSON.stringify({ results }) + "\n", () => process.exit(0));
