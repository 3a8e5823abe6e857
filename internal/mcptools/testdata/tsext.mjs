// A host on the TypeScript SDK 2.x client (@modelcontextprotocol/client,
// pinned to protocol 2026-07-28) and the Tasks extension's own client
// (@modelcontextprotocol/ext-tasks): it calls a tool through a task
// session and reports every task event and the outcome as JSON lines on
// stdout. argv: endpoint, token, scenario ("decide", "url": declares URL
// elicitation and accepts the review link, "cancel"), tool, arguments.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const [endpoint, token, scenario, tool, args] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const version = "2026-07-28";
const clientInfo = { name: "ts-ext-tasks-host", version: "1.0.0" };
const capabilities = {
  extensions: { "io.modelcontextprotocol/tasks": {} },
  ...(scenario === "url" ? { elicitation: { form: {}, url: {} } } : {}),
};
const auth = { Authorization: "Bearer " + token };
const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: version } } });
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: auth } }));
say({ event: "connected", protocolVersion: client.getNegotiatedProtocolVersion(), era: client.getProtocolEra(), extensions: client.getServerCapabilities()?.extensions ?? null });

// The host's raw request path for task wire shapes (the extension's
// rawDispatch): one POST per request, with the routing headers.
let seq = 0;
const rawDispatch = async (request, options) => {
  const name = request.method === "tools/call" ? request.params?.name : request.params?.taskId;
  const headers = { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Protocol-Version": version, "Mcp-Method": request.method };
  if (name !== undefined) headers["Mcp-Name"] = name;
  const res = await fetch(endpoint, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: "raw-" + ++seq, ...request }), signal: options?.signal });
  const msg = await res.json();
  say({ event: "wire", method: request.method, status: msg.result?.status, resultType: msg.result?.resultType, error: msg.error });
  return msg.error ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
};
const session = createTaskSessionFromClient(client, {
  endpointId: "elicitation-test",
  rawDispatch,
  v2RequestFraming: { protocolVersion: version, clientInfo, clientCapabilities: capabilities },
  onInputRequest: async (request, context) => {
    say({ event: "input", request, inputId: context.inputId, delivery: context.delivery });
    return { action: "accept" };
  },
  onError: (error) => say({ event: "sessionError", message: String(error) }),
});
const execution = await session.callTool(tool, JSON.parse(args));
say({ event: "started", kind: execution.kind, taskId: execution.handle?.taskId });
if (scenario === "cancel") {
  await execution.cancel();
  say({ event: "cancelRequested" });
}
const { outcome } = await execution.settle({ onEvent: (e) => { if (e.type === "task") say({ event: "task", status: e.task.status, pollInterval: e.task.suggestedPollIntervalMs }); } });
say({ event: "outcome", status: outcome.status, result: outcome.result, error: outcome.error ? String(outcome.error) : undefined });
await session.close();
await client.close();
say({ event: "done" });
process.exit(0);
