// A host on the TypeScript MCP SDK (protocol 2025-11-25) that declares form
// elicitation and answers the host form with argv[3]: "accept" (with a
// comment), "decline", "cancel", or "hold" (no answer: it holds the form
// until the server cancels its request, reports that, and then answers
// accept all the same, as a late host would). It creates an approval with
// askInHost, awaits it (the server asks in the host during that call),
// reports each event as one JSON line on stdout, and for "cancel" and
// "hold" waits for the Go test (which then answers on the review page)
// before reading the result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createInterface } from "node:readline";

const [endpoint, answer] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const client = new Client({ name: "ts-form-host", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
  say({ event: "elicit", params: req.params });
  if (answer === "hold") {
    await new Promise((resolve) => extra.signal.addEventListener("abort", resolve, { once: true }));
    say({ event: "cancelled", reason: String(extra.signal.reason) });
    return { action: "accept", content: { comment: "too late" } };
  }
  if (answer === "accept") return { action: "accept", content: { comment: "fine from the host" } };
  return { action: answer };
});
const lines = createInterface({ input: process.stdin });
const next = () => new Promise((resolve) => lines.once("line", resolve));

await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
say({ event: "connected", protocolVersion: client.transport.protocolVersion });
const created = await client.callTool({ name: "elicit_approval", arguments: { message: "Ship build 8?", context: { build: 8 }, askInHost: true } });
say({ event: "created", result: created });
const id = created.structuredContent.elicitationId;
const awaited = await client.callTool({ name: "elicit_await", arguments: { elicitationId: id, waitSeconds: 1 } });
say({ event: "awaited", result: awaited });
if (answer === "cancel" || answer === "hold") await next(); // the Go test answered on the review page
const result = await client.callTool({ name: "elicit_result", arguments: { elicitationId: id } });
say({ event: "result", result });
await client.close();
process.exit(0);
