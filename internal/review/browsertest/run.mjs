// Drives headless Chromium through the review page, following a JSON plan
// written by browser_test.go (go test runs this; run it alone with
// `node run.mjs plan.json`). Prints one JSON line of results on stdout.
import { launchChromium } from '../../testenv/chromium.mjs';
import { AxeBuilder } from '@axe-core/playwright';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const base = plan.base;

const viewports = {
  p390: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  p320: { viewport: { width: 320, height: 640 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  p375: { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
  d1280: { viewport: { width: 1280, height: 800 }, isMobile: false, hasTouch: false, deviceScaleFactor: 1 },
};

const browser = await launchChromium(plan.chromium);

const results = [];

async function withPage(vp, scheme, fn) {
  const ctx = await browser.newContext({ ...viewports[vp || 'p390'], colorScheme: scheme || 'light', javaScriptEnabled: true });
  const page = await ctx.newPage();
  page.__touch = viewports[vp || 'p390'].hasTouch;
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
  await press(btn);
  // A tap that lands during a layout shift on this slow, shared machine is
  // sometimes lost; tap once more (a repeated POST of one render is
  // idempotent, so this cannot hide a double decision).
  const again = setTimeout(() => { press(btn).catch(() => {}); }, 8000);
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
    await press(loc);
    for (let j = 0; j < 10 && (await loc.isChecked()) !== want; j++) await new Promise((r) => setTimeout(r, 100));
  }
  must((await loc.isChecked()) === want, 'tap did not change the control');
}

async function heading(page) { return (await page.locator('h1').first().textContent()).trim(); }

// sideways is how far the page is wider than the viewport it was given
// (a mobile viewport widens innerWidth to the content, so innerWidth alone
// would hide it).
async function sideways(page) {
  const sw = await page.evaluate(() => document.documentElement.scrollWidth);
  return sw - page.viewportSize().width;
}

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
  const overflow = await sideways(page);
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
  if (!f.receipt) {
    const zone = await page.locator('.note', { hasText: 'UTC' }).count();
    must(zone >= 1, 'date-time field does not state its zone');
  }
  for (const [name, value] of Object.entries(f.fill || {})) await page.locator(`[name="${name}"]`).fill(value);
  for (const [name, value] of Object.entries(f.select || {})) await page.locator(`select[name="${name}"]`).selectOption(value);
  for (const [name, value] of f.check || []) await tapTo(page.locator(`input[name="${name}"][value="${value}"]`));
  for (const name of f.uncheck || []) await tapTo(page.locator(`input[name="${name}"]`), false);
  const st = await submit(page, 'submitted');
  must(st === 200, `approve status ${st}: ${await page.locator('main').textContent()}`);
  must((await heading(page)) === 'Approved', `heading ${await heading(page)}`);
  if (f.receipt) {
    const receipt = await page.locator('dl.receipt').innerText();
    for (const want of f.receipt) must(receipt.includes(want), `receipt lacks "${want}": ${receipt}`);
    await axeCheck(page, 'the receipt');
  }
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
  'a', 'details', 'summary', 'button', 'pre', 'select', 'option', 'ul', 'code', 'textarea', 'dl', 'dt', 'dd',
  'strong', 'em', 'br', 'blockquote', 'hr']);

