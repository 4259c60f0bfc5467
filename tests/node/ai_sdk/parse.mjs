// The Vercel AI SDK's provider packages reading prunecheck's fake model endpoint.
//
// tests/test_blackbox_ai_sdk.py starts the endpoint, scripts one reply per
// accepted case, and runs this script with the cases as JSON in argv[2]:
// [{"api": "chat" | "responses" | "messages", "mode": "generate" | "stream",
//   "width": N, "orphan": false}, ...].  Each case asks the model once with one
// tool declared (no execute: the tool calls come back as they were parsed);
// an "orphan" case sends a history with a tool result that answers no call,
// which the endpoint rejects with the provider's 400.  One JSON line per case
// on stdout: {text, finishReason, toolCalls: [{id, name, input}]} or
// {error: {status, message}}.  Base URLs and keys come from the environment
// (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, as FakeEndpoint.env() gives them).
import { generateText, jsonSchema, streamText, tool } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";

const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
});
const anthropic = createAnthropic({
  baseURL: process.env.ANTHROPIC_BASE_URL + "/v1",
  apiKey: process.env.ANTHROPIC_API_KEY,
});
const models = {
  chat: () => openai.chat("gpt-4.1"),
  responses: () => openai.responses("gpt-4.1"),
  messages: () => anthropic("claude-sonnet-4-5"),
};
const tools = {
  read: tool({
    description: "Read a file.",
    inputSchema: jsonSchema({
      type: "object",
      properties: { path: { type: "string" } },
      required: ["path"],
    }),
  }),
};
const orphan = [
  { role: "user", content: "hi" },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "call_9",
        toolName: "read",
        output: { type: "text", value: "42" },
      },
    ],
  },
];

async function ask(c) {
  const request = {
    model: models[c.api](),
    tools,
    maxRetries: 0,
    ...(c.orphan ? { messages: orphan } : { prompt: "read the files" }),
  };
  if (c.mode === "stream") {
    let failure = null;
    const result = streamText({ ...request, onError: ({ error }) => (failure = error) });
    let text = "";
    for await (const part of result.textStream) text += part;
    if (failure) throw failure;
    return { text, finishReason: await result.finishReason, toolCalls: await result.toolCalls };
  }
  const result = await generateText(request);
  return { text: result.text, finishReason: result.finishReason, toolCalls: result.toolCalls };
}

for (const c of JSON.parse(process.argv[2])) {
  try {
    const got = await ask(c);
    const toolCalls = got.toolCalls.map((t) => ({ id: t.toolCallId, name: t.toolName, input: t.input }));
    console.log(JSON.stringify({ text: got.text, finishReason: got.finishReason, toolCalls }));
  } catch (error) {
    console.log(JSON.stringify({ error: { status: error.statusCode ?? null, message: error.message } }));
  }
}
