"""A black-box agent of the standard library alone, for prunecheck's fast tests.

Chat Completions over ``urllib`` (streamed with ``STREAM=1``), its history in
``$AGENT_HOME/history.json`` saved after every message, tools through the
harness's hook, and the history trimmed before each request: ``TRIM=last``
keeps the last ``KEEP`` messages wherever the cut falls, ``TRIM=units`` cuts
only before a user message.  ``python tiny_agent.py TEXT`` runs one turn;
``--resume`` continues the saved history; ``--repl`` then reads lines, ``> ``
asking for each; ``--http`` then asks ``$INPUT`` (prunecheck's input hook) for
each with a ``GET``, and exits when told the run ended.  With ``FICKLE=FILE``
it counts its processes in that file, and every odd-numbered one answers
each message without asking the model (an agent whose behaviour depends on
something outside the schedule).  Starts in ~30 ms:
the fast tests run it, the example in ``examples/blackbox/py_openai`` is the
same agent on the real ``openai`` client.
"""

import json
import os
import sys
import urllib.error
import urllib.request
from http.client import HTTPResponse
from pathlib import Path
from typing import Any

Message = dict[str, Any]

HISTORY = Path(os.environ["AGENT_HOME"]) / "history.json"
KEEP, TRIM = int(os.environ.get("KEEP", "6")), os.environ.get("TRIM", "last")
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
    for n in ("read_note", "write_note")]  # fmt: skip


def post(url: str, doc: Message) -> HTTPResponse:
    request = urllib.request.Request(
        url,
        json.dumps(doc).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ['KEY']}",
        },
    )
    answer: HTTPResponse = urllib.request.urlopen(request, timeout=300)
    return answer


def save(history: list[Message]) -> None:
    HISTORY.with_suffix(".tmp").write_text(json.dumps(history))
    HISTORY.with_suffix(".tmp").replace(HISTORY)


def trimmed(history: list[Message]) -> list[Message]:
    cut = max(1, len(history) - KEEP)
    while TRIM == "units" and cut > 1 and history[cut]["role"] != "user":
        cut -= 1  # back to the user message that opens the window's first turn
    return history[:1] + history[cut:]


def ask(history: list[Message]) -> Message:
    body = {"model": "m", "messages": trimmed(history), "tools": TOOLS}
    if os.environ.get("STREAM") != "1":
        reply: Message = json.loads(post(os.environ["BASE"] + "/chat/completions", body).read())
        message: Message = reply["choices"][0]["message"]
        return message
    message = {"role": "assistant", "content": ""}
    calls: dict[int, Message] = {}
    for line in post(os.environ["BASE"] + "/chat/completions", {**body, "stream": True}):
        if not line.startswith(b"data: {"):
            continue
        delta = (
            json.loads(line[6:])["choices"][0]["delta"] if json.loads(line[6:])["choices"] else {}
        )
        message["content"] += delta.get("content") or ""
        for c in delta.get("tool_calls") or []:
            call = calls.setdefault(
                c["index"],
                {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
            )
            call["id"] += c.get("id") or ""
            call["function"]["name"] += c.get("function", {}).get("name") or ""
            call["function"]["arguments"] += c.get("function", {}).get("arguments") or ""
    return {**message, "tool_calls": [calls[i] for i in sorted(calls)]} if calls else message


def turn(history: list[Message]) -> None:
    while True:
        message = ask(history)
        history.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        save(history)
        for call in message.get("tool_calls") or []:
            out = json.loads(
                post(
                    os.environ["TOOLS"],
                    {
                        "id": call["id"],
                        "name": call["function"]["name"],
                        "arguments": call["function"]["arguments"],
                    },
                ).read()
            )
            history.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": out["output"] if out["ok"] else "error: " + out["error"],
                }
            )
            save(history)
        if not message.get("tool_calls"):
            return


def main(argv: list[str]) -> int:
    history = (
        json.loads(HISTORY.read_text())
        if HISTORY.exists()
        else [{"role": "system", "content": "notes"}]
    )
    words = [a for a in argv if not a.startswith("--")]
    pending, go, status = ([" ".join(words)] if words else []), "--resume" in argv or bool(words), 0
    fickle = Path(os.environ["FICKLE"]) if os.environ.get("FICKLE") else None
    if fickle is not None:  # (the tests' own file: a count of lives)
        lives = int(fickle.read_text() or "0") + 1 if fickle.exists() else 1
        fickle.write_text(str(lives))
        skip = lives % 2 == 1
    else:
        skip = False
    while True:
        if go and skip:
            go = False
        if go:
            history += [{"role": "user", "content": t} for t in pending]
            save(history)
            try:
                turn(history)
            except KeyboardInterrupt:
                print("(cancelled)", flush=True)
            except urllib.error.HTTPError as exc:
                print(f"error: {exc.code} {exc.read().decode()}", file=sys.stderr, flush=True)
                status = 1
        if "--http" in argv:
            try:
                said = json.loads(urllib.request.urlopen(os.environ["INPUT"], timeout=300).read())
            except KeyboardInterrupt:  # a cancel while it waits for a message: nothing to stop
                continue
            if "text" not in said:
                return status
            pending, go = [said["text"]], True
            continue
        if "--repl" not in argv:
            return status
        print("> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return status
        pending, go = [line.strip()], True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
