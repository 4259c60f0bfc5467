// A notes agent on the Vercel AI SDK, as people write one: multi-step tool
// calling with generateText, its history kept in $AGENT_HOME/history.json
// (saved after every step, so a crash loses no finished step), and trimmed
// before every model call by prepareStep:
//
//   TRIM=last   keeps the last KEEP messages, wherever the cut falls
//               (it may fall between a tool call and its result: unsafe)
//   TRIM=prune  pruneMessages drops the tool calls before the last KEEP
//               messages together with their results (safe)
//
//   node --import tsx agent.ts "a message"   one turn, then exit
//   node --import tsx agent.ts --resume      continue the saved history, then exit
//   node --import tsx agent.ts --repl        then read messages from stdin ("> " asks)
//
// Checked black-box by prunecheck (after `make node-deps`):
//   prunecheck check loop:process:examples/blackbox/ts-vercel/agent.toml
//   prunecheck check loop:process:examples/blackbox/ts-vercel/agent_safe.toml
//
// Its tools are prunecheck's tool hook ($AGENT_TOOLS): a real agent's tools
// would do the work there.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, type ModelMessage, pruneMessages, stepCountIs, tool } from "ai";

const HOME = process.env.AGENT_HOME ?? ".";
const HISTORY = join(HOME, "history.json");
const KEEP = Number(process.env.KEEP ?? "6");
const TRIM = process.env.TRIM ?? "last";
const SYSTEM = "You keep notes.";
const openai = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
});

function load(): ModelMessage[] {
  return existsSync(HISTORY) ? JSON.parse(readFileSync(HISTORY, "utf8")) : [];
}

function save(history: ModelMessage[]): void {
  mkdirSync(HOME, { recursive: true });
  writeFileSync(HISTORY + ".tmp", JSON.stringify(history));
  renameSync(HISTORY + ".tmp", HISTORY);
}

function trimmed(messages: ModelMessage[]): ModelMessage[] {
  if (TRIM === "prune") {
    return pruneMessages({ messages, toolCalls: `before-last-${KEEP}-messages`, emptyMessages: "remove" });
  }
  return messages.length <= KEEP ? messages : messages.slice(-KEEP);
}

// As many agents' tools do, this one ignores the abort signal the SDK hands it
// (the abortSignal of execute's options), and the SDK waits for a running tool after Ctrl-C: a cancel
// while a tool runs hangs until the tool ends (the cancel cell of reports/loops.md;
// passing the signal to fetch ends the turn at once).
async function runTool(id: string, name: string, input: unknown): Promise<string> {
  const answer = await fetch(process.env.AGENT_TOOLS!, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ id, name, arguments: JSON.stringify(input) }),
  });
  const outcome = (await answer.json()) as { ok: boolean; output?: string; error?: string };
  return outcome.ok ? String(outcome.output) : `error: ${outcome.error}`;
}

const note = { type: "object", properties: { name: { type: "string" } }, required: ["name"] } as const;
const tools = Object.fromEntries(
  ["read_note", "write_note"].map((name) => [
    name,
    tool({
      description: `${name.replace("_", " ")}.`,
      inputSchema: jsonSchema<{ name: string }>(note),
      execute: async (input, { toolCallId }) => runTool(toolCallId, name, input),
    }),
  ]),
);

let running: AbortController | null = null;
process.on("SIGINT", () => running?.abort());

async function turn(history: ModelMessage[]): Promise<void> {
  const start = history.length;
  running = new AbortController();
  try {
    await generateText({
      model: openai.chat("gpt-4o-mini"),
      system: SYSTEM,
      messages: [...history],
      tools,
      maxRetries: 0,
      abortSignal: running.signal,
      stopWhen: stepCountIs(20),
      prepareStep: ({ messages }) => ({ messages: trimmed(messages) }),
      onStepFinish: (step) => {
        history.splice(start, history.length - start, ...step.response.messages);
        save(history);
      },
    });
  } finally {
    running = null;
  }
}

async function main(argv: string[]): Promise<number> {
  const history = load();
  const words = argv.filter((a) => a !== "--repl" && a !== "--resume");
  let pending = words.length ? [words.join(" ")] : [];
  let go = argv.includes("--resume") || pending.length > 0;
  let status = 0;
  const lines = argv.includes("--repl") ? createInterface({ input: process.stdin })[Symbol.asyncIterator]() : null;
  for (;;) {
    if (go) {
      history.push(...pending.map((text): ModelMessage => ({ role: "user", content: text })));
      save(history);
      try {
        await turn(history);
      } catch (error) {
        if ((error as Error).name === "AbortError") {
          console.log("(cancelled)");
        } else {
          console.error(`error: ${(error as Error).message}`);
          status = 1;
        }
      }
    }
    if (lines === null) return status;
    process.stdout.write("> ");
    const line = await lines.next();
    if (line.done) return status;
    pending = [line.value.trim()];
    go = true;
  }
}

process.exitCode = await main(process.argv.slice(2));
process.exit();
