// The MCP Inspector 2.x web client (the real one, from npm, served by its
// own launcher: the Go test starts it) driven in headless Chromium against
// the local server, as a person would: it connects over streamable HTTP
// through the Inspector's deep link, runs elicit_approval and elicit_await
// from its Tools tab, and answers the elicitation that elicit_await asks.
// The Inspector renders it in the server's MCP App (SEP-3118: its
// app-elicitation modal, the sandbox proxy frame, the app's frame inside
// it) when the app can be shown, and in its own elicitation form when it
// cannot (here: the sandbox frame's page does not load).
// argv: a JSON plan {inspector, token, mcp, chromium, modernRow}. Prints one JSON line:
// each flow's result and the request it decided, which the Go test then
// reads from the server.
import { launchChromium } from "../../../internal/testenv/chromium.mjs";

const plan = JSON.parse(process.argv[2]);
const results = [];
function must(cond, msg) { if (!cond) throw new Error(msg); }

async function flow(name, fn) {
  const t0 = Date.now();
  try {
    const details = await fn();
    results.push({ name, ok: true, ms: Date.now() - t0, ...details });
  } catch (e) {
    results.push({ name, ok: false, ms: Date.now() - t0, error: String(e && e.stack || e) });
  }
}

const browser = await launchChromium(plan.chromium);

// open connects a fresh Inspector page to the server through the deep
// link (the launch's token is its CSRF gate) and waits for "connected".
async function open() {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const seen = { pageErrors: [] };
  page.on("pageerror", (e) => seen.pageErrors.push(String(e.message || e)));
  const url = `${plan.inspector}/?serverUrl=${encodeURIComponent(plan.mcp)}&transport=http&autoConnect=${encodeURIComponent(plan.token)}`;
  const res = await page.goto(url, { waitUntil: "domcontentloaded" });
  must(res && res.ok(), "GET the Inspector: HTTP " + (res && res.status()));
  const status = page.locator('[data-testid="connection-status"]');
  await status.waitFor({ state: "attached", timeout: 30000 });
  must((await status.getAttribute("data-deeplink")) === "parsed", "deep link " + (await status.getAttribute("data-deeplink")));
  await page.locator('[data-testid="connection-status"][data-status="connected"]').waitFor({ state: "attached", timeout: 45000 })
    .catch(async () => { throw new Error("not connected: " + (await status.getAttribute("data-status")) + " " + (await status.getAttribute("data-error-message"))); });
  await page.locator('label[for$="-Tools"]').first().click();
  return { ctx, page, seen };
}

// The Inspector's result pane is an Ace editor: its text is the tool's.
async function lastResult(page) {
  const box = page.locator(".ace_editor").filter({ hasText: /"status"/ }).first();
  await box.waitFor({ timeout: 60000 });
  return JSON.parse(await box.evaluate((e) => e.env.editor.getValue()));
}

// runToolJSON selects a tool and runs it with args, written whole in the
// form's "Edit as JSON" editor.
async function runToolJSON(page, name, args) {
  await page.getByText(name, { exact: true }).click({ timeout: 15000 });
  await page.getByRole("switch", { name: "Edit as JSON" }).check({ force: true });
  await page.getByRole("textbox", { name: /^Arguments JSON,/ }).focus();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.insertText(JSON.stringify(args));
  await page.getByRole("button", { name: /execute tool/i }).click();
}

// runTool selects a tool in the Tools tab, fills its text fields (and an
// Ace-edited JSON field with json), and runs it.
async function runTool(page, name, fields, json) {
  await page.getByText(name, { exact: true }).click({ timeout: 15000 }).catch(async (e) => {
    // An elicitation the server sent meanwhile holds the page.
    throw new Error(`cannot select ${name}: ${e.message.split("\n")[0]}; dialogs open: ${(await page.getByRole("dialog").allInnerTexts()).join(" | ")}`);
  });
  for (const [label, value] of Object.entries(fields)) {
    await page.getByRole("textbox", { name: label, exact: true }).fill(value);
  }
  for (const [label, value] of Object.entries(json || {})) {
    await page.getByRole("textbox", { name: new RegExp("^" + label + ",") }).focus();
    await page.keyboard.insertText(JSON.stringify(value));
  }
  await page.getByRole("button", { name: /execute tool/i }).click();
}

