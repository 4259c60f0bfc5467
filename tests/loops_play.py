"""Helpers of the framework adapters' tests: load an example agent, play a
schedule through the core's harness (:class:`LoopRun`), read its requests."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest

from prunecheck.sim.loops.contract import Adapter, ToolCall
from prunecheck.sim.loops.steps import Step

__all__ = ["call", "kinds", "load_example", "play", "roles", "run_script", "tool_text"]

EXAMPLES = Path(__file__).parent.parent / "examples" / "loops"


def load_example(name: str, attr: str) -> object:
    """``examples/loops/<name>.py:<attr>``, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"loops_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # frameworks resolve annotations through it
    spec.loader.exec_module(module)
    return getattr(module, attr)


def call(n: int, name: str = "read_file") -> ToolCall:
    """The n-th call the model double issues (``call_<n>``), with valid arguments."""
    key = {"read_file": "path", "delete_file": "path", "run_tests": "target"}[name]
    return ToolCall(f"call_{n}", name, f'{{"{key}": "f{n}"}}')


@contextmanager
def play(adapter: Adapter, target: object, steps: Sequence[object]) -> Iterator[Any]:
    """The core's ``LoopRun`` after ``steps`` (schedule steps) applied one by
    one; a refused step fails the test.  Skips where the core's harness
    (``prunecheck.sim.loops.scheduler``) is not installed."""
    scheduler = pytest.importorskip("prunecheck.sim.loops.scheduler")
    with scheduler.LoopRun(adapter, target) as run:
        for step in steps:
            run.apply(cast(Step, step))
        yield run


def roles(run: Any, index: int = -1) -> list[str]:
    """A request's messages in short: ``S``, ``U``, ``A``, ``A(call_1,call_2)``, ``T(call_1)``."""
    out = []
    for m in run.ledger.requests[index].body["messages"]:
        if m.get("tool_calls"):
            out.append("A(" + ",".join(c["id"] for c in m["tool_calls"]) + ")")
        elif m["role"] == "tool":
            out.append(f"T({m['tool_call_id']})")
        else:
            out.append(str(m["role"])[0].upper())
    return out


def kinds(run: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The run's incidents: kind and call ids."""
    return [(i.kind.value, i.ids) for i in run.incidents]


def tool_text(run: Any, call_id: str, index: int = -1) -> str:
    """The content of ``call_id``'s tool message in a request."""
    for m in run.ledger.requests[index].body["messages"]:
        if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
            return str(m.get("content"))
    raise AssertionError(f"no tool message for {call_id}")


def run_script(text: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """Run a standalone reproduction script from the repository's root with
    prunecheck made unimportable: the framework alone."""
    script = tmp / "reproduce.py"
    script.write_text(text)
    guard = (
        "import runpy, sys; sys.modules['prunecheck'] = None; "
        f"runpy.run_path({str(script)!r}, run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-c", guard],
        cwd=EXAMPLES.parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
