"""Heavy libraries load only where they are used: the model loads none, the
command line imports only the chosen command's module, and importing a
module that draws touches no matplotlib.  Each check runs in a fresh
interpreter and reads its ``sys.modules``; none measures time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import build_parser, main
from prunecheck.sim.cli.commands import COMMANDS, SUMMARIES

BAD = Path(__file__).resolve().parent / "bad_policies"

#: What the model and a command's --help must not load.
HEAVY = ("simpy", "hypothesis", "networkx", "matplotlib", "tqdm", "dask", "distributed", "numpy")


def _loaded_after(code: str) -> set[str]:
    """Top-level packages and every ``prunecheck.sim.cli.*`` module loaded
    by ``code`` in a fresh interpreter (its stdout is discarded)."""
    probe = (
        "import contextlib, io, json, sys\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "names = {m.split('.')[0] for m in sys.modules}\n"
        "names |= {m for m in sys.modules if m.startswith('prunecheck.sim.cli.')}\n"
        "print(json.dumps(sorted(names)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_model_loads_no_heavy_library() -> None:
    loaded = _loaded_after("import prunecheck.model")
    assert "prunecheck" in loaded
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)


def test_every_module_of_the_model_loads_no_heavy_library() -> None:
    # The networkx oracle (model.units) imports networkx only when it runs.
    loaded = _loaded_after(
        "import importlib, pkgutil, prunecheck.model as m\n"
        "names = [i.name for i in pkgutil.walk_packages(m.__path__, 'prunecheck.model.')]\n"
        "assert 'prunecheck.model.units' in names and 'prunecheck.model.runtime' in names\n"
        "for name in names: importlib.import_module(name)\n"
        "from prunecheck.model import *"
    )
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)


def test_the_units_oracle_still_uses_networkx() -> None:
    loaded = _loaded_after(
        "from prunecheck.model.context import Message, Role\n"
        "from prunecheck.model.units import units_spec\n"
        "ms = [Message('m1', Role.USER, 5, 1, 0.0)]\n"
        "assert units_spec(ms, {}) == [frozenset({'m1'})]"
    )
    assert "networkx" in loaded


def test_a_policy_worker_loads_its_policy_without_the_parents_machinery() -> None:
    """A caged policy's worker imports the loader to load its policy: the
    cage, the runtimes a spec is driven in, the guard and the framework
    adapters are the parent's, and importing them cost a worker start
    about twice the CPU time (a check starts one per policy and placement)."""
    probe = (
        "import sys\n"
        "from prunecheck.sim.subjects.loader import load_local\n"
        f"load_local({str(BAD / 'cheats.py')!r} + ':raises')\n"
        "print(' '.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = set(done.stdout.split())
    assert "prunecheck.sim.subjects.user_code" in loaded  # it did load the policy
    parents = ["sim.subjects.runtimes", "guard", "sim.subjects.cage", "sim.subjects.frameworks"]
    parents.append("sim.subjects.lists")
    assert not {m for m in loaded if any((m + ".").startswith(f"prunecheck.{p}.") for p in parents)}
    top = {m.split(".")[0] for m in loaded}
    assert top.isdisjoint(HEAVY), top & set(HEAVY)


def test_validate_help_loads_only_its_command_and_no_heavy_library() -> None:
    loaded = _loaded_after(
        "from prunecheck.sim.cli import main\nassert main(['validate', '--help']) == 0"
    )
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)
    commands = {f"prunecheck.sim.cli.{name}" for name in COMMANDS}
    assert loaded & commands == {"prunecheck.sim.cli.validate"}


def test_top_level_help_imports_no_command_module() -> None:
    loaded = _loaded_after("from prunecheck.sim.cli import main\nassert main(['--help']) == 0")
    assert loaded.isdisjoint({f"prunecheck.sim.cli.{name}" for name in COMMANDS})
    assert loaded.isdisjoint(HEAVY), loaded & set(HEAVY)


@pytest.mark.parametrize("command", ["check", "regress", "baseline", "policies"])
def test_other_command_helps_load_only_their_command(command: str) -> None:
    loaded = _loaded_after(
        f"from prunecheck.sim.cli import main\nassert main([{command!r}, '--help']) == 0"
    )
    assert loaded & {f"prunecheck.sim.cli.{name}" for name in COMMANDS} == {
        f"prunecheck.sim.cli.{command}"
    }


@pytest.mark.parametrize(
    "module",
    [
        "prunecheck.sim.reports.writer",
        "prunecheck.sim.reports.plotting",
        "prunecheck.sim.evidence.timeline",
        "prunecheck.sim.evidence.bundle",
    ],
)
def test_modules_that_draw_import_no_matplotlib_until_they_draw(module: str) -> None:
    loaded = _loaded_after(f"import {module}")
    assert "matplotlib" not in loaded


def test_top_level_help_lists_every_command_with_its_one_line_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    lazy = capsys.readouterr().out
    for name, summary in SUMMARIES.items():
        line = next(line for line in lazy.splitlines() if line.strip().startswith(name + " "))
        assert line.split(name, 1)[1].strip() == summary.replace("``", "")
    # The same text as a parser that imported every command module.
    assert lazy == build_parser().format_help()
    assert build_parser(()).format_help() == lazy


def test_each_command_registers_the_help_of_the_table() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    helps = {choice.dest: choice.help for choice in sub._choices_actions}  # type: ignore[attr-defined]
    assert helps == SUMMARIES


def test_a_bad_command_is_refused_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nope"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and "'validate'" in err


POLICY_COMMANDS = {
    "check": ["check", "recency"],
    "search": ["search", "--policy", "recency"],
    "explore": ["explore", "--policy", "recency", "--depth", "2"],
    "replay": ["replay", "trace.json"],
    "sweep": ["sweep", "--out", "x.jsonl"],
    "report": ["report"],
    "baseline": ["baseline", "--out", "b.json"],
    "regress": ["regress", "--baseline", "b.json"],
}


@pytest.mark.parametrize("command", sorted(POLICY_COMMANDS))
def test_policy_timeout_is_the_one_option_everywhere(command: str) -> None:
    from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT

    parser = build_parser([command])
    argv = POLICY_COMMANDS[command]
    assert parser.parse_args(argv).policy_timeout == DEFAULT_TIMEOUT
    assert parser.parse_args([*argv, "--policy-timeout", "2.5"]).policy_timeout == 2.5


def test_policy_timeout_is_defined_in_one_module() -> None:
    sim = Path(__file__).resolve().parent.parent / "src" / "prunecheck" / "sim"
    defining = sorted(
        str(p.relative_to(sim))
        for p in sim.rglob("*.py")
        if '"--policy-timeout"' in p.read_text(encoding="utf-8")
    )
    assert defining == ["cli/policy_options.py"]