async function xss(f, page, { dialogs, popups }) {
  const resp = await page.goto(base + f.url);
  must(resp.status() === 200, `status ${resp.status()}`);
  await page.waitForTimeout(200);
  const overflow = await sideways(page);
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
  // Nothing a template made was opened in a frame's top layer (popovers,
  // modal dialogs), which ignores the rows' containment.
  for (const fr of page.frames()) {
    if (fr === page.mainFrame()) continue;
    const open = await fr.evaluate(() => document.querySelectorAll(':popover-open, :modal').length).catch(() => 0);
    must(open === 0, `after the clicks, ${open} element(s) of a frame are in its top layer`);
  }
  if (aligned !== null) {
    const fr = await (await page.locator('iframe.rows').elementHandle()).contentFrame();
    must((await fr.locator('body > .r').count()) === aligned, 'after the clicks, the rows frame no longer shows its rows');
    // What is drawn at the middle of row i belongs to row i: no row's
    // content covers another's.
    const covered = await fr.evaluate(() => [...document.querySelectorAll('body > .r')].flatMap((r, i) => {
      const b = r.getBoundingClientRect();
      const hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
      const owner = hit && hit.closest('body > .r');
      return owner === r ? [] : [`row ${i} shows ${owner ? owner.id : hit && hit.localName}`];
    }));
    must(covered.length === 0, `after the clicks, rows are covered: ${covered.slice(0, 5).join('; ')}`);
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

async function axeCheck(page, where) {
  const res = await new AxeBuilder({ page }).exclude('iframe').analyze();
  const serious = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  must(serious.length === 0, `axe on ${where}: ` + serious.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`).join('; '));
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
  if (f.scroll !== undefined) {
    // A long page: one screen, scrolled part way, with the sticky actions.
    await page.evaluate((k) => window.scrollTo(0, document.documentElement.scrollHeight * k), f.scroll);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(plan.screenshots, f.file), scale: 'css' });
    return;
  }
  // Chromium does not paint off-screen cross-origin (sandboxed) frames:
  // make the viewport as tall as the page, then take the picture.
  const h = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: page.viewportSize().width, height: h });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(plan.screenshots, f.file), scale: 'css' });
}

// measure loads the page f.repeat times (default 1), each in a fresh tab,
// and reports the median load time and layout time and the last load's
// document figures; then it scrolls to the last control and taps it: long
// lists stay usable.
async function measure(f, page, { ctx }) {
  const runs = [];
  let bytes = 0;
  for (let i = 0; i < (f.repeat || 1); i++) {
    const p = i === 0 ? page : await ctx.newPage();
    const cdp = await ctx.newCDPSession(p);
    await cdp.send('Performance.enable');
    const t0 = Date.now();
    const resp = await p.goto(base + f.url, { waitUntil: 'load' });
    const loadMs = Date.now() - t0;
    bytes = (await resp.body()).length;
    const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
    runs.push({ loadMs, layoutMs: Math.round(m.LayoutDuration * 1000), m });
    await cdp.detach();
    if (p !== page) await p.close();
  }
  const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const m = runs[runs.length - 1].m;
  const last = page.locator('input[name=option]').last();
  await last.scrollIntoViewIfNeeded();
  await tapTo(last);
  return { loadMs: median('loadMs'), layoutMs: median('layoutMs'), runs: runs.length, bytes, frames: m.Frames, documents: m.Documents, nodes: m.Nodes, heapMB: +(m.JSHeapUsedSize / 1048576).toFixed(1) };
}

// press taps on touch viewports and clicks on the desktop one.
function press(loc) { return loc.page().__touch === false ? loc.click() : loc.tap(); }

// inView reports where an element is and whether something covers its centre.
async function inView(page, sel) {
  return page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    return { top: Math.round(r.top), bottom: Math.round(r.bottom), vh: innerHeight, covered: !(hit === el || el.contains(hit)), hit: hit && hit.outerHTML.slice(0, 80) };
  }, sel);
}

async function actionsInView(page, where) {
  for (const v of ['submitted', 'declined']) {
    const s = await inView(page, `button[name=decision][value=${v}]`);
    must(s.top >= 0 && s.bottom <= s.vh + 0.5 && !s.covered, `${where}: the ${v} button is not in view: ${JSON.stringify(s)}`);
  }
}

// liveCount reads the pick count as Chromium renders it (a CSS counter, so
// only the accessibility tree has its value).
async function liveCount(page) {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { root } = await cdp.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#count' });
    const { node } = await cdp.send('DOM.describeNode', { nodeId });
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const byId = new Map(nodes.map((n) => [n.nodeId, n]));
    const start = nodes.find((n) => n.backendDOMNodeId === node.backendNodeId);
    must(start, 'the pick count is not in the accessibility tree');
    const text = [];
    const walk = (n) => {
      if (n.role && n.role.value === 'StaticText' && n.name) text.push(n.name.value);
      for (const c of n.childIds || []) if (byId.has(c)) walk(byId.get(c));
    };
    walk(start);
    return text.join('');
  } finally {
    await cdp.detach();
  }
}

async function waitPost(page, act) {
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/review/'), { timeout: 20000 });
  await act();
  const resp = await posted;
  await page.waitForLoadState('load');
  return resp.status();
}

// longList: the actions stay in view at load and after scrolling; a filter
// (Enter in the search box) keeps an earlier pick, which is then sent with
// a pick among the matches; the live count follows every tap; the receipt
// names both.
async function longList(f, page) {
  await page.goto(base + f.url);
  if (f.viewport !== 'd1280') await checkTap(page);
  await actionsInView(page, 'at load');
  const asked = await page.locator('.asked').innerText();
  must(asked.includes(f.asked), `"who asked" says: ${asked}`);
  await axeCheck(page, 'the long list');
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
  await page.waitForTimeout(150);
  await actionsInView(page, 'after scrolling half way');
  const first = page.locator(`input[name=option][value="${f.first}"]`);
  await first.scrollIntoViewIfNeeded();
  await tapTo(first);
  let n = await liveCount(page);
  must(n.startsWith('1 picked'), `count after one pick: "${n}"`);
  await page.locator('#q').fill(f.query);
  let st = await waitPost(page, () => page.locator('#q').press('Enter'));
  must(st === 200, `filter status ${st}`);
  must(await page.locator(`input[name=option][value="${f.first}"]`).isChecked(), 'the earlier pick was lost by the filter');
  const shown = await page.locator('input[name=option]').count();
  must(shown === f.shown + 1, `${shown} controls after the filter, want ${f.shown} matches + the kept pick`);
  n = await liveCount(page);
  must(n.startsWith('1 picked') && n.includes(f.rule), `count after the filter: "${n}"`);
  await actionsInView(page, 'after the filter');
  await axeCheck(page, 'the filtered list');
  const second = page.locator(`input[name=option][value="${f.second}"]`);
  await tapTo(second);
  n = await liveCount(page);
  must(n.startsWith('2 picked'), `count after the second pick: "${n}"`);
  st = await submit(page, 'submitted');
  must(st === 200, `submit status ${st}`);
  must((await heading(page)) === 'Selection sent', `heading ${await heading(page)}`);
  const receipt = await page.locator('dl.receipt').innerText();
  for (const want of f.receipt) must(receipt.includes(want), `receipt lacks "${want}": ${receipt}`);
  await axeCheck(page, 'the receipt');
  return { shown, receipt: receipt.slice(0, 200) };
}

// comment: a decision with a comment; the receipt shows it.
async function comment(f, page) {
  await page.goto(base + f.url);
  if (f.index !== undefined) await tapTo(page.locator('input[name=option]').nth(f.index));
  await page.locator('#comment').fill(f.comment);
  const st = await submit(page, f.decision);
  must(st === 200, `status ${st}`);
  must((await heading(page)) === f.expect, `heading ${await heading(page)}`);
  const receipt = await page.locator('dl.receipt').innerText();
  for (const want of [...(f.receipt || []), f.comment.trim()]) must(receipt.includes(want), `receipt lacks "${want}": ${receipt}`);
  await axeCheck(page, 'the receipt');
  return { receipt: receipt.slice(0, 300) };
}

// markdown: the message's Markdown renders; its raw HTML shows as text.
async function markdown(f, page) {
  await page.goto(base + f.url);
  const m = await page.evaluate(() => {
    const el = document.querySelector('header .message');
    const q = (s) => el.querySelectorAll(s).length;
    return {
      strong: q('strong'), em: q('em'), code: q('code'), li: q('li'), pre: q('pre'),
      links: [...el.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      bad: q('b, img, script, iframe, h1, h2, h3, style, input, form'),
      text: el.textContent,
    };
  });
  must(m.strong >= 1 && m.em >= 1 && m.code >= 1 && m.li >= 2 && m.pre === 1, `markdown not rendered: ${JSON.stringify(m)}`);
  must(JSON.stringify(m.links) === JSON.stringify(f.links), `links ${JSON.stringify(m.links)}, want ${JSON.stringify(f.links)}`);
  must(m.bad === 0, `raw HTML became markup: ${JSON.stringify(m)}`);
  for (const t of f.text) must(m.text.includes(t), `message text lacks ${JSON.stringify(t)}: ${m.text}`);
  await axeCheck(page, 'the Markdown message');
  return { links: m.links };
}

// context: the whole context is visible: no inner scroll box, no sideways
// scroll, no JSON escapes of & < >.
async function context(f, page) {
  await page.goto(base + f.url);
  const c = await page.evaluate(() => {
    const pre = document.querySelector('pre.json');
    const cs = getComputedStyle(pre);
    return { sh: pre.scrollHeight, ch: pre.clientHeight, sw: pre.scrollWidth, cw: pre.clientWidth, overflow: cs.overflowY, maxH: cs.maxHeight, text: pre.textContent };
  });
  must(c.sh <= c.ch + 1 && c.sw <= c.cw + 1, `context clipped: ${JSON.stringify({ ...c, text: undefined })}`);
  c.pageOverflow = await sideways(page);
  must(c.maxH === 'none' && c.pageOverflow <= 0, `context box: ${JSON.stringify({ ...c, text: undefined })}`);
  must(!/\\u00(26|3c|3e)/i.test(c.text), 'the context shows JSON escapes');
  for (const t of f.text) must(c.text.includes(t), `context lacks ${JSON.stringify(t)}`);
  must(c.text.length >= f.minChars, `context shows ${c.text.length} characters`);
  await axeCheck(page, 'the context');
  return { chars: c.text.length, height: c.ch };
}

// brokenWords lists the words of the page's text (outside code, ids and
// JSON, which may break anywhere) that the layout split across two lines.
async function brokenWords(page) {
  return page.evaluate(() => {
    const out = [];
    const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest('pre, code, td.id, .vh, style, textarea')) continue;
      const re = /\S+/g;
      let m;
      while ((m = re.exec(n.data))) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top)));
        if (tops.size > 1) out.push(m[0]);
      }
    }
    return out;
  });
}

// words: no word of the page is broken mid-way.
async function words(f, page) {
  await page.goto(base + f.url);
  const broken = await brokenWords(page);
  must(broken.length === 0, `words broken mid-way: ${broken.slice(0, 10).join(', ')}`);
}

// rowsFit: on a phone the rows frame gets most of each row; each control is
// named by its option's label; each Details link is a 44 px target.
async function rowsFit(f, page) {
  await page.goto(base + f.url);
  await checkTap(page);
  const g = await page.evaluate(() => {
    const list = document.querySelector('.tlist');
    const frame = list.querySelector('iframe.rows').getBoundingClientRect();
    const li = list.querySelector('li').getBoundingClientRect();
    const more = [...list.querySelectorAll('a.more')].map((a) => { const r = a.getBoundingClientRect(); return [r.width, r.height]; });
    return { list: list.getBoundingClientRect().width, frame: frame.width, controls: li.width, more };
  });
  const broken = await brokenWords(page);
  must(broken.length === 0, `words broken mid-way: ${broken.slice(0, 10).join(', ')}`);
  must(g.frame / g.list >= f.minShare, `the rows frame has ${Math.round(100 * g.frame / g.list)}% of the row: ${JSON.stringify(g)}`);
  must(g.more.length === f.labels.length && g.more.every(([w, h]) => w >= 44 && h >= 44), `Details targets: ${JSON.stringify(g.more)}`);
  for (const name of f.labels) {
    const n = await page.getByRole(f.role, { name, exact: true }).count();
    must(n === 1, `no ${f.role} named ${JSON.stringify(name)}`);
  }
  await axeCheck(page, 'the templated list');
  return { share: +(g.frame / g.list).toFixed(2) };
}

// wide: the page does not scroll sideways, and the message's deepest
// element is still inside the viewport with room for its text.
async function wide(f, page) {
  const resp = await page.goto(base + f.url);
  must(resp.status() === 200, `status ${resp.status()}`);
  const g = await page.evaluate(() => {
    let deepest = null, depth = -1;
    for (const el of document.querySelectorAll('.message *')) {
      let d = 0;
      for (let p = el; p && !p.classList.contains('message'); p = p.parentElement) d++;
      if (d > depth && el.textContent.trim()) { deepest = el; depth = d; }
    }
    const r = deepest.getBoundingClientRect();
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth, depth, left: r.left, right: r.right, width: r.width };
  });
  // A mobile viewport widens its layout (innerWidth) to the content: hold
  // the page to the width the viewport was given.
  const vw = page.viewportSize().width;
  must(g.scrollWidth <= vw, `the page scrolls sideways: scrollWidth ${g.scrollWidth} > viewport ${vw} (${JSON.stringify(g)})`);
  must(g.right <= vw && g.width >= f.minWidth, `the deepest element (depth ${g.depth}) is squeezed or cut: ${JSON.stringify(g)}`);
  return g;
}

// inbox: the signed-in reviewer's inbox (signed in through the Go test's
// stand-in): its title, tap targets, no sideways scroll and axe; the
// filter by agent (a GET form, no script); a row opens the review page
// without the key, the approval lands there, and the inbox has one row
// fewer.
async function inbox(f, page) {
  await page.goto(base + '/__test/signin?as=' + f.as);
  must(new URL(page.url()).pathname === '/review/', `signed in at ${page.url()}`);
  const title = await page.title();
  must(title === f.title, `title ${JSON.stringify(title)}, want ${JSON.stringify(f.title)}`);
  await checkTap(page);
  const small = await page.evaluate(() => [...document.querySelectorAll('a.open')].filter((a) => a.getBoundingClientRect().height < 44).length);
  must(small === 0, `${small} row links under 44 px`);
  await axeCheck(page, 'the inbox');
  const rows = async () => page.locator('ol.inbox > li').count();
  const n0 = await rows();
  await page.locator('#agent').selectOption(f.agent);
  await Promise.all([page.waitForURL((u) => u.searchParams.get('agent') === f.agent), press(page.locator('form.ifilter button[type=submit]'))]);
  const n1 = await rows();
  must(n1 === f.agentRows, `${n1} rows for ${f.agent}, want ${f.agentRows}`);
  await checkTap(page);
  await axeCheck(page, 'the filtered inbox');
  const first = page.locator('a.open').first();
  const headline = (await first.textContent()).trim();
  await Promise.all([page.waitForURL((u) => /^\/review\/[^/]+$/.test(u.pathname)), press(first)]);
  must((await page.locator('.message').first().textContent()).includes(headline), `the row "${headline}" opened another page`);
  const st = await submit(page, 'submitted');
  must(st === 200 && (await heading(page)) === 'Approved', `approve without the key: ${st} ${await heading(page)}`);
  await page.goto(base + '/review/');
  const n2 = await rows();
  must(n2 === n0 - 1, `${n2} rows after the decision, want ${n0 - 1}`);
  return { title, rows: [n0, n1, n2] };
}

// inboxPages: an inbox of two pages (f.total rows for f.as): the first
// page's 200 rows and its count, the "Next requests" link (a tap target
// like the rest, axe-clean), the last page's rows, no next link there, and
// "Previous requests" back to the first.
async function inboxPages(f, page) {
  await page.goto(base + '/__test/signin?as=' + f.as);
  const shown = async () => (await page.locator('#shown').textContent()).trim();
  const rows = async () => page.locator('ol.inbox > li').count();
  const pagerSmall = async () => page.evaluate(() => [...document.querySelectorAll('nav.pager a')].filter((a) => a.getBoundingClientRect().height < 44).length);
  let text = await shown();
  must(text.startsWith(`Requests 1–200 of ${f.total},`), `first page says ${JSON.stringify(text)}`);
  must((await rows()) === 200, `first page: ${await rows()} rows`);
  must((await page.locator('nav.pager a').count()) === 1, 'the first page links anywhere but to the next one');
  must((await pagerSmall()) === 0, 'a pager link under 44 px');
  await checkTap(page);
  await axeCheck(page, 'the first page of the inbox');
  await Promise.all([page.waitForURL((u) => u.searchParams.has('after')), press(page.locator('a[rel=next]'))]);
  text = await shown();
  const last = f.total - 200;
  must(text.startsWith(last === 1 ? `Request 201 of ${f.total}.` : `Requests 201–${f.total} of ${f.total},`), `last page says ${JSON.stringify(text)}`);
  must((await rows()) === last, `last page: ${await rows()} rows, want ${last}`);
  must((await page.locator('a[rel=next]').count()) === 0, 'the last page links to a next one');
  must((await pagerSmall()) === 0, 'a pager link under 44 px');
  await checkTap(page);
  await axeCheck(page, 'a later page of the inbox');
  await Promise.all([page.waitForURL((u) => !u.searchParams.has('after')), press(page.locator('a[rel=prev]'))]);
  must((await rows()) === 200 && (await shown()).startsWith('Requests 1–200 '), `back at the first page: ${await rows()} rows, ${JSON.stringify(await shown())}`);
  return { first: 200, last };
}

// standing: a signed-in reviewer (f.as) on a request's page (f.url) ticks
// "Approve, and also approve calls like this for…", sets the uses and
// approves; the page's new controls are tap targets and axe-clean (in the
// scheme and viewport given), the receipt says what was made, the inbox
// lists it (axe-clean too) and its Revoke button revokes it.
async function standing(f, page) {
  await page.goto(base + '/__test/signin?as=' + f.as);
  await page.goto(base + f.url);
  must((await page.locator('fieldset.standing > legend').textContent()).includes('Approve, and also approve calls like this for'), 'no standing approval offered');
  await tapTo(page.locator('#rule-on'));
  await page.locator('#rule-uses').fill(String(f.uses));
  await page.locator('#rule-for').selectOption('4h0m0s');
  await checkTap(page);
  const smallChecks = await page.evaluate(() => [...document.querySelectorAll('fieldset.standing label.check')].filter((l) => l.getBoundingClientRect().height < 44).length);
  must(smallChecks === 0, `${smallChecks} standing approval checkboxes under 44 px`);
  await axeCheck(page, 'the decision form with a standing approval');
  const st = await submit(page, 'submitted');
  const text = await page.locator('main').textContent();
  must(st === 200 && (await heading(page)) === 'Approved' && text.includes(`up to ${f.uses}, for 4 hours`), `approve with a rule: ${st} ${await heading(page)}`);
  await page.goto(base + '/review/');
  must((await page.locator('ul.rules > li').count()) === 1, 'the inbox does not list the rule');
  await checkTap(page);
  await axeCheck(page, 'the inbox with a standing approval');
  const revoked = page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === '/review/' && r.request().redirectedFrom() !== null, { timeout: 20000 });
  await press(page.locator('form.revoke button'));
  await revoked;
  await page.waitForLoadState('load');
  const status = (await page.locator('ul.rules .status').first().textContent()).trim();
  must(status === 'revoked' && (await page.locator('form.revoke').count()) === 0, `after Revoke the rule is ${status}`);
  return { status };
}

// insights: the signed-in reviewer's Insights page: its heading, no
// sideways scroll, axe, and the link back to the inbox.
async function insights(f, page) {
  await page.goto(base + '/__test/signin?as=' + f.as);
  await page.goto(base + '/review/insights');
  must((await heading(page)) === 'Insights', `heading ${await heading(page)}`);
  await checkTap(page);
  await axeCheck(page, 'the Insights page');
  const lists = await page.locator('dl.figures').count();
  await Promise.all([page.waitForURL((u) => u.pathname === '/review/'), page.locator('a', { hasText: 'Back to the inbox' }).click()]);
  return { lists };
}

// batch: batch triage from the inbox (no script: the page's CSP forbids
// it): tick f.tick approvals (each checkbox a 44 px target), "Approve
// selected…" shows the confirmation listing exactly those, with the page
// still tap-sized, unscrolled sideways and axe-clean; confirming decides
// each and lists its outcome; the inbox then has f.tick rows fewer. With
// f.shots, screenshots of the inbox with the ticks and of the confirmation.
async function batch(f, page) {
  await page.goto(base + '/__test/signin?as=' + f.as);
  must(new URL(page.url()).pathname === '/review/', `signed in at ${page.url()}`);
  const rows = async () => page.locator('ol.inbox > li').count();
  const n0 = await rows();
  const picks = page.locator('ol.inbox label.pick input[type=checkbox]');
  must((await picks.count()) >= f.tick, `${await picks.count()} checkboxes, want at least ${f.tick}`);
  const small = await page.evaluate(() => [...document.querySelectorAll('label.pick, label.check')].filter((l) => l.getBoundingClientRect().height < 44 || l.getBoundingClientRect().width < 44).length);
  must(small === 0, `${small} batch checkboxes under 44 px`);
  const headlines = [];
  for (let i = 0; i < f.tick; i++) {
    await tapTo(picks.nth(i));
    headlines.push((await page.locator('ol.inbox > li:has(label.pick)').nth(i).locator('a.open').textContent()).trim());
  }
  await checkTap(page);
  await axeCheck(page, 'the inbox with ticks');
  if (f.shots) await shot(page, f.shots[0]);
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), press(page.locator('form#batch button[value=' + f.decision + ']'))]);
  await page.waitForLoadState('load');
  must((await heading(page)) === f.confirmHeading, `confirmation heading ${JSON.stringify(await heading(page))}`);
  const listed = (await page.locator('ol.batch-list a.open').allTextContents()).map((s) => s.trim());
  must(JSON.stringify(listed) === JSON.stringify(headlines), `confirmation lists ${JSON.stringify(listed)}, ticked ${JSON.stringify(headlines)}`);
  await checkTap(page);
  await axeCheck(page, 'the batch confirmation');
  if (f.shots) await shot(page, f.shots[1]);
  await page.locator('#comment').fill('done from the inbox');
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), press(page.locator('form.confirm button[type=submit]'))]);
  await page.waitForLoadState('load');
  must((await heading(page)) === f.doneHeading, `result heading ${JSON.stringify(await heading(page))}`);
  const oks = await page.locator('p.outcome.ok').count();
  must(oks === f.tick, `${oks} outcomes ok, want ${f.tick}`);
  await checkTap(page);
  await axeCheck(page, 'the batch result');
  await press(page.locator('a.back'));
  await page.locator('#shown').waitFor(); // only the inbox has it
  const n1 = await rows();
  must(n1 === n0 - f.tick, `${n1} rows after the batch, want ${n0 - f.tick}`);
  return { rows: [n0, n1], listed };
}

// shot saves a full-page screenshot as file in the plan's directory.
async function shot(page, file) {
  const h = await page.evaluate(() => document.documentElement.scrollHeight);
  const vp = page.viewportSize();
  await page.setViewportSize({ width: vp.width, height: h });
  await page.screenshot({ path: join(plan.screenshots, file), scale: 'css' });
  await page.setViewportSize(vp);
}

const flows = { standing, insights, batch, wide, pickOne, multi, decline, approve, decided, expired, xss, axe, screenshot, measure, longList, comment, markdown, context, rowsFit, words, inbox, inboxPages };

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
