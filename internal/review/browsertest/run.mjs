// Drives headless Chromium through the review page, following a JSON plan
// written by browser_test.go (go test runs this; run it alone with
// `node run.mjs plan.json`). Prints one JSON line of results on stdout.
import { chromium } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const base = plan.base;

const viewports = {
  p390: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 },
  p320: { viewport: { width: 320, height: 640 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
};

const browser = await chromium.launch({
  executablePath: plan.chromium,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

const results = [];

async function withPage(vp, scheme, fn) {
  const ctx = await browser.newContext({ ...viewports[vp || 'p390'], colorScheme: scheme || 'light', javaScriptEnabled: true });
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss().catch(() => {}); });
  const popups = [];
  page.on('popup', (p) => popups.push(p.url()));
  try {
    return await fn(page, { dialogs, popups, ctx });
  } finally {
    await ctx.close();
  }
}

function must(cond, msg) { if (!cond) throw new Error(msg); }

async function submit(page, decision) {
  const btn = page.locator(`button[name=decision][value=${decision}]`);
  await btn.scrollIntoViewIfNeeded();
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/review/'), { timeout: 20000 });
  posted.catch(() => {});
  await btn.tap();
  // A tap that lands during a layout shift on this slow, shared machine is
  // sometimes lost; tap once more (a repeated POST of one render is
  // idempotent, so this cannot hide a double decision).
  const again = setTimeout(() => { btn.tap().catch(() => {}); }, 8000);
  const resp = await posted.finally(() => clearTimeout(again)).catch(async (e) => {
    const diag = await page.evaluate(() => {
      const b = document.querySelector('button[value="submitted"]').getBoundingClientRect();
      const el = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
      const form = document.querySelector('form');
      return { b: [b.x, b.y, b.width, b.height], vw: innerWidth, vh: innerHeight, hit: el && el.outerHTML.slice(0, 80), valid: form.checkValidity(), checked: [...document.querySelectorAll('input[name=option]:checked')].map((i) => i.value), active: document.activeElement && document.activeElement.outerHTML.slice(0, 80) };
    }).catch((x) => String(x));
    throw new Error(`no POST after tapping ${decision}: ${JSON.stringify(diag)}`);
  });
  await page.waitForLoadState('load');
  return resp.status();
}

// tapTo taps a radio or checkbox until it reaches the wanted state: on this
// slow, shared machine a tap during a layout pass is sometimes lost.
async function tapTo(loc, want = true) {
  for (let i = 0; i < 3; i++) {
    if ((await loc.isChecked()) === want) return;
    await loc.tap();
    for (let j = 0; j < 10 && (await loc.isChecked()) !== want; j++) await new Promise((r) => setTimeout(r, 100));
  }
  must((await loc.isChecked()) === want, 'tap did not change the control');
}

async function heading(page) { return (await page.locator('h1').first().textContent()).trim(); }

async function checkTap(page) {
  // Every control's tap target is at least 44 px tall.
  const small = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('input[name=option], button, select, input[type=text], input[type=email], input[type=number]')) {
      const target = el.closest('label') || el;
      const r = target.getBoundingClientRect();
      if (r.height < 44) out.push(`${el.outerHTML.slice(0, 60)}: ${r.height}`);
    }
    return out;
  });
  must(small.length === 0, `tap targets under 44px: ${small.join('; ')}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  must(overflow <= 0, `page scrolls sideways by ${overflow}px`);
}

async function pickOne(f, page) {
  await page.goto(base + f.url);
  await checkTap(page);
  await tapTo(page.locator('input[name=option]').nth(f.index));
  const st = await submit(page, 'submitted');
  must(st === 200, `submit status ${st}`);
  must((await heading(page)) === 'Selection sent', `heading ${await heading(page)}`);
}

async function multi(f, page) {
  await page.goto(base + f.url);
  await checkTap(page);
  const rule = await page.locator('#rule').textContent();
  must(rule.includes(f.rule), `rule "${rule}" lacks "${f.rule}"`);
  const boxes = page.locator('input[name=option]');
  for (const i of f.bad) await tapTo(boxes.nth(i));
  let st = await submit(page, 'submitted');
  must(st === 422, `outside bounds: status ${st}`);
  const err = await page.locator('#errors').textContent();
  must(err.includes(f.rule) && err.includes('were picked'), `error box: ${err}`);
  for (const i of f.bad) must(await page.locator('input[name=option]').nth(i).isChecked(), 'picks not kept on the 422 page');
  for (const i of f.bad) if (!f.good.includes(i)) await tapTo(page.locator('input[name=option]').nth(i), false);
  st = await submit(page, 'submitted');
  must(st === 200, `within bounds: status ${st}`);
  must((await heading(page)) === 'Selection sent', 'no final page');
}

async function decline(f, page) {
  await page.goto(base + f.url);
  const st = await submit(page, 'declined');
  must(st === 200, `decline status ${st}`);
  must((await heading(page)) === f.expect, `heading ${await heading(page)}`);
}

async function approve(f, page) {
  await page.goto(base + f.url);
  await checkTap(page);
  const zone = await page.locator('.note', { hasText: 'UTC' }).count();
  must(zone >= 1, 'date-time field does not state its zone');
  for (const [name, value] of Object.entries(f.fill || {})) await page.locator(`[name="${name}"]`).fill(value);
  for (const [name, value] of Object.entries(f.select || {})) await page.locator(`select[name="${name}"]`).selectOption(value);
  for (const [name, value] of f.check || []) await tapTo(page.locator(`input[name="${name}"][value="${value}"]`));
  for (const name of f.uncheck || []) await tapTo(page.locator(`input[name="${name}"]`), false);
  const st = await submit(page, 'submitted');
  must(st === 200, `approve status ${st}: ${await page.locator('main').textContent()}`);
  must((await heading(page)) === 'Approved', `heading ${await heading(page)}`);
}

async function decided(f, page, { ctx }) {
  await page.goto(base + f.url);
  const stale = await ctx.newPage();
  await stale.goto(base + f.url);
  await tapTo(page.locator('input[name=option]').nth(0));
  must((await submit(page, 'submitted')) === 200, 'first submit');
  await tapTo(stale.locator('input[name=option]').nth(1));
  const st = await submit(stale, 'submitted');
  must(st === 409, `second tab status ${st}`);
  must((await heading(stale)) === 'This request has been answered', `stale heading ${await heading(stale)}`);
  const resp = await stale.goto(base + f.url);
  must(resp.status() === 200 && (await heading(stale)) === 'This request has been answered', 'GET after decision');
  must(await stale.locator('form').count() === 0, 'final page still has a form');
}

async function expired(f, page) {
  await page.goto(base + f.url);
  await page.locator('input[name=option], input[type=checkbox]').first().tap().catch(() => {});
  let r = await page.request.post(base + '/__test/clock', { form: { advance: f.advance } });
  must(r.ok(), 'clock');
  try {
    const st = await submit(page, 'submitted');
    must(st === 410, `late submit status ${st}`);
    must((await heading(page)) === 'This request expired', `heading ${await heading(page)}`);
    const resp = await page.goto(base + f.url);
    must(resp.status() === 200 && (await heading(page)) === 'This request expired', 'GET after expiry');
  } finally {
    await page.request.post(base + '/__test/clock', { form: { reset: '1' } });
  }
}

const allowedTags = new Set(['html', 'head', 'meta', 'title', 'style', 'body', 'main', 'header', 'section', 'p', 'h1', 'h2', 'time',
  'form', 'input', 'fieldset', 'legend', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'label', 'span', 'iframe', 'div', 'ol', 'li',
  'a', 'details', 'summary', 'button', 'pre', 'select', 'option', 'ul', 'code']);

async function xss(f, page, { dialogs, popups }) {
  const resp = await page.goto(base + f.url);
  must(resp.status() === 200, `status ${resp.status()}`);
  await page.waitForTimeout(200);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  must(overflow <= 0, `hostile content widens the page by ${overflow}px`);
  const url = page.url();
  const state = await page.evaluate(() => ({
    title: document.title,
    tags: [...new Set([...document.querySelectorAll('*')].map((e) => e.localName))],
    scripts: document.scripts.length,
    handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    frames: [...document.querySelectorAll('iframe')].map((f) => ({ sandbox: f.getAttribute('sandbox'), srcdoc: f.hasAttribute('srcdoc'), src: f.getAttribute('src') })),
    values: [...document.querySelectorAll('input[name=option]')].map((e) => e.value),
    marker: window.__xss || document.body.dataset.xss || null,
  }));
  const bad = state.tags.filter((t) => !allowedTags.has(t));
  must(bad.length === 0, `unexpected elements in the page: ${bad}`);
  must(state.scripts === 0 && state.handlers === 0, `scripts ${state.scripts}, handlers ${state.handlers}`);
  must(state.marker === null, 'a marker was set');
  for (const fr of state.frames) must(fr.sandbox === '' && fr.srcdoc && fr.src === null, `frame not sandboxed: ${JSON.stringify(fr)}`);
  if (f.values) must(JSON.stringify(state.values) === JSON.stringify(f.values), `controls ${JSON.stringify(state.values)} != ${JSON.stringify(f.values)}`);
  let aligned = null;
  if (f.aligned && (await page.locator('iframe.rows').count()) === 1) {
    // Row i of the rows frame sits exactly beside control i, whatever the css.
    const el = await page.locator('iframe.rows').elementHandle();
    const fr = await el.contentFrame();
    const rows = fr.locator('body > .r');
    const n = await page.locator('.tlist li').count();
    must((await rows.count()) === n, `rows frame has ${await rows.count()} rows for ${n} controls`);
    for (let i = 0; i < n; i++) {
      const a = await page.locator('.tlist li').nth(i).boundingBox();
      const b = await rows.nth(i).boundingBox();
      must(b && Math.abs(a.y - b.y) <= 1.5 && Math.abs(a.height - b.height) <= 1.5, `row ${i} at ${JSON.stringify(b)} beside control at ${JSON.stringify(a)}`);
    }
    aligned = n;
  }
  // Click every link and button inside the frames: nothing may navigate the page or open a window.
  let clicked = 0;
  for (const fr of page.frames()) {
    if (fr === page.mainFrame()) continue;
    for (const sel of ['a', 'button', 'input[type=submit]', 'area', 'summary']) {
      const els = await fr.locator(sel).all().catch(() => []);
      for (const el of els.slice(0, 20)) {
        await el.click({ force: true, timeout: 1000, noWaitAfter: true }).then(() => clicked++).catch(() => {});
      }
    }
  }
  await page.waitForTimeout(300);
  must(page.url() === url, `page navigated to ${page.url()}`);
  must(popups.length === 0, `popups: ${popups}`);
  must(dialogs.length === 0, `dialogs: ${dialogs}`);
  if (aligned !== null) {
    const fr = await (await page.locator('iframe.rows').elementHandle()).contentFrame();
    must((await fr.locator('body > .r').count()) === aligned, 'after the clicks, the rows frame no longer shows its rows');
  }
  const after = await page.evaluate(() => document.title);
  must(after === state.title, 'title changed');
  if (f.pick !== undefined) {
    const ctl = page.locator('input[name=option]').nth(f.pick);
    await tapTo(ctl).catch(() => {});
    if (!(await ctl.isChecked())) {
      const diag = await ctl.evaluate((el) => {
        const r = el.getBoundingClientRect();
        const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return { r: [r.x, r.y, r.width, r.height], hit: hit && hit.outerHTML.slice(0, 120), sy: scrollY, vv: [visualViewport.offsetTop, visualViewport.scale] };
      });
      throw new Error(`tapping control ${f.pick} did not check it: ${JSON.stringify(diag)}`);
    }
    const st = await submit(page, 'submitted');
    must(st === 200, `pick status ${st}`);
  }
  return { clicked, frames: state.frames.length, aligned };
}

async function axe(f, page) {
  await page.goto(base + f.url);
  const res = await new AxeBuilder({ page }).exclude('iframe').analyze();
  const serious = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  must(serious.length === 0, serious.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`).join('; '));
  return { violations: res.violations.map((v) => `${v.id}:${v.impact}`), passes: res.passes.length };
}

