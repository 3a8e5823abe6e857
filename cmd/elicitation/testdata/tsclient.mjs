// A host on the TypeScript MCP SDK (protocol 2025-11-25) that declares URL
// elicitation (argv[3] "url") or not: it creates an approval, reports each
// event as one JSON line on stdout, and waits for the Go test (which answers
// on the review page) before awaiting and reading the result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { createInterface } from "node:readline";

const [endpoint, mode] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const capabilities = mode === "url" ? { elicitation: { form: {}, url: {} } } : {};
const client = new Client({ name: "ts-host", version: "1.0.0" }, { capabilities });
if (mode === "url") {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    say({ event: "elicit", params: req.params });
    return { action: "accept" };
  });
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (n) => {
    say({ event: "complete", params: n.params });
  });
}
const lines = createInterface({ input: process.stdin });
const next = () => new Promise((resolve) => lines.once("line", resolve));

await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
say({ event: "connected", protocolVersion: client.transport.protocolVersion });
const created = await client.callTool({ name: "elicit_approval", arguments: { message: "Ship build 7?", context: { build: 7 } } });
say({ event: "created", result: created });
await next(); // the Go test answered on the review page
const awaited = await client.callTool({ name: "elicit_await", arguments: { elicitationId: created.structuredContent.elicitationId } });
say({ event: "awaited", result: awaited });
const result = await client.callTool({ name: "elicit_result", arguments: { elicitationId: created.structuredContent.elicitationId } });
say({ event: "result", result });
await next(); // the Go test saw what it needed
await client.close();
process.exit(0);