// create runs elicit_approval from the Tools tab and returns its result.
async function create(page, message, context) {
  await runTool(page, "elicit_approval", { message }, { context });
  const created = await lastResult(page);
  must(created.status === "pending" && created.elicitationId, "created " + JSON.stringify(created));
  return created;
}

// awaitCall runs elicit_await for id; the elicitation it asks shows while
// it runs.
async function awaitCall(page, id) {
  await runTool(page, "elicit_await", { elicitationId: id, waitSeconds: "30" });
}

async function awaited(page) {
  const box = page.locator(".ace_editor").filter({ hasText: /"status": "(submitted|declined)"/ }).first();
  await box.waitFor({ timeout: 60000 });
  return JSON.parse(await box.evaluate((e) => e.env.editor.getValue()));
}

// app-approve: the Inspector negotiated app-rendered elicitation with the
// server (the server declares elicitation inside its ui extension, the
// Inspector's web client too, with form and URL elicitation), so
// elicit_await's form elicitation names the app's page: the Inspector
// shows its app-elicitation modal, loads the ui:// page in its sandbox,
// hands the app the elicitation once it is ready, and the app's answer
// (typed and clicked inside the app's frame, two frames deep) is the
// Inspector's answer to the server. Its own form never shows.
await flow("app-approve", async () => {
  const { ctx, page, seen } = await open();
  const created = await create(page, "Ship **build 8**?", { build: 8, env: "prod" });
  await awaitCall(page, created.elicitationId);
  const modal = page.locator('[data-testid="app-elicitation"][data-app-elicitation-status="ready"]');
  await modal.waitFor({ state: "attached", timeout: 45000 }).catch(async () => {
    const any = page.locator('[data-testid="app-elicitation"]');
    throw new Error("the app never rendered the elicitation: " + ((await any.count()) ? await any.getAttribute("data-app-elicitation-status") : "no app-elicitation modal") + "; dialogs: " + (await page.getByRole("dialog").allInnerTexts()).join(" | "));
  });
  const app = page.frameLocator('[data-testid="app-elicitation"] iframe').frameLocator("iframe");
  await app.locator("#submit").waitFor({ timeout: 30000 });
  must((await app.locator("#message strong").textContent()) === "build 8", "the app shows no rendered message");
  const shown = (await app.locator("body").innerText());
  must(shown.includes("mcp-inspector"), "the app does not say which client asked: " + shown.slice(0, 400));
  await app.locator("#comment").fill("ship it, from the app in the Inspector");
  await app.getByRole("button", { name: "Approve", exact: true }).click();
  // The app answered: the Inspector settles the elicitation and closes
  // the modal.
  await page.locator('[data-testid="app-elicitation"]').waitFor({ state: "detached", timeout: 20000 });
  const result = await awaited(page);
  must(result.status === "submitted", "elicit_await " + JSON.stringify(result));
  must((await page.getByRole("dialog", { name: /elicitation request/i }).count()) === 0, "the Inspector's own form showed too");
  must(seen.pageErrors.length === 0, "page errors: " + seen.pageErrors.join("; "));
  await ctx.close();
  return { elicitationId: created.elicitationId, awaited: result.status };
});

// app-selection: a selection, picked and commented in the app: the
// Inspector checks the app's answer against the form (the options as a
// single-select) before it returns it.
await flow("app-selection", async () => {
  const { ctx, page, seen } = await open();
  await runToolJSON(page, "elicit_selection", { message: "Which **region**?", options: [{ id: "eu", label: "Europe" }, { id: "us", label: "America" }] });
  const created = await lastResult(page);
  must(created.status === "pending" && created.elicitationId, "created " + JSON.stringify(created));
  await runToolJSON(page, "elicit_await", { elicitationId: created.elicitationId, waitSeconds: 30 });
  await page.locator('[data-testid="app-elicitation"][data-app-elicitation-status="ready"]').waitFor({ state: "attached", timeout: 45000 });
  const app = page.frameLocator('[data-testid="app-elicitation"] iframe').frameLocator("iframe");
  await app.getByLabel("America").check({ timeout: 30000 });
  await app.locator("#comment").fill("closer to users");
  await app.locator("#submit").click();
  await page.locator('[data-testid="app-elicitation"]').waitFor({ state: "detached", timeout: 20000 });
  const result = await awaited(page);
  must(result.status === "submitted", "elicit_await " + JSON.stringify(result));
  must((await page.getByRole("dialog", { name: /elicitation request/i }).count()) === 0, "the Inspector's own form showed too");
  must(seen.pageErrors.length === 0, "page errors: " + seen.pageErrors.join("; "));
  await ctx.close();
  return { elicitationId: created.elicitationId, awaited: result.status };
});

