// The chat of use_chat.mjs over AG-UI: a question, a booking that ends its run with an interrupt
// (resumed with an approval), a third turn, and that turn asked again. Each RunAgentInput sent and
// each event received is checked against @ag-ui/core's own schemas, and the events' order
// against the protocol's lifecycle (a run starts first and ends last, every message and tool call
// starts before its content and ends after it).
//
//     node ag_ui.mjs http://127.0.0.1:8000/api/ag-ui THREAD_ID
//
// Prints one JSON object: the thread's messages as the client holds them, every input sent and
// every event received, and the problems found (none, when the server speaks the protocol).
import { EventSchema, RunAgentInputSchema } from "@ag-ui/core/schemas";

const [url, threadId] = process.argv.slice(2);
const problems = [];
const inputs = [];
const received = [];
let messages = [];
let runs = 0;

function applyEvent(event, open) {
  // What a client keeps of a run (the messages it sends back next time).
  const find = (id) => messages.find((m) => m.id === id);
  switch (event.type) {
    case "REASONING_MESSAGE_START":
      messages.push({ id: event.messageId, role: "reasoning", content: "" });
      break;
    case "REASONING_MESSAGE_CONTENT":
      find(event.messageId).content += event.delta;
      break;
    case "TEXT_MESSAGE_START":
      if (!find(event.messageId)) messages.push({ id: event.messageId, role: "assistant", content: "" });
      break;
    case "TEXT_MESSAGE_CONTENT":
      find(event.messageId).content += event.delta;
      break;
    case "TOOL_CALL_START": {
      let parent = find(event.parentMessageId);
      if (!parent) {
        parent = { id: event.parentMessageId, role: "assistant" };
        messages.push(parent);
      }
      parent.toolCalls = parent.toolCalls || [];
      parent.toolCalls.push({ id: event.toolCallId, type: "function", function: { name: event.toolCallName, arguments: "" } });
      open.calls[event.toolCallId] = parent.toolCalls.at(-1);
      break;
    }
    case "TOOL_CALL_ARGS":
      open.calls[event.toolCallId].function.arguments += event.delta;
      break;
    case "TOOL_CALL_RESULT":
      messages.push({ id: event.messageId, role: "tool", toolCallId: event.toolCallId, content: event.content });
      break;
  }
}

function checkOrder(events) {
  if (events[0]?.type !== "RUN_STARTED") problems.push("the run does not start with RUN_STARTED");
  const last = events.at(-1)?.type;
  if (last !== "RUN_FINISHED" && last !== "RUN_ERROR") problems.push(`the run ends with ${last}`);
  const started = new Set();
  const ended = new Set();
  for (const event of events) {
    const key = event.messageId ?? event.toolCallId;
    if (/_START$/.test(event.type) && key) {
      if (started.has(event.type + key)) problems.push(`${event.type} ${key} twice`);
      started.add(event.type + key);
    } else if (/_(CONTENT|ARGS)$/.test(event.type)) {
      const start = event.type.replace(/_(CONTENT|ARGS)$/, "_START");
      if (!started.has(start + key) || ended.has(start + key)) problems.push(`${event.type} ${key} outside its message`);
    } else if (/_END$/.test(event.type) && key) {
      const start = event.type.replace(/_END$/, "_START");
      if (!started.has(start + key)) problems.push(`${event.type} ${key} before its start`);
      ended.add(start + key);
    }
  }
  for (const start of started) if (!ended.has(start)) problems.push(`${start} never ends`);
}

async function run(extra = {}) {
  const input = { threadId, runId: `run-${++runs}`, state: {}, messages, tools: [], context: [], ...extra };
  const checked = RunAgentInputSchema.safeParse(input);
  if (!checked.success) problems.push(`input ${input.runId}: ${checked.error.message}`);
  inputs.push(structuredClone(input));
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(input),
  });
  if (!response.ok) throw new Error(`${input.runId}: ${response.status} ${await response.text()}`);
  const text = await response.text();
  const events = text
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5).trim()));
  const open = { calls: {} };
  for (const event of events) {
    const result = EventSchema.safeParse(event);
    if (!result.success) problems.push(`${event.type}: ${result.error.message}`);
    applyEvent(event, open);
  }
  checkOrder(events);
  received.push({ runId: input.runId, text, events });
  return events.at(-1);
}

let finished = await run({ messages: (messages = [{ id: "u1", role: "user", content: "What's the weather in Paris?" }]) });
if (finished.type !== "RUN_FINISHED" || finished.outcome?.type !== "success") throw new Error(JSON.stringify(finished));

messages.push({ id: "u2", role: "user", content: "Book a table for 8 people in Paris." });
finished = await run();
if (finished.outcome?.type !== "interrupt") throw new Error(`no interrupt: ${JSON.stringify(finished)}`);
const [interrupt] = finished.outcome.interrupts;
finished = await run({ resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] });
if (finished.outcome?.type !== "success") throw new Error(JSON.stringify(finished));

messages.push({ id: "u3", role: "user", content: "What time is it in Rome?" });
finished = await run();
const upTo = messages.findIndex((m) => m.id === "u3");
messages = messages.slice(0, upTo + 1); // ask the last question again
finished = await run();
if (finished.outcome?.type !== "success") throw new Error(JSON.stringify(finished));

console.log(JSON.stringify({ messages, inputs, received, problems, interrupt }));
