// The one way the browser tests' scripts start headless Chromium (the
// review page, sign-in, the gate's review, the MCP App host), with the
// same flags for all.
//
// A launch that fails is tried once more: on these shared machines the
// Debian Chromium now and then dies during start-up (SIGSEGV before any
// page exists) when several test packages start it at once. Only the
// launch is retried; a browser that started and then failed fails its
// test. The retry is said on stderr, which a failing test prints.
import { chromium } from 'playwright-core';

const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchChromium(executablePath) {
  try {
    return await chromium.launch({ executablePath, args });
  } catch (err) {
    console.error(`chromium did not start, trying once more: ${String(err?.message ?? err).split('\n')[0]}`);
    return await chromium.launch({ executablePath, args });
  }
}
