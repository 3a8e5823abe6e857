// A host on the TypeScript MCP SDK 1.32.2 and its experimental tasks client
// (protocol 2025-11-25): it starts a tool as a task with callToolStream and
// reports every message of the stream as one JSON line on stdout. Scenario
// "cancel" cancels the task once it is created; scenario "notify" reports
// the notifications/tasks/status received before "done" (it waits up to
// 10 s for the first); scenario "list" starts no
// task: it lists the principal's tasks with listTasks, following
// nextCursor, then tries a made-up cursor. The Go test decides on the
// review page.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TaskStatusNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [endpoint, token, scenario, tool, args] = process.argv.slice(2);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const client = new Client({ name: "ts-tasks-host", version: "1.0.0" }, { capabilities: {}, defaultTaskPollInterval: 200 });
const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
  requestInit: { headers: { Authorization: "Bearer " + token } },
});
// Every notifications/tasks/status the server sends (on the session's GET
// stream), reported once the stream of the task ends.
const statuses = [];
let statusSeen;
const statusArrived = new Promise((resolve) => (statusSeen = resolve));
client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
  statuses.push(n.params);
  statusSeen();
});
await client.connect(transport);
say({ event: "connected", protocolVersion: transport.protocolVersion, tasks: client.getServerCapabilities()?.tasks ?? null });
if (scenario === "list") {
  const tasks = [];
  let cursor, pages = 0;
  do {
    const page = await client.experimental.tasks.listTasks(cursor);
    pages++;
    tasks.push(...page.tasks);
    cursor = page.nextCursor;
  } while (cursor && pages < 10);
  say({ event: "listed", pages, tasks });
  try {
    await client.experimental.tasks.listTasks("made-up");
    say({ event: "badCursor", code: null });
  } catch (e) {
    say({ event: "badCursor", code: e.code, message: e.message });
  }
  await client.close();
  process.exit(0);
}
await client.listTools(); // learns execution.taskSupport and the output schemas
const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: JSON.parse(args) }, undefined, { task: { ttl: 600000 } });
for await (const message of stream) {
  if (message.type === "error") {
    say({ event: "error", message: message.error.message, code: message.error.code });
    continue;
  }
  say({ event: message.type, task: message.task, result: message.result });
  if (message.type === "taskCreated" && scenario.endsWith("cancel")) {
    const cancelled = await client.experimental.tasks.cancelTask(message.task.taskId);
    say({ event: "cancelled", task: cancelled });
  }
}
if (scenario.startsWith("notify")) {
  await Promise.race([statusArrived, new Promise((r) => setTimeout(r, 10000))]);
  say({ event: "notified", statuses });
}
say({ event: "done" });
await client.close();
process.exit(0);
