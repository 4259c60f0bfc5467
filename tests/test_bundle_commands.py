"""Every command a bundle prints runs, from where it is printed (issue 19).

A bundle's narrative lists its commands "from this folder"; ``search``
prints a "replay it:" command to run from where ``search`` ran.  Each is run
here as a user would (a shell, prunecheck and pytest on the PATH) and must
end with a verdict (0 or 1), never a refusal (2) or a traceback.  Covered:
a user's policy file, a framework spec (a library, so it replays without a
consent loop) and a runtime under test (its file is copied into the bundle).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from timeline_sketch import timeline_sketched

from prunecheck.model.trace import loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.evidence.bundle import replay_command, write_bundle

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "corpus" / "seed_parallel_batch.json"
POLICY = """from prunecheck.model.policies import builtin_policy

select = builtin_policy("lowest_salience").select
"""


def _printed(narrative: str) -> list[str]:
    """The commands of a narrative's Replay section, without their comments."""
    section = narrative.split("## Replay", 1)[1].split("\n## ", 1)[0]
    return [
        line.strip().split("   # ")[0].strip()
        for line in section.splitlines()
        if line.startswith("    ")
    ]


def _run(command: str, where: Path, *, plugins: bool = True) -> subprocess.CompletedProcess[str]:
    """``command`` in a shell from ``where``; without ``plugins``, a pytest it
    starts loads none of the installed plugins (PYTEST_DISABLE_PLUGIN_AUTOLOAD:
    a bundle's test needs none, and loading hypothesis, langsmith... takes
    most of its run)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    if not plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        ["bash", "-c", command], cwd=where, capture_output=True, text=True, env=env, timeout=300
    )


def _every_command_runs(folder: Path, gate_lines: bool, *, plugins: bool = True) -> None:
    commands = _printed((folder / "narrative.md").read_text(encoding="utf-8"))
    assert any(c.startswith("prunecheck replay") for c in commands)
    assert any("pytest test_reproduction.py" in c for c in commands)
    assert any("--gate commit" in c for c in commands) is gate_lines
    for command in commands:
        done = _run(command, folder, plugins=plugins)
        assert done.returncode in (0, 1), (command, done.stdout[-1500:], done.stderr[-1500:])
        if command.startswith("prunecheck"):
            assert "Traceback" not in done.stderr, (command, done.stderr[-1500:])
            assert "verdict:" in done.stdout, (command, done.stdout[-500:])
        else:
            assert " passed" in done.stdout or " failed" in done.stdout, done.stdout[-800:]
            assert "error" not in done.stdout.splitlines()[-1], done.stdout[-800:]


_RUNTIME = f"runtime:{ROOT / 'examples' / 'agent_loop.py'}:NaiveLoop"


@pytest.mark.parametrize(
    ("spec", "plugins"),
    [
        pytest.param("autogen:context=buffered,buffer_size=6", True, marks=pytest.mark.slow),
        (_RUNTIME, False),
        # the same with every installed pytest plugin loading, as in a full dev environment
        pytest.param(_RUNTIME, True, marks=pytest.mark.slow),
    ],
    ids=["framework", "runtime", "runtime-plugins"],
)
def test_every_command_a_bundle_prints_runs_from_its_folder(
    spec: str, plugins: bool, tmp_path: Path
) -> None:
    if spec.startswith("autogen"):
        pytest.importorskip("autogen_core")
    trace = replace(loads(SEED.read_text(encoding="utf-8")), policy=spec)
    with timeline_sketched():  # its commands are the point, not its timeline's pixels
        folder = write_bundle(trace, tmp_path / "bundle")
    narrative = (folder / "narrative.md").read_text(encoding="utf-8")
    runtime = spec.startswith("runtime:")
    if runtime:  # the runtime's file travels with the bundle, and the story says no more
        assert (folder / "agent_loop.py").is_file()
        assert "not applicable" not in narrative
        assert (
            loads((folder / "trace.json").read_text()).policy == "runtime:agent_loop.py:NaiveLoop"
        )
    _every_command_runs(folder, gate_lines=not runtime, plugins=plugins)
    if not runtime:  # a framework spec is a library: its trace replays without consent
        done = _run(f"prunecheck replay {shlex.quote(str(folder / 'trace.json'))}", tmp_path)
        assert done.returncode in (0, 1), done.stderr


def test_a_refusal_never_repeats_the_refused_command(tmp_path: Path) -> None:
    """A trace naming a module's code is refused; the hint's command runs."""
    trace = replace(loads(SEED.read_text(encoding="utf-8")), policy="mine_policy:select")
    (tmp_path / "mine_policy.py").write_text(POLICY, encoding="utf-8")
    path = tmp_path / "trace.json"
    from prunecheck.model.trace import dumps

    path.write_text(dumps(trace), encoding="utf-8")
    refused = _run("prunecheck replay trace.json", tmp_path)
    assert refused.returncode == 2
    hint = replay_command("mine_policy:select", "trace.json")
    assert hint != "prunecheck replay trace.json" and hint in refused.stderr
    done = _run(f"PYTHONPATH=. {hint}", tmp_path)
    assert done.returncode == 1 and "verdict:" in done.stdout, done.stderr


@pytest.mark.slow
def test_search_prints_a_replay_command_that_runs_from_where_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mine.py").write_text(POLICY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["search", "mine.py:select", "--out", "bundle"]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("replay it: "))
    done = _run(line.removeprefix("replay it: "), tmp_path)
    assert done.returncode == 1 and "verdict:" in done.stdout, done.stderr
    _every_command_runs(tmp_path / "bundle", gate_lines=True)
