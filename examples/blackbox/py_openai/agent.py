"""A notes agent on the raw ``openai`` client, as people write one by hand.

It keeps its conversation in ``$AGENT_HOME/history.json`` (saved after every
message, so a crash loses nothing it had), calls the model with the tools
of ``TOOLS``, runs each tool call the model asks for in turn, and keeps its
history short before every request: ``TRIM=last`` keeps the system prompt
and the last ``KEEP`` messages (the cut may fall between a call and its
result: unsafe), ``TRIM=units`` cuts only where a user message starts (safe).

    python agent.py "a message"     one turn, then exit (the history persists)
    python agent.py --resume        continue the history as it was saved, then exit
    python agent.py --repl          then read messages from stdin; "> " asks for the next

Checked black-box by prunecheck:

    prunecheck check loop:process:examples/blackbox/py_openai/agent.toml
    prunecheck check loop:process:examples/blackbox/py_openai/agent_safe.toml

Its tools are prunecheck's tool hook (``AGENT_TOOLS``): a real agent's tools
would do the work here.
"""

import json
import os
import sys
import urllib.request
from pathlib import Path

import openai

HOME = Path(os.environ.get("AGENT_HOME", "."))
HISTORY = HOME / "history.json"
KEEP = int(os.environ.get("KEEP", "6"))
TRIM = os.environ.get("TRIM", "last")
SYSTEM = {"role": "system", "content": "You keep notes."}
TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"{name.replace('_', ' ')}.",
     "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"]}}}
    for name in ("read_note", "write_note")
]  # fmt: skip


def load() -> list[dict]:
    return json.loads(HISTORY.read_text()) if HISTORY.exists() else [SYSTEM]


def save(history: list[dict]) -> None:
    HISTORY.parent.mkdir(parents=True, exist_ok=True)
    HISTORY.with_suffix(".tmp").write_text(json.dumps(history))
    HISTORY.with_suffix(".tmp").replace(HISTORY)


def trimmed(history: list[dict]) -> list[dict]:
    if len(history) <= KEEP + 1:
        return history
    cut = len(history) - KEEP
    if TRIM == "units":  # never between a call and its result: back to a user message
        while cut > 1 and history[cut]["role"] != "user":
            cut -= 1
    return [history[0], *history[cut:]]


def run_tool(call) -> str:
    request = urllib.request.Request(
        os.environ["AGENT_TOOLS"], method="POST", headers={"Content-Type": "application/json"},
        data=json.dumps({"id": call.id, "name": call.function.name,
                         "arguments": call.function.arguments}).encode())  # fmt: skip
    with urllib.request.urlopen(request, timeout=300) as answer:
        outcome = json.loads(answer.read())
    return outcome["output"] if outcome["ok"] else f"error: {outcome['error']}"


def turn(client: openai.OpenAI, history: list[dict]) -> None:
    while True:
        reply = (
            client.chat.completions.create(
                model="gpt-4o-mini", messages=trimmed(history), tools=TOOLS
            )
            .choices[0]
            .message
        )
        history.append(
            reply.model_dump(exclude_none=True, include={"role", "content", "tool_calls"})
        )
        save(history)
        if not reply.tool_calls:
            return
        for call in reply.tool_calls:
            history.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call)})
            save(history)


def main(argv: list[str]) -> int:
    client = openai.OpenAI(max_retries=0)
    history = load()
    words = [a for a in argv if a not in ("--repl", "--resume")]
    pending = [" ".join(words)] if words else []
    go, status = "--resume" in argv or bool(pending), 0
    while True:
        if go:
            history += [{"role": "user", "content": text} for text in pending]
            save(history)
            try:
                turn(client, history)
            except KeyboardInterrupt:
                print("(cancelled)", flush=True)
            except openai.APIError as exc:
                print(f"error: {exc}", file=sys.stderr, flush=True)
                status = 1
        if "--repl" not in argv:
            return status
        print("> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return status
        pending, go = [line.strip()], True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
