"""Reproduction bundles: the five files, the request the provider rejects,
the narrative's header, the timeline, and a pytest file that fails on the
unsafe configuration and passes under the commit gate."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from prunecheck.model.events import Invoke
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.provider import validate
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.evidence.bundle import BUNDLE_FILES, write_bundle
from prunecheck.sim.evidence.timeline import Cell, lanes_of

CORPUS = Path(__file__).parent / "corpus"


def _corpus(name: str) -> Trace:
    return loads((CORPUS / name).read_text(encoding="utf-8"), name)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bundles of the two domain-document classes (as explore/search found
    them) and of a trace with a rejected invocation."""
    out = tmp_path_factory.mktemp("bundles")
    names = {
        "orphan": "orphan_in_flight_batch.json",
        "stream": "stream_evicted_mid_append.json",
        "retry": "retry_duplicates_read.json",
    }
    return {key: write_bundle(_corpus(name), out / key) for key, name in names.items()}


def test_bundle_has_the_five_files_and_the_trace(bundles: dict[str, Path]) -> None:
    folder = bundles["orphan"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(BUNDLE_FILES)
    text = (folder / "trace.json").read_text()
    assert text == dumps(_corpus("orphan_in_flight_batch.json"))


def test_request_is_the_rejected_invocation(bundles: dict[str, Path]) -> None:
    trace = _corpus("retry_duplicates_read.json")
    body = json.loads((bundles["retry"] / "request.json").read_text())
    errors = validate(body, trace.config.provider)
    policy = builtin_policy(trace.policy)
    assert policy is not None
    rejection = next(
        i
        for i in incidents_of(trace, ModelSystem(policy))
        if i.kind is IncidentKind.PROVIDER_REJECTION
    )
    assert isinstance(trace.events[rejection.step], Invoke)
    assert errors and errors[0].text == rejection.text
    narrative = (bundles["retry"] / "narrative.md").read_text()
    assert f"invocation at step {rejection.step + 1}, which the provider rejected" in narrative
    assert rejection.text in narrative


def test_request_without_invocation_is_the_next_body(bundles: dict[str, Path]) -> None:
    trace = _corpus("orphan_in_flight_batch.json")
    assert not any(isinstance(e, Invoke) for e in trace.events)
    body = json.loads((bundles["orphan"] / "request.json").read_text())
    errors = validate(body, trace.config.provider)
    assert errors and "unexpected `tool_use_id`" in errors[0].text
    narrative = (bundles["orphan"] / "narrative.md").read_text()
    assert "the body the next invocation would send" in narrative


def test_narrative_header_verdict_and_replay(bundles: dict[str, Path]) -> None:
    text = (bundles["stream"] / "narrative.md").read_text()
    head, _, steps = text.partition("## Steps")
    assert head.startswith("# Reproduction: ")
    assert "**Verdict:**" in head and "truncated payload" in head
    assert "prunecheck replay trace.json" in head
    assert "PRUNECHECK_GATE=commit pytest test_reproduction.py" in head
    assert "Under the commit gate the test passes (checked" in head
    # The steps: the prune, the unit it split, the incidents.
    assert "evicted" in steps and "splits unit m2" in steps
    assert "**VIOLATION: truncated payload**" in steps


def test_timeline_marks_open_pending_and_evicted() -> None:
    trace = _corpus("stream_evicted_mid_append.json")
    policy = builtin_policy(trace.policy)
    assert policy is not None
    lanes = lanes_of(trace, ModelSystem(policy))
    assert len(lanes.ticks) == len(trace.events)
    assert lanes.cells["m2"][1] is Cell.PENDING  # the batch, calls pending
    assert lanes.cells["m3"][2] is Cell.OPEN  # the first result streaming
    assert lanes.gone["m3"] == (3, "evicted")  # evicted mid-append
    assert lanes.gone["m2"] == (3, "evicted")
    assert Cell.ORPHAN in lanes.cells["m5"].values()  # the re-appended rest
    assert set(lanes.violations) == {3, 4}


def test_timeline_png_is_deterministic(tmp_path: Path, bundles: dict[str, Path]) -> None:
    again = write_bundle(_corpus("stream_evicted_mid_append.json"), tmp_path / "again")
    first = (bundles["stream"] / "timeline.png").read_bytes()
    assert first.startswith(b"\x89PNG\r\n\x1a\n") and len(first) > 5000
    assert (again / "timeline.png").read_bytes() == first


def _pytest(
    files: list[Path], gate: str | None, *, plugins: bool
) -> subprocess.CompletedProcess[str]:
    """pytest on ``files`` in a new process; without ``plugins``, none of
    the installed pytest plugins loads (PYTEST_DISABLE_PLUGIN_AUTOLOAD): the
    reproduction needs none, and loading them (hypothesis, langsmith...)
    takes most of the run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PRUNECHECK_GATE", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    }
    if gate is not None:
        env["PRUNECHECK_GATE"] = gate
    if not plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            "--rootdir",
            str(files[0].parent),
            *map(str, files),
        ],
        cwd=files[0].parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.mark.parametrize(
    "plugins",
    [False, pytest.param(True, marks=pytest.mark.slow)],  # every installed plugin loaded
    ids=["bare", "plugins"],
)
def test_bundle_pytest_fails_unsafe_and_passes_under_commit(
    bundles: dict[str, Path], plugins: bool
) -> None:
    files = [bundles[key] / "test_reproduction.py" for key in ("orphan", "stream")]
    unsafe = _pytest(files, None, plugins=plugins)
    assert unsafe.returncode == 1, unsafe.stdout + unsafe.stderr
    assert "2 failed" in unsafe.stdout and "violation(s) under gate none" in unsafe.stdout
    safe = _pytest(files, "commit", plugins=plugins)
    assert safe.returncode == 0, safe.stdout + safe.stderr
    assert "2 passed" in safe.stdout


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bundle_pytest_gate_constant(
    bundles: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRUNECHECK_GATE", raising=False)
    path = bundles["orphan"] / "test_reproduction.py"
    source = path.read_text()
    assert "\nGATE = None\n" in source
    with pytest.raises(AssertionError, match="orphaned result"):
        _load(path, "repro_unsafe").test_reproduction()
    safe = tmp_path / "test_reproduction.py"
    safe.write_text(source.replace("\nGATE = None\n", '\nGATE = "commit"\n'))
    _load(safe, "repro_commit").test_reproduction()


def test_a_bundle_of_a_trace_that_crosses_a_new_session_is_written_whole(tmp_path: Path) -> None:
    """The timeline draws a new session (issue 19: KeyError: 'session' once
    stopped check --out with a half-written bundle)."""
    data = json.loads((CORPUS / "seed_parallel_batch.json").read_text(encoding="utf-8"))
    data["events"] = [
        *data["events"][:2],
        {"kind": "session"},
        {"kind": "system", "tokens": 500},
        *data["events"][1:],
    ]
    data.pop("times", None)
    folder = write_bundle(loads(json.dumps(data)), tmp_path / "b")
    for name in BUNDLE_FILES:
        assert (folder / name).is_file(), name
    policy = builtin_policy("recency")
    assert policy is not None
    assert "new session" in " ".join(lanes_of(loads(json.dumps(data)), ModelSystem(policy)).ticks)
