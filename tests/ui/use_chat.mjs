// A multi-turn chat driven by the AI SDK's own chat client (the core `useChat` wraps) against a
// thinkagent UI message stream endpoint: a question, a tool call that asks for approval (approved,
// then continued), a third turn, and a regenerate of it. Every chunk the server streams is checked
// against the SDK's own `uiMessageChunkSchema`.
//
//     node use_chat.mjs http://127.0.0.1:8000/api/chat/ui CHAT_ID
//
// Prints one JSON object: the chat's messages, each response's raw body, each request's body, and
// the chunks that failed the schema (none, when the server speaks the protocol).
import { AbstractChat, DefaultChatTransport, uiMessageChunkSchema } from "ai";
import { safeValidateTypes } from "@ai-sdk/provider-utils";

const [api, chatId] = process.argv.slice(2);

class MemoryState {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) {
    this.messages = this.messages.concat(message);
  }
  popMessage() {
    this.messages = this.messages.slice(0, -1);
  }
  replaceMessage(index, message) {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  }
  snapshot(thing) {
    return structuredClone(thing);
  }
}

class Chat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new MemoryState() });
  }
}

const bodies = [];
const requests = [];
const pending = [];

async function recordingFetch(url, init) {
  requests.push(JSON.parse(init.body));
  const response = await fetch(url, init);
  pending.push(response.clone().text().then((text) => bodies.push({ status: response.status, text })));
  return response;
}

const errors = [];
const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api, fetch: recordingFetch }),
  onError: (error) => errors.push(String(error)),
});

function check(step) {
  if (chat.status !== "ready" || errors.length) {
    throw new Error(`${step}: status ${chat.status}, errors ${JSON.stringify(errors)}`);
  }
}

await chat.sendMessage({ text: "What's the weather in Paris?" });
check("turn 1");

await chat.sendMessage({ text: "Book a table for 8 people in Paris." });
check("turn 2");
const asking = chat.messages.at(-1).parts.find((part) => part.state === "approval-requested");
if (!asking) throw new Error("turn 2 asked for no approval");
await chat.addToolApprovalResponse({ id: asking.approval.id, approved: true });
await chat.sendMessage(); // continue the assistant message whose call was approved
check("turn 2, approved");

await chat.sendMessage({ text: "What time is it in Rome?" });
check("turn 3");
const before = chat.messages.at(-1).id;
await chat.regenerate();
check("turn 3, regenerated");

await Promise.all(pending);
const invalid = [];
for (const { text } of bodies) {
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") continue;
    const result = await safeValidateTypes({ value: JSON.parse(data), schema: uiMessageChunkSchema });
    if (!result.success) invalid.push({ chunk: data, error: String(result.error) });
  }
}

console.log(
  JSON.stringify({ messages: chat.messages, bodies, requests, invalid, regenerated: before })
);
