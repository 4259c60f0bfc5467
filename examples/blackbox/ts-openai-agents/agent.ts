// A notes agent on the OpenAI Agents SDK for TypeScript, as people write one:
// an Agent with two function tools, run by run() on the Responses API with a
// session the agent keeps in $AGENT_HOME/history.json (a small file-backed
// Session: the SDK saves each turn's items into it), and a
// callModelInputFilter that trims what each model call is sent:
//
//   TRIM=last   the last KEEP items, wherever the cut falls (it may fall
//               between a function_call and its function_call_output: unsafe)
//   TRIM=units  the same, moved forward to the next user message (safe)
//
//   node --import tsx agent.ts "a message"   one turn, then exit
//   node --import tsx agent.ts --resume      continue the saved history, then exit
//   node --import tsx agent.ts --repl        then read messages from stdin ("> " asks)
//
// Checked black-box by prunecheck (after `make node-deps`):
//   prunecheck check loop:process:examples/blackbox/ts-openai-agents/agent.toml
//   prunecheck check loop:process:examples/blackbox/ts-openai-agents/agent_safe.toml
//
// Its tools are prunecheck's tool hook ($AGENT_TOOLS): a real agent's tools
// would do the work there.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Agent, type AgentInputItem, run, type Session, setTracingDisabled, tool } from "@openai/agents";

setTracingDisabled(true); // no trace export: the agent talks to its model endpoint only

const HOME = process.env.AGENT_HOME ?? ".";
const HISTORY = join(HOME, "history.json");
const KEEP = Number(process.env.KEEP ?? "6");
const TRIM = process.env.TRIM ?? "last";

/** The conversation, in a JSON file, written whole after every change. */
class FileSession implements Session {
  private items: AgentInputItem[] = existsSync(HISTORY) ? JSON.parse(readFileSync(HISTORY, "utf8")) : [];
  async getSessionId(): Promise<string> {
    return "notes";
  }
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    return limit === undefined ? [...this.items] : this.items.slice(-limit);
  }
  async addItems(items: AgentInputItem[]): Promise<void> {
    this.items.push(...items);
    this.save();
  }
  async popItem(): Promise<AgentInputItem | undefined> {
    const item = this.items.pop();
    this.save();
    return item;
  }
  async clearSession(): Promise<void> {
    this.items = [];
    this.save();
  }
  private save(): void {
    mkdirSync(HOME, { recursive: true });
    writeFileSync(HISTORY + ".tmp", JSON.stringify(this.items));
    renameSync(HISTORY + ".tmp", HISTORY);
  }
}

function isUser(item: AgentInputItem): boolean {
  return "role" in item && item.role === "user";
}

function trimmed(input: AgentInputItem[]): AgentInputItem[] {
  if (input.length <= KEEP) return input;
  let cut = input.length - KEEP;
  if (TRIM === "units") {
    while (cut < input.length && !isUser(input[cut])) cut += 1;
    if (cut === input.length) cut = input.findLastIndex(isUser); // the current turn, whole
  }
  return input.slice(Math.max(cut, 0));
}

// As many agents' tools do, this one ignores the abort signal the SDK hands it
// (details.signal), and the SDK waits for a running tool after Ctrl-C: a cancel
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

const agent = new Agent({
  name: "notes",
  instructions: "You keep notes.",
  model: "gpt-4o-mini",
  tools: ["read_note", "write_note"].map((name) =>
    tool({
      name,
      description: `${name.replace("_", " ")}.`,
      parameters: {
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
        additionalProperties: false,
      },
      strict: true,
      execute: async (input, _context, details) => runTool(details?.toolCall?.callId ?? "", name, input),
    }),
  ),
});

const session = new FileSession();
let running: AbortController | null = null;
process.on("SIGINT", () => running?.abort());

async function turn(input: AgentInputItem[]): Promise<void> {
  running = new AbortController();
  try {
    await run(agent, input, {
      session,
      signal: running.signal,
      callModelInputFilter: ({ modelData }) => ({ ...modelData, input: trimmed(modelData.input) }),
    });
  } finally {
    running = null;
  }
}

async function main(argv: string[]): Promise<number> {
  const words = argv.filter((a) => a !== "--repl" && a !== "--resume");
  let pending = words.length ? [words.join(" ")] : [];
  let go = argv.includes("--resume") || pending.length > 0;
  let status = 0;
  const lines = argv.includes("--repl") ? createInterface({ input: process.stdin })[Symbol.asyncIterator]() : null;
  for (;;) {
    if (go) {
      try {
        await turn(pending.map((text): AgentInputItem => ({ role: "user", content: text })));
      } catch (error) {
        if (running === null && (error as Error).name === "AbortError") {
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
