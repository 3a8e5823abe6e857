// Two sign-ins in parallel in one headless Chromium (two tabs of one
// browser), then a stray callback, as browser_test.go plans it
// (`node twotabs.mjs plan.json`). Prints one JSON line of results.
import { launchChromium } from '../../testenv/chromium.mjs';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const browser = await launchChromium(plan.chromium);
const out = {};
try {
  const ctx = await browser.newContext();
  const [tab1, tab2] = [await ctx.newPage(), await ctx.newPage()];
  // Both tabs reach the provider's login form before either signs in.
  await tab1.goto(plan.reviewUrl1);
  await tab2.goto(plan.reviewUrl2);
  out.loginForms = [await tab1.locator('#username').count(), await tab2.locator('#username').count()];
  for (const [tab, url] of [[tab1, plan.reviewUrl1], [tab2, plan.reviewUrl2]]) {
    await tab.fill('#username', plan.user);
    await tab.fill('#password', plan.password);
    await Promise.all([tab.waitForURL((u) => u.toString().startsWith(url), { timeout: 20000 }), tab.click('button[type=submit]')]);
  }
  out.tabs = [await tab1.locator('.reviewer').innerText().catch(() => ''), await tab2.locator('.reviewer').innerText().catch(() => '')];
  // A stray callback (a bare GET) in the first tab.
  const stray = await tab1.goto(plan.callbackUrl);
  out.strayStatus = stray.status();
  out.strayHeading = await tab1.locator('h1').innerText();
  // Still signed in: the page again, without the provider.
  await tab1.goto(plan.reviewUrl1);
  out.afterURL = tab1.url();
  out.after = await tab1.locator('.reviewer').innerText().catch(() => '');
  out.cookies = (await ctx.cookies()).map((c) => c.name);
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
