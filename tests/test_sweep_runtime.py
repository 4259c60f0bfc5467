"""``prunecheck sweep`` of a runtime under test (``runtime:`` specs): the
runtime gates, places its budget checks and retries by itself, so it runs
once per level and seed, its knobs shown as "its own"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.policy_spec import parse_spec


@pytest.mark.parametrize(
    ("spec", "owns"),
    [
        ("runtime:examples/agent_loop.py:NaiveLoop", True),
        ("runtime:guard:lowest_salience", True),
        ("runtime:model:lowest_salience", False),  # the model runtime takes every knob
        ("lowest_salience", False),
    ],
)
def test_which_specs_decide_their_own_placement(spec: str, owns: bool) -> None:
    assert parse_spec(spec).kind.owns_placement is owns


def test_sweep_drives_a_runtime_once_per_level_and_seed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "runs.jsonl"
    status = main(
        [
            "sweep",
            "--out",
            str(out),
            "runtime:guard:lowest_salience",
            "lowest_salience",
            "--gate",
            "none,commit",
            "--levels",
            "1",
            "--seeds",
            "1",
            "--horizon",
            "120",
            "--jobs",
            "1",
            "--quiet",
        ]
    )
    stdout, err = capsys.readouterr()
    assert status == 0, err
    # the policy under two gates, the runtime once: not one run per gate
    assert "3 runs (3 run now, 0 reused)" in err
    body = stdout.splitlines()[2:5]
    (runtime_line,) = [line for line in body if line.startswith("runtime:")]
    cells = [c.strip() for c in runtime_line.split("  ") if c.strip()]
    assert cells[1:4] == ["its own"] * 3, runtime_line
    gates = sorted(line.split()[1] for line in body if line.startswith("lowest_salience "))
    assert gates == ["commit", "none"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["policy"] for r in rows) == [
        "lowest_salience",
        "lowest_salience",
        "runtime:guard:lowest_salience",
    ]
    guarded = next(r for r in rows if r["policy"].startswith("runtime:"))
    assert guarded["invocations"] > 0 and guarded["error"] is None


def test_editing_a_runtime_file_invalidates_its_stored_runs(tmp_path: Path) -> None:
    # A sweep keys each stored run by the source it ran; a runtime's file was
    # left out of the key, so a rerun after an edit reused the old verdicts.
    from prunecheck.model.config import RuntimeConfig
    from prunecheck.sim.drivers.workload import load_at
    from prunecheck.sim.sweeps.runs import RunSpec, policy_fingerprint

    loop = tmp_path / "loop.py"
    loop.write_text("class Loop:\n    pass\n", encoding="utf-8")
    specs = [f"runtime:{loop}:Loop", f"runtime:guard:{loop}:select", f"{loop}:select"]
    before = [RunSpec(s, RuntimeConfig(), 1.0, load_at(1.0), 1).key for s in specs]
    loop.write_text("class Loop:\n    budget = 1\n", encoding="utf-8")
    policy_fingerprint.cache_clear()  # a new process reads the file anew
    after = [RunSpec(s, RuntimeConfig(), 1.0, load_at(1.0), 1).key for s in specs]
    assert all(a != b for a, b in zip(before, after, strict=True))
    assert policy_fingerprint("runtime:guard:recency") == policy_fingerprint("recency") == ""