// fallback: the same negotiation, but the app cannot be shown (the
// sandbox proxy's page, which the app's frame lives in, does not load):
// the Inspector gives the app its 15 s to initialize, closes the modal and
// shows its own form for the same elicitation, whose answer goes to the
// server as the app's would.
await flow("fallback", async () => {
  const { ctx, page, seen } = await open();
  let blocked = 0;
  await ctx.route((u) => u.pathname === "/sandbox" || u.pathname === "/sandbox/", (r) => { blocked++; return r.abort("connectionrefused"); });
  const created = await create(page, "Deploy **build 9**?", { build: 9 });
  await awaitCall(page, created.elicitationId);
  const modal = page.locator('[data-testid="app-elicitation"]');
  await modal.waitFor({ state: "attached", timeout: 45000 });
  const dialog = page.getByRole("dialog", { name: /elicitation request/i });
  await dialog.waitFor({ state: "visible", timeout: 45000 });
  must((await modal.count()) === 0, "the app's modal is still open beside the Inspector's form");
  must(blocked > 0, "the sandbox was never asked for");
  must((await dialog.innerText()).includes("Deploy **build 9**?"), "the form shows " + (await dialog.innerText()));
  await dialog.getByRole("textbox", { name: "Comment (optional)" }).fill("fine, from the Inspector's own form");
  await dialog.getByRole("button", { name: "Submit", exact: true }).click();
  const result = await awaited(page);
  must(result.status === "submitted", "elicit_await " + JSON.stringify(result));
  must(seen.pageErrors.length === 0, "page errors: " + seen.pageErrors.join("; "));
  await ctx.close();
  return { elicitationId: created.elicitationId, awaited: result.status };
});

// task-app: the Inspector on 2026-07-28 (the catalog's row for the server
// pins protocolEra "modern"; connected from its Servers tab) runs
// elicit_approval as a task (io.modelcontextprotocol/tasks), and renders
// the task's input request, the app-rendered elicitation, in the app: no
// elicit_await. The approval clicked in the app is the task's answer
// (tasks/update). What the Inspector then shows for the task's result is
// returned for the test to report (the result is elicit_result's, which
// is not the creating tool's outputSchema).
await flow("task-app", async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e.message || e)));
  await page.goto(plan.inspector + "/", { waitUntil: "domcontentloaded" });
  const card = page.locator(".mantine-Card-root").filter({ hasText: plan.modernRow }).first();
  await card.getByRole("switch").click({ force: true, timeout: 30000 });
  await page.locator('[data-testid="connection-status"][data-status="connected"]').waitFor({ state: "attached", timeout: 45000 });
  must((await card.innerText()).includes("MCP 2026-07-28"), "the row did not negotiate 2026-07-28: " + (await card.innerText()));
  await page.locator('label[for$="-Tools"]').first().click();
  await runTool(page, "elicit_approval", { message: "Release **build 10**?" }, { context: { build: 10 } });
  const modal = page.locator('[data-testid="app-elicitation"][data-app-elicitation-status="ready"]');
  await modal.waitFor({ state: "attached", timeout: 45000 });
  const app = page.frameLocator('[data-testid="app-elicitation"] iframe').frameLocator("iframe");
  await app.locator("#comment").fill("release it, from the task's app");
  await app.getByRole("button", { name: "Approve", exact: true }).click();
  await page.locator('[data-testid="app-elicitation"]').waitFor({ state: "detached", timeout: 20000 });
  // The task ends with the decision: the Inspector shows its result, or
  // its complaint about it.
  const shown = page.getByText(/Tool Call Failed|"decision"/).first();
  await shown.waitFor({ timeout: 60000 });
  const outcome = (await page.locator("main").innerText()).match(/Tool Call Failed[\s\S]*?schema\.|"decision": "\w+"/);
  must(pageErrors.length === 0, "page errors: " + pageErrors.join("; "));
  await ctx.close();
  return { shownResult: outcome ? outcome[0].replace(/\s+/g, " ") : "" };
});

await browser.close();
process.stdout.write(JSON.stringify({ results }) + "\n", () => process.exit(0));
