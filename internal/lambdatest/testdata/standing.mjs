// An agent on the TypeScript MCP SDK for the standing approvals' tests:
// argv[2] is the MCP endpoint, argv[3] its API key. Each line on stdin is
// a JSON command, {"create": CONTEXT} (elicit_approval with that context),
// {"await": ID} or {"result": ID}; each answer is one JSON line on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createInterface } from "node:readline";

const [endpoint, key] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const client = new Client({ name: "ts-agent", version: "1.0.0" }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { Authorization: "Bearer " + key } } }));
say({ event: "connected" });
for await (const line of createInterface({ input: process.stdin })) {
  const cmd = JSON.parse(line);
  try {
    if ("create" in cmd) {
      const r = await client.callTool({ name: "elicit_approval", arguments: { message: "Allow the tool deploy to run with these arguments?", context: cmd.create } });
      say({ event: "created", result: r.structuredContent ?? null, error: r.isError ? r.content : null });
    } else if ("await" in cmd) {
      const r = await client.callTool({ name: "elicit_await", arguments: { elicitationId: cmd.await, waitSeconds: 1 } });
      say({ event: "awaited", result: r.structuredContent ?? null, error: r.isError ? r.content : null });
    } else if ("result" in cmd) {
      const r = await client.callTool({ name: "elicit_result", arguments: { elicitationId: cmd.result } });
      say({ event: "result", result: r.structuredContent ?? null, error: r.isError ? r.content : null });
    } else if ("done" in cmd) {
      break;
    }
  } catch (e) {
    say({ event: "error", error: String(e) });
  }
}
await client.close();
process.exit(0);
