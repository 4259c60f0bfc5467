"""A large production log from a seed: what the import benchmark reads, so
that no large file is committed.

OTLP JSON as the OpenTelemetry Collector's file exporter writes it (one
export request a line, one to four spans each), of model calls recorded
with the GenAI conventions (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.conversation.id``).  Many
conversations run at once, interleaved in time.  Each is an agent at work: a
system prompt, a user's task, parallel batches of one to four tool calls
whose results run from a line to a few pages, an answer, the next task.
Before each call the agent drops its oldest whole tool rounds to stay under
a size (a clean trimmer); one conversation in twenty instead cuts a batch
(keeps its results, drops the assistant message that issued them) and the
provider answers HTTP 400 — so the import has incidents to find.

Same seed, same bytes.

    python benchmarks/gen_log.py OUT.otlp.jsonl --megabytes 100 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["write_log"]

_WORDS = (
    "the", "function", "returns", "a", "list", "of", "rows", "from", "the", "table", "where",
    "the", "user", "id", "matches", "and", "the", "status", "is", "active", "ordered", "by",
    "the", "time", "of", "creation", "with", "a", "limit", "of", "one", "hundred", "def",
    "class", "import", "return", "self", "value", "error", "none", "true", "false", "for",
    "while", "if", "else", "try",
)  # fmt: skip
_REJECTION = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


class _Conversation:
    """One agent's conversation: its history and its next model call."""

    def __init__(self, rng: random.Random, number: int, at: int) -> None:
        self.rng, self.id, self.at = rng, f"conv-{number:06d}", at
        self.cuts = rng.random() < 0.05
        self.calls = 0
        self.history: list[dict[str, Any]] = [
            {"role": "user", "parts": [{"type": "text", "content": _text(rng, 300)}]}
        ]
        self.system = _text(rng, 1500)
        self.left = rng.randint(6, 24)  # model calls to go
        self.limit = rng.randint(20_000, 60_000)  # what the trimmer keeps (characters)
        self.done = False

    def _reply(self) -> list[dict[str, Any]]:
        rng = self.rng
        if self.history[-1]["role"] == "user" or rng.random() < 0.6:
            parts = []
            for _ in range(rng.randint(1, 4)):
                self.calls += 1
                parts.append({"type": "tool_call", "id": f"call_{self.id}_{self.calls}",
                              "name": rng.choice(("read_file", "grep", "run_tests")),
                              "arguments": {"path": f"src/m{rng.randint(1, 99)}.py"}})  # fmt: skip
            return [{"role": "assistant", "parts": parts}]
        return [{"role": "assistant", "parts": [{"type": "text", "content": _text(rng, 400)}]}]

    def _trimmed(self) -> tuple[list[dict[str, Any]], bool]:
        """What the agent sends: whole rounds dropped from the front, or (the
        one buggy agent) a batch cut, keeping its results."""
        sent = list(self.history)
        while len(json.dumps(sent)) > self.limit and len(sent) > 3:
            if self.cuts and sent[1]["role"] == "assistant" and sent[2]["role"] == "tool":
                return [sent[0], *sent[2:]], True  # the assistant message goes, its results stay
            drop = 2
            while drop < len(sent) and sent[drop]["role"] == "tool":
                drop += 1
            sent = [sent[0], *sent[drop:]]
        return sent, False

    def span(self, trace: int) -> dict[str, Any]:
        """The next model call as an OTLP span; the history moves on."""
        rng = self.rng
        sent, cut = self._trimmed()
        start = self.at
        self.at += rng.randint(500, 4000) * 1_000_000
        attributes = [
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", "openai"),
            ("gen_ai.request.model", "gpt-4.1"),
            ("gen_ai.conversation.id", self.id),
            ("gen_ai.system_instructions",
             json.dumps([{"type": "text", "content": self.system}])),
            ("gen_ai.input.messages", json.dumps(sent)),
        ]  # fmt: skip
        status: dict[str, Any] = {}
        events = []
        if cut:
            status = {"code": 2, "message": _REJECTION}
            said = f"Error code: 400 - {{'error': {{'message': \"{_REJECTION}\"}}}}"
            events = [{"name": "exception", "timeUnixNano": str(self.at),
                       "attributes": [{"key": "exception.message",
                                       "value": {"stringValue": said}}]}]  # fmt: skip
            self.done = True
        else:
            reply = self._reply()
            attributes.append(("gen_ai.output.messages", json.dumps(reply)))
            self.history.extend(reply)
            for part in reply[0]["parts"]:
                if part["type"] == "tool_call":
                    result = _text(rng, int(rng.lognormvariate(7, 1.1)) % 12_000 + 40)
                    answer = {"type": "tool_call_response", "id": part["id"], "response": result}
                    self.history.append({"role": "tool", "parts": [answer]})
            if reply[0]["parts"][0]["type"] == "text":
                self.history.append(
                    {"role": "user", "parts": [{"type": "text", "content": _text(rng, 200)}]}
                )
            self.left -= 1
            self.done = self.left <= 0
        return {
            "traceId": f"{trace:032x}",
            "spanId": f"{rng.getrandbits(64):016x}",
            "name": "chat gpt-4.1",
            "kind": 3,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(self.at),
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes],
            "events": events,
            "status": status,
        }


def _spans(seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    started = 0
    at = 1_764_511_200 * 10**9
    running: list[_Conversation] = []
    trace = rng.getrandbits(128)
    while True:
        while len(running) < 40:
            started += 1
            running.append(_Conversation(random.Random(rng.getrandbits(64)), started, at))
        conversation = rng.choice(running)
        at = max(at, conversation.at)
        trace += 1
        yield conversation.span(trace)
        if conversation.done:
            running.remove(conversation)


def write_log(path: Path, megabytes: float, seed: int = 0) -> int:
    """Write about ``megabytes`` MB of log to ``path``; return its bytes."""
    rng = random.Random(seed ^ 0x5EED)
    spans = _spans(seed)
    written = 0
    scope = {"name": "opentelemetry.instrumentation.openai_v2", "version": "2.4b0"}
    with path.open("w", encoding="utf-8") as out:
        while written < megabytes * 1e6:
            batch = [next(spans) for _ in range(rng.randint(1, 4))]
            line = json.dumps(
                {"resourceSpans": [{"resource": {"attributes": [
                    {"key": "service.name", "value": {"stringValue": "coding-agent"}}]},
                    "scopeSpans": [{"scope": scope, "spans": batch}]}]},
                separators=(",", ":"),
            )  # fmt: skip
            out.write(line + "\n")
            written += len(line) + 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--megabytes", type=float, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(write_log(args.out, args.megabytes, args.seed))


if __name__ == "__main__":
    main()
