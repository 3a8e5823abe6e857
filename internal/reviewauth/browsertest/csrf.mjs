// A same-site forgery in headless Chromium, as browser_test.go plans it
// (`node csrf.mjs plan.json`): the reviewer signs in through the OpenID
// provider's login form, then visits a page on another port of the same
// host that auto-submits a decision to the review URL. Then the reviewer
// answers on the review page itself. Prints one JSON line of results: the
// forged POST's status and heading, and the headers the browser sent with
// each POST.
import { launchChromium } from '../../testenv/chromium.mjs';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await launchChromium(plan.chromium);
const out = { posts: [] };
try {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const pending = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url() === plan.reviewUrl) {
      // allHeaders: what went on the wire, Sec-Fetch-* included.
      pending.push(r.allHeaders().then((h) => ({ origin: h['origin'] ?? '', site: h['sec-fetch-site'] ?? '' })));
    }
  });
  await page.goto(plan.reviewUrl);
  await page.fill('#username', plan.user);
  await page.fill('#password', plan.password);
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(plan.reviewUrl), { timeout: 20000 }), page.click('button[type=submit]')]);
  out.reviewer = await page.locator('.reviewer').innerText().catch(() => '');
  // The forgery: another port's page posts the form by itself.
  const [forged] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === plan.reviewUrl, { timeout: 20000 }),
    page.goto(plan.attackUrl),
  ]);
  await page.waitForURL(plan.reviewUrl, { timeout: 20000 });
  await page.waitForLoadState('load');
  out.forgedStatus = forged.status();
  out.forgedHeading = await page.locator('h1').innerText();
  // The reviewer's own answer, on the page itself.
  await page.goto(plan.reviewUrl);
  await page.locator(`input[name=option][value="${plan.pick}"]`).check();
  const [own] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url() === plan.reviewUrl, { timeout: 20000 }),
    page.locator('button[name=decision][value=submitted]').click(),
  ]);
  await page.waitForLoadState('load');
  out.ownStatus = own.status();
  out.ownHeading = await page.locator('h1').innerText();
  out.posts = await Promise.all(pending);
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
