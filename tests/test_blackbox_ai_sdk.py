"""The fake model endpoint, read by the Vercel AI SDK's provider packages.

``tests/node/ai_sdk/parse.mjs`` asks the endpoint through ``ai``'s
``generateText`` and ``streamText`` with ``@ai-sdk/openai`` (Chat
Completions and Responses) and ``@ai-sdk/anthropic`` (Messages), one call
and three, and sends a history each provider rejects.  The packages come
from the npm registry at the versions of ``tests/node/ai_sdk/package-lock.json``,
installed by ``make node-deps`` into ``.node/ai_sdk`` (git-ignored; or the
folder ``PRUNECHECK_NODE_DIR`` names).  Without ``node`` or without those
packages the test is skipped, saying which and how to get it.  One node
process runs every case (slow: about 2 s of CPU).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from prunecheck.model.provider import Provider, validate
from prunecheck.sim.subjects.blackbox import FakeEndpoint, Reply, ToolCall

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "node" / "ai_sdk"
PACKAGES = ("ai", "@ai-sdk/openai", "@ai-sdk/anthropic")


def _installed() -> Path:
    """The folder holding the packages at the committed lockfile's versions,
    or a skip that says why not and what to run."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: install Node.js 18+ (Debian: apt-get install nodejs)")
    folder = Path(os.environ.get("PRUNECHECK_NODE_DIR") or ROOT / ".node" / "ai_sdk")
    missing = [p for p in PACKAGES if not (folder / "node_modules" / p / "package.json").exists()]
    if missing:
        pytest.skip(
            f"the Vercel AI SDK packages {', '.join(missing)} are not installed in {folder}: "
            "run `make node-deps` (npm ci from tests/node/ai_sdk/package-lock.json)"
        )
    locked = json.loads((SOURCE / "package-lock.json").read_text())["packages"]
    for package in PACKAGES:
        there = json.loads((folder / "node_modules" / package / "package.json").read_text())
        if there["version"] != locked[f"node_modules/{package}"]["version"]:
            pytest.skip(
                f"{package} {there['version']} in {folder} is not the locked "
                f"{locked[f'node_modules/{package}']['version']}: run `make node-deps`"
            )
    shutil.copy(SOURCE / "parse.mjs", folder / "parse.mjs")
    return folder


def _calls(width: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(f"call_{k}", "read", json.dumps({"path": f"f{k}.txt"})) for k in range(width)
    )


CASES = [
    {"api": api, "mode": mode, "width": width, "orphan": False}
    for api in ("chat", "responses", "messages")
    for mode in ("generate", "stream")
    for width in (1, 3)
] + [
    {"api": api, "mode": mode, "width": 0, "orphan": True}
    for api in ("chat", "responses", "messages")
    for mode in ("generate", "stream")
]


@pytest.mark.slow
def test_the_ai_sdk_providers_parse_the_endpoint() -> None:
    folder = _installed()
    with FakeEndpoint(answer_timeout=20) as endpoint:
        for case in CASES:
            if not case["orphan"]:
                endpoint.script(Reply(text="Reading.", calls=_calls(int(case["width"])), chunks=3))
        done = subprocess.run(
            ["node", str(folder / "parse.mjs"), json.dumps(CASES)],
            env={**os.environ, **endpoint.env()},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        exchanges = list(endpoint.exchanges)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(CASES)
    for case, got in zip(CASES, results, strict=True):
        if case["orphan"]:
            assert got["error"]["status"] == 400, (case, got)
            continue
        assert "error" not in got, (case, got)
        assert got["text"] == "Reading." and got["finishReason"] == "tool-calls", (case, got)
        assert got["toolCalls"] == [
            {"id": c.id, "name": c.name, "input": json.loads(c.arguments)}
            for c in _calls(int(case["width"]))
        ], case
    # the SDK surfaces each rejection with the provider's exact text
    rejected = [x for x in exchanges if x.rejection is not None]
    assert len(rejected) == 6
    for exchange, got in zip(
        rejected, [g for c, g in zip(CASES, results, strict=True) if c["orphan"]], strict=True
    ):
        assert exchange.rejection == validate(exchange.body, exchange.provider)[0]
        assert got["error"]["message"] == exchange.rejection.text
    assert {x.provider for x in rejected} == {
        Provider.OPENAI,
        Provider.OPENAI_RESPONSES,
        Provider.ANTHROPIC,
    }
    assert [x.stream for x in exchanges if x.rejection is None] == [
        case["mode"] == "stream" for case in CASES if not case["orphan"]
    ]
