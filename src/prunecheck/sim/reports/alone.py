"""Run a standalone reproduction script with its framework alone.

A loop bundle's ``repro.py`` (``reports/loops/*.py``) must show its failure
where only the agent's framework is installed.  :func:`alone_command` runs
it in ``python -I`` (no user site, no ``PYTHONPATH``, no working directory on
the path) behind an import hook that answers ``ModuleNotFoundError`` for
prunecheck, for what its harness installs (Hypothesis, SimPy, networkx,
matplotlib) and for the other frameworks' packages, as an interpreter
without them would.  An agent built on prunecheck's guard (its file imports
``prunecheck.guard``) keeps the guard, and what the guard imports, as its
own dependency: only prunecheck's harness (``prunecheck.sim``) and the
pytest plugin are hidden then.

:func:`finding_of` reads a script's verdict from its output: the line it
ends with when it found a broken request, a ledger mismatch or a hang.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "FRAMEWORK_PACKAGES",
    "HARNESS_DEPENDENCIES",
    "alone_command",
    "finding_of",
    "hidden_packages",
    "run_alone",
]

#: Each framework's top-level packages (what its distribution installs).
FRAMEWORK_PACKAGES: dict[str, tuple[str, ...]] = {
    "pydantic-ai": ("pydantic_ai",),
    "openai-agents": ("agents",),
    "langgraph": ("langchain", "langchain_core", "langgraph"),
    "autogen": ("autogen_agentchat", "autogen_core", "autogen_ext"),
    "strands": ("strands",),
    "maf": ("agent_framework", "agent_framework_openai"),
    "adk": ("google.adk",),
    "llamaindex": ("llama_index",),
    "llamaindex-openai-agent": ("llama_index",),
}

_HARNESS_ONLY = ("prunecheck.sim", "prunecheck.pytest_plugin")

#: What prunecheck's harness installs and no framework needs: hidden too, so a
#: script that leans on one of them cannot pass for standalone.
HARNESS_DEPENDENCIES = (
    "hypothesis",
    "simpy",
    "networkx",
    "matplotlib",
)  # not tqdm: openai needs it

_PRELUDE = """\
import runpy, sys
HIDDEN = {hidden!r}
def _hidden(name):
    return any(name == h or name.startswith(h + ".") for h in HIDDEN)
loaded = sorted(n for n in sys.modules if _hidden(n))
if loaded:
    raise SystemExit(f"hidden packages were imported before the script: {{loaded}}")
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if _hidden(name):
            raise ModuleNotFoundError(f"No module named {{name!r}} (not installed here)", name=name)
        return None
sys.meta_path.insert(0, NotInstalled())
sys.argv = [{script!r}, *{args!r}]
runpy.run_path({script!r}, run_name="__main__")
"""


def hidden_packages(framework: str, *, keep_guard: bool) -> tuple[str, ...]:
    """What a script of ``framework`` must run without: prunecheck (its harness
    alone with ``keep_guard``) and every other framework of
    :data:`FRAMEWORK_PACKAGES` (all of them for a framework not listed there).

    >>> hidden_packages("pydantic-ai", keep_guard=False)[:2]
    ('prunecheck', 'agents')
    """
    others = [p for f, ps in FRAMEWORK_PACKAGES.items() if f != framework for p in ps]
    own = FRAMEWORK_PACKAGES.get(framework, ())
    mine = _HARNESS_ONLY if keep_guard else ("prunecheck",)
    return (*mine, *(p for p in others if p not in own), *HARNESS_DEPENDENCIES)


def alone_command(script: Path, hidden: Sequence[str], args: Sequence[str] = ()) -> list[str]:
    """The command line running ``script`` (given ``args``) with ``hidden``
    packages unimportable."""
    prelude = _PRELUDE.format(hidden=tuple(hidden), script=str(script), args=tuple(args))
    return [sys.executable, "-I", "-c", prelude]


def run_alone(
    script: Path,
    framework: str,
    cwd: Path,
    *,
    keep_guard: bool,
    timeout: float = 600.0,
    args: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (given ``args``) from ``cwd`` with ``framework`` alone (see
    the module's docs).

    A script that outlives ``timeout`` seconds is reported with exit status -1.
    """
    hidden = hidden_packages(framework, keep_guard=keep_guard)
    command = alone_command(script.resolve(), hidden, args)
    try:
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "", f"timed out after {timeout:g} s")


def finding_of(stdout: str) -> str:
    """The script's first finding, or ``""`` if it printed none: its line
    ``reproduced: KIND: detail`` (or, in scripts before 0.3, ``N finding(s);
    the first: ...``).

    >>> finding_of("request #2: ...\\nreproduced: hang: the turn did not return")
    'hang: the turn did not return'
    >>> finding_of("step 0: ...\\n1 finding(s); the first: HANG: the turn did not return")
    'HANG: the turn did not return'
    """
    for line in stdout.splitlines():
        if line.startswith("reproduced: "):
            return line.removeprefix("reproduced: ")
        head, sep, first = line.partition(" finding(s); the first: ")
        if sep and head.isdigit():
            return first
    return ""
