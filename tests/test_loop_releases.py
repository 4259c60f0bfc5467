"""Each loop adapter on the oldest release it claims (issue 31, "Versions"):
a venv with the adapter's ``SUPPORTED.oldest_pins`` (built from PyPI by
``known_bugs/venvs.py``, reused once built) checks one example agent, and the
check runs: a verdict (exit 0 or 1), never exit 2 (an adapter that cannot
drive that release) nor "vacuous".  Slow (``make test-all``): a venv build
takes minutes the first time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prunecheck.sim.subjects.loops.target import FRAMEWORKS, adapter_named

ROOT = Path(__file__).resolve().parent.parent

#: The example agent each framework's oldest release checks.
EXAMPLES = {
    "pydantic-ai": "examples/loops/pydantic_ai_turns.py:agent",
    "openai-agents": "examples/loops/openai_agents_turns.py:app",
    "langgraph": "examples/loops/langgraph_trim.py:agent",
    "autogen": "examples/loops/autogen_token_limited.py:agent",
    "strands": "examples/loops/strands_sliding.py:agent",
    # AutoGen 0.2 needs openai<2 (no example agent in the main venv): the corpus's agent
    "pyautogen": "known_bugs/autogen-3178-history-limiter-orphans-tool-result/agent.py:assistant",
    "maf": "examples/loops/maf_compaction.py:keep_last",
    "adk": "examples/loops/adk_context_filter.py:app",
    "llamaindex": "examples/loops/llamaindex_window.py:agent",
    # LlamaIndex 0.11's OpenAIAgent (no example agent in the main venv): the corpus's agent
    "llamaindex-openai-agent": (
        "known_bugs/llama-index-13715-memory-starts-with-tool/agent.py:agent"
    ),
}

#: Where the example needs a newer release than the oldest supported one, the agent the
#: oldest release checks instead: the known-bug corpus's agent written for that release
#: (examples/loops/openai_agents_turns.py uses function_tool(timeout=...), 0.9.0+;
#: LangGraph 0.3's oldest release has no LangChain v1).
OLDEST_EXAMPLES = {
    "openai-agents": "known_bugs/openai-agents-2426-streamed-tool-items-not-saved/agent.py:agent",
    # examples/loops/langgraph_trim.py is a LangChain v1 create_agent: LangGraph 0.3 has none
    "langgraph": "known_bugs/langgraph-3126-interrupt-reruns-parallel-tools/agent.py:agent",
}


def test_every_framework_has_an_example() -> None:
    assert set(EXAMPLES) == set(FRAMEWORKS)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_the_oldest_supported_release_runs_a_check(name: str, tmp_path: Path) -> None:
    supported = adapter_named(name).supported  # type: ignore[attr-defined]
    if not supported.oldest_pins:
        pytest.skip(f"{name}: only its newest release was run (no oldest_pins)")
    sys.path.insert(0, str(ROOT))
    try:
        from known_bugs.venvs import build
    finally:
        sys.path.remove(str(ROOT))
    venv = build(tuple(sorted(supported.oldest_pins)))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PRUNECHECK_FAILURES"] = str(tmp_path / "failures")
    example = OLDEST_EXAMPLES.get(name, EXAMPLES[name])
    done = subprocess.run(
        [str(venv / "bin" / "prunecheck"), "check", f"loop:{example}",
         "--max-examples", "40", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert json.loads(done.stdout)["details"]["vacuous"] is False, done.stdout[-2000:]
    assert supported.tested[0] in subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         f"import importlib.metadata as m; print(m.version({supported.dist!r}))"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
