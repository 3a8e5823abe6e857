// Answers one review page in headless Chromium as a reviewer would, following
// a JSON plan written by the gate's browser tests (go test runs this; alone:
// `node review.mjs plan.json`). Plan: {chromium, url, decision: "submitted" |
// "declined", fill: {field: value}, pick: option index, comment}. Prints one
// JSON line: {ok, heading, shown, error}; shown is the page's main text
// before the answer, so the test can check what the reviewer saw.
import { launchChromium } from '../../../testenv/chromium.mjs';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await launchChromium(plan.chromium);
const out = { ok: false };
try {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
  const page = await ctx.newPage();
  const first = await page.goto(plan.url);
  if (first.status() !== 200) throw new Error(`review page status ${first.status()}`);
  out.shown = (await page.locator('main').innerText()).slice(0, 20000);
  for (const [name, value] of Object.entries(plan.fill || {})) await page.locator(`[name="f.${name}"]`).fill(value);
  if (plan.pick !== undefined) {
    const opt = page.locator('input[name=option]').nth(plan.pick);
    for (let i = 0; i < 3 && !(await opt.isChecked()); i++) await opt.tap();
    if (!(await opt.isChecked())) throw new Error('could not pick the option');
  }
  if (plan.comment) await page.locator('[name=comment]').fill(plan.comment);
  const btn = page.locator(`button[name=decision][value=${plan.decision}]`);
  await btn.scrollIntoViewIfNeeded();
  const posted = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/review/'), { timeout: 20000 });
  await btn.tap();
  const resp = await posted;
  await page.waitForLoadState('load');
  out.status = resp.status();
  out.heading = (await page.locator('h1').first().textContent()).trim();
  out.ok = resp.status() === 200;
  if (!out.ok) out.error = `submit status ${resp.status()}: ${(await page.locator('main').innerText()).slice(0, 500)}`;
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