async function screenshot(f, page) {
  await page.goto(base + f.url);
  if (f.pick !== undefined) await tapTo(page.locator('input[name=option]').nth(f.pick));
  for (const [name, value] of Object.entries(f.fill || {})) await page.locator(`[name="${name}"]`).fill(value);
  // Chromium does not paint off-screen cross-origin (sandboxed) frames:
  // make the viewport as tall as the page, then take the picture.
  const h = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: page.viewportSize().width, height: h });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(plan.screenshots, f.file), scale: 'css' });
}

async function measure(f, page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const t0 = Date.now();
  const resp = await page.goto(base + f.url, { waitUntil: 'load' });
  const loadMs = Date.now() - t0;
  const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
  // Scroll to the bottom and tap the last control: long lists stay usable.
  const last = page.locator('input[name=option]').last();
  await last.scrollIntoViewIfNeeded();
  await tapTo(last);
  const bytes = (await resp.body()).length;
  return { loadMs, bytes, frames: m.Frames, documents: m.Documents, nodes: m.Nodes, layoutMs: Math.round(m.LayoutDuration * 1000), heapMB: +(m.JSHeapUsedSize / 1048576).toFixed(1) };
}

const flows = { pickOne, multi, decline, approve, decided, expired, xss, axe, screenshot, measure };

for (const f of plan.flows) {
  const t = Date.now();
  try {
    const details = await withPage(f.viewport, f.scheme, (page, extra) => flows[f.do](f, page, extra));
    results.push({ name: f.name, ok: true, ms: Date.now() - t, details: details || null });
  } catch (e) {
    results.push({ name: f.name, ok: false, ms: Date.now() - t, error: String(e && e.stack || e).slice(0, 2000) });
  }
}
await browser.close();
process.stdout.write(JSON.stringify({ results }) + '\n');
