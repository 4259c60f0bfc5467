"""Black-box mode end to end: ``check loop:process:…`` (its JSON verdict), the
replay file and its short script, and the ``openai`` example agent.

The fast test replays a schedule in process (the path every reproduction
script takes); the command line's check, the script run from another folder
and the real ``openai`` client (1 s of CPU to import, per process) are slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.blackbox.replay import replay
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.steps import (
    Complete,
    Crash,
    ReplyStep,
    Resume,
    Step,
    User,
    schedule_to_json,
)
from prunecheck.sim.subjects.loops.target import load_target

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc")

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "tests" / "blackbox_agents"
ARGV = f"loop:process:{AGENTS / 'argv.toml'}"
EXAMPLE = ROOT / "examples" / "blackbox" / "py_openai"
_BATCH = ReplyStep("", (ToolCall("call_1", "read_note", '{"name": "a"}'),
                        ToolCall("call_2", "write_note", '{"name": "b"}')))  # fmt: skip
_CRASH: list[Step] = [User("hi"), _BATCH, Complete("call_1", "a"), Crash(), Resume()]


def _replay_file(folder: Path, steps: list[Step], expect: list[str]) -> Path:
    path = folder / "schedule.json"
    path.write_text(schedule_to_json(steps, extra={"expect": expect}))
    return path


def test_the_replay_file_reproduces_the_crash_and_a_harmless_one_does_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crash = _replay_file(tmp_path, _CRASH, ["unanswered_call"])
    assert replay(AGENTS / "argv.toml", crash) == 1
    out = capsys.readouterr().out
    assert (
        out.splitlines()[-1]
        == "reproduced: unanswered_call: call call_2 is sent without its result"
    )
    assert "did not have response messages: call_2" in out  # the provider's own words
    calm = _replay_file(tmp_path, [User("hi"), ReplyStep("done")], [])
    assert replay(AGENTS / "argv.toml", calm) == 0
    assert replay(tmp_path / "missing.toml", calm) == 2
    assert "could not run" in capsys.readouterr().out


@pytest.mark.slow
def test_the_bundle_script_runs_from_any_folder_within_30_lines(tmp_path: Path) -> None:
    from prunecheck.sim.evidence.loop_bundle import bundle_texts

    class Found:
        steps = _CRASH

    target = load_target(ARGV)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name, text in bundle_texts(target, Found(), seed=1, scenario="crash_resume",
                                   folder=bundle).items():  # fmt: skip
        (bundle / name).write_text(text)
    script = (bundle / "repro.py").read_text()
    assert len(script.splitlines()) <= 30
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, str(bundle / "repro.py")], cwd=elsewhere,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("reproduced: provider_rejection: ")


@pytest.mark.slow
def test_check_of_a_process_agent_gives_the_json_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    repl = f"loop:process:{AGENTS / 'repl.toml'}"  # one process per life: the cheaper to run
    status = main(["check", repl, "--scenario", "trim,interrupt", "--max-examples", "8",
                   "--seed", "1", "--json", "--quiet", "--no-failures"])  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert status == 1 and doc["verdict"] == "unsafe"
    cells = {p["scenario_class"]: p for p in doc["placements"]}
    assert cells["interrupt"]["verdict"] == "not_applicable"  # no approval step in a process
    assert "orphaned_result" in cells["trim"]["violations"]  # its KEEP=4 trim cuts batches
    assert doc["details"]["framework"] == "process"


@pytest.mark.slow
@pytest.mark.parametrize("manifest", ["agent.toml", "agent_safe.toml"])
def test_the_openai_example_crashes_for_real_and_resumes_from_its_file(manifest: str) -> None:
    pytest.importorskip("openai")
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    target = load_target(f"loop:process:{EXAMPLE / manifest}")
    with LoopRun(target.adapter, target.target) as run:
        for step in _CRASH[:3]:
            run.apply(step)
        proc = run.loop.proc  # type: ignore[union-attr]
        run.apply(Crash())
        assert proc.returncode == -9
        kept = json.loads((run.store / "history.json").read_text())
        found = run.apply(Resume())
    assert kept[-1] == {"role": "tool", "tool_call_id": "call_1", "content": "a"}
    assert {"unanswered_call", "provider_rejection"} <= {i.kind.value for i in found}


@pytest.mark.slow
def test_tools_through_prunecheck_s_mcp_server_over_stdio_are_the_harness_s() -> None:
    pytest.importorskip("mcp")
    from prunecheck.sim.subjects.loops.ledger import BodyEnd
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    target = load_target(f"loop:process:{AGENTS / 'mcp.toml'}")
    with LoopRun(target.adapter, target.target) as run:
        for step in _CRASH[:4]:
            run.apply(step)
        found = run.apply(Resume())
        ended = [(b.call, b.end) for b in run.ledger.bodies]
    # the MCP server ran call_1's body as the harness said, matched by name and arguments;
    # the crash killed the agent and the server it started (its process group)
    assert ended == [("call_1", BodyEnd.OK), ("call_2", BodyEnd.DROPPED)]
    assert "unanswered_call" in {i.kind.value for i in found}


def test_the_examples_manifests_load() -> None:
    for manifest in ("agent.toml", "agent_safe.toml"):
        target = load_target(f"loop:process:{os.path.relpath(EXAMPLE / manifest)}")
        assert [t.name for t in target.adapter.tools(target.target)] == ["read_note", "write_note"]
