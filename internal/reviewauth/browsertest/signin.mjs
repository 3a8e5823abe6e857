// Signs a reviewer in through the OpenID provider's login form in headless
// Chromium and decides the request, as browser_test.go plans it
// (`node signin.mjs plan.json`). Prints one JSON line of results.
import { launchChromium } from '../../testenv/chromium.mjs';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await launchChromium(plan.chromium);
const out = { steps: [] };
try {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 });
  const page = await ctx.newPage();
  await page.goto(plan.reviewUrl);
  out.steps.push('login:' + new URL(page.url()).origin + new URL(page.url()).pathname);
  await page.fill('#username', plan.user);
  await page.fill('#password', plan.password);
  await Promise.all([page.waitForURL((u) => u.toString().startsWith(plan.reviewUrl), { timeout: 20000 }), page.click('button[type=submit]')]);
  out.steps.push('back:' + (page.url() === plan.reviewUrl));
  out.reviewer = await page.locator('.reviewer').innerText().catch(() => '');
  out.cookies = (await ctx.cookies()).map((c) => ({ name: c.name, path: c.path, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite, domain: c.domain }));
  await page.locator(`input[name=option][value="${plan.pick}"]`).tap();
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST', { timeout: 20000 }), page.locator('button[name=decision][value=submitted]').tap()]);
  await page.waitForLoadState('load');
  out.result = await page.locator('h1').innerText();
  // A fresh page in the same browser needs no second sign-in.
  await page.goto(plan.reviewUrl);
  out.again = await page.locator('h1').innerText();
  out.againURL = page.url();
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
