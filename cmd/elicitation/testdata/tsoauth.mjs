// A native MCP host on the TypeScript SDK 2.x (@modelcontextprotocol/client)
// connecting to a server that speaks OAuth only, with the SDK's own OAuth
// client: an OAuthClientProvider keeping its state in memory, a loopback
// redirect URI served here (RFC 8252), the person's browser headless
// Chromium. The client registers (RFC 7591) or, when the plan names a
// client ID metadata document, uses that document's URL as its client_id;
// Chromium signs alice in at the OpenID provider and allows on the consent
// page; the host calls tools, refreshes its token with the SDK's auth(),
// and is refused once the Go test has revoked the token.
//
// A host that kept a registration the server has forgotten (plan.forgotten,
// with the issuer it was stamped with) is told invalid_client on its
// refresh and registers again.
//
// argv[2]: a JSON plan {mcp, chromium, user, password, clientName,
// clientMetadataUrl?, forgotten?, issuer?}. Events go to stdout, one JSON line each; the Go test
// answers on stdin ("revoked" once it has revoked the refresh token).
import { launchChromium } from "../../../internal/testenv/chromium.mjs";
import { auth, Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const plan = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const lines = createInterface({ input: process.stdin });
const next = () => new Promise((resolve) => lines.once("line", resolve));
const mcpURL = new URL(plan.mcp);

// The redirect URI: a loopback listener on a port of its own, as a native
// host runs one; it hands the callback's query to whoever waits.
let onCallback;
const callbacks = createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  if (u.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { "Content-Type": "text/plain" }).end("You can close this window.");
  onCallback?.(u.searchParams);
});
await new Promise((resolve) => callbacks.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${callbacks.address().port}/callback`;

const browser = await launchChromium(plan.chromium);

// The person, in the browser the host opened: signs in at the provider,
// reads the consent page and allows. Resolves with the callback's query.
async function person(authorizationUrl) {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 });
  try {
    const page = await ctx.newPage();
    const back = new Promise((resolve) => { onCallback = resolve; });
    await page.goto(authorizationUrl.href);
    const login = new URL(page.url());
    await page.fill("#username", plan.user);
    await page.fill("#password", plan.password);
    await Promise.all([page.waitForURL((u) => u.pathname === "/review/oauth/consent", { timeout: 20000 }), page.click("button[type=submit]")]);
    const consent = {
      event: "consent",
      login: login.origin + login.pathname,
      url: page.url(),
      heading: await page.locator("h1").innerText(),
      person: await page.locator(".reviewer").innerText(),
      receipt: await page.locator("dl.receipt").innerText(),
      // Phone-first, as the review page: nothing wider than the screen,
      // buttons a thumb can hit.
      fits: await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
      allowHeight: (await page.locator("button[name=decision][value=allow]").boundingBox()).height,
      denyHeight: (await page.locator("button[name=decision][value=deny]").boundingBox()).height,
    };
    say(consent);
    await page.locator("button[name=decision][value=allow]").tap();
    const params = await back;
    say({ event: "callback", params: Object.fromEntries(params) });
    return params;
  } finally {
    await ctx.close();
  }
}

// The host's OAuthClientProvider, all in memory. Once the flow has run,
// a second request to send the person away is recorded, not followed:
// that is the host asking its user to connect again.
class Provider {
  constructor() {
    this.info = undefined;
    this.stored = undefined;
    this.verifier = undefined;
    this.discovery = undefined;
    this.authorizations = [];
    this.invalidated = [];
    this.pending = undefined;
    if (plan.clientMetadataUrl) this.clientMetadataUrl = plan.clientMetadataUrl;
    if (plan.forgotten) {
      // What a host kept from an earlier run, which the server no longer
      // knows (its registration expired, or its data was reset).
      this.info = { client_id: plan.forgotten, issuer: plan.issuer };
      this.stored = { access_token: "old", token_type: "Bearer", refresh_token: "old.old", issuer: plan.issuer };
    }
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return {
      client_name: plan.clientName,
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() { return "st-" + this.authorizations.length; }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.stored; }
  saveTokens(tokens) { this.stored = tokens; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  saveDiscoveryState(s) { this.discovery = s; }
  discoveryState() { return this.discovery; }
  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === "all" || scope === "tokens") this.stored = undefined;
    if (scope === "all" || scope === "client") this.info = undefined;
  }
  redirectToAuthorization(u) {
    this.authorizations.push(u.href);
    say({ event: "authorize", url: u.href });
    if (this.authorizations.length === 1) this.pending = person(u);
  }
}

function structured(res) {
  if (res.isError) throw new Error("tool error: " + JSON.stringify(res.content));
  return res.structuredContent ?? JSON.parse(res.content[0].text);
}

async function connect(provider) {
  const client = new Client({ name: "ts-oauth-host", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
}

const provider = new Provider();
try {
  // The first connection: 401, discovery, registration or the document,
  // the authorization request; the SDK then stops with UnauthorizedError
  // and the host waits for the person to come back.
  const first = new StreamableHTTPClientTransport(mcpURL, { authProvider: provider });
  let firstError;
  try {
    await new Client({ name: "ts-oauth-host", version: "1.0.0" }).connect(first);
  } catch (e) {
    firstError = e;
  }
  if (!(firstError instanceof UnauthorizedError)) throw new Error("the first connection did not ask for authorization: " + String(firstError));
  if (!provider.pending) throw new Error("the SDK never sent the person to authorize");
  say({ event: "registered", redirectUrl, clientInformation: provider.info, invalidated: provider.invalidated, discovery: { issuer: provider.discovery?.authorizationServerMetadata?.issuer, resource: provider.discovery?.resourceMetadata?.resource } });
  const params = await provider.pending;
  if (params.get("state") !== "st-0") throw new Error("the callback's state is " + params.get("state"));
  await first.finishAuth(params);
  const firstTokens = provider.tokens();
  say({ event: "tokens", tokens: firstTokens, clientId: provider.info.client_id });

  // Tools, as the person.
  const { client } = await connect(provider);
  const created = structured(await client.callTool({ name: "elicit_approval", arguments: { message: "Deploy from the TypeScript host?", context: { build: 24 } } }));
  const status = structured(await client.callTool({ name: "elicit_status", arguments: { elicitationId: created.elicitationId, includeAudit: true } }));
  say({ event: "called", created, status });

  // A refresh through the SDK (auth() with the stored refresh token),
  // then a call with the new access token.
  const refreshed = await auth(provider, { serverUrl: mcpURL });
  const newTokens = provider.tokens();
  const again = structured(await client.callTool({ name: "elicit_status", arguments: { elicitationId: created.elicitationId } }));
  say({ event: "refreshed", result: refreshed, tokens: newTokens, status: again, authorizations: provider.authorizations.length });

  // An access token the server refuses, as it refuses an expired one: the
  // SDK refreshes on the 401 and retries, and the call succeeds.
  provider.saveTokens({ ...newTokens, access_token: "expired" });
  const recovered = structured(await client.callTool({ name: "elicit_status", arguments: { elicitationId: created.elicitationId } }));
  say({ event: "recovered", tokens: provider.tokens(), status: recovered, authorizations: provider.authorizations.length });

  // The Go test revokes; the next call is refused, the SDK's refresh
  // fails, and it asks for a new authorization instead.
  await next();
  let refused;
  try {
    await client.callTool({ name: "elicit_status", arguments: { elicitationId: created.elicitationId } });
  } catch (e) {
    refused = e;
  }
  say({
    event: "refused",
    error: refused ? String(refused) : null,
    name: refused?.name,
    unauthorized: refused instanceof UnauthorizedError,
    invalidated: provider.invalidated,
    authorizations: provider.authorizations.length,
    tokensLeft: provider.tokens() !== undefined,
  });
  await client.close().catch(() => {});
  await next();
} catch (e) {
  console.error(String(e?.stack ?? e));
  say({ event: "failed", error: String(e?.stack ?? e) });
  process.exitCode = 1;
} finally {
  await browser.close();
  callbacks.close();
  lines.close();
}
