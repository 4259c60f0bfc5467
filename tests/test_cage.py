"""The policy cage, locks and checksums, untrusted traces, bundles that replay
where they live (issue 10), and the two policy-loading items of issue 8."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Message, Role
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import SystemPrompt, UserMessage
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.sim.cli.app import main, plain
from prunecheck.sim.subjects.cage import CagedPolicy
from prunecheck.sim.subjects.loader import load_policy
from prunecheck.sim.subjects.time_limit import time_limited
from prunecheck.sim.support.ledger import is_intact, seal

BAD = Path(__file__).resolve().parent / "bad_policies"
CORPUS = Path(__file__).resolve().parent / "corpus"
PY = [sys.executable, "-m", "prunecheck"]

#: A child pytest: no cache written into the bundle, and no langsmith plugin
#: (the telemetry extra's; ~1.5 s of import that this test does not need).
CHILD_PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CHILD_PYTEST += ["-p", "no:langsmith_plugin"]


def _run(
    *argv: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PY, *argv], capture_output=True, text=True, cwd=cwd, timeout=timeout)


# ------------------------------------------------------------------- cage
def test_user_policies_are_caged_and_built_ins_are_not() -> None:
    caged = load_policy(f"{BAD}/cheats.py:raises")
    assert isinstance(caged, CagedPolicy) and caged.name == "raises"
    assert not isinstance(load_policy("recency"), CagedPolicy)
    assert time_limited(load_policy("recency"), 5) == load_policy("recency")  # the fast path
    limited = time_limited(caged, 3)
    assert isinstance(limited, CagedPolicy) and limited.timeout == 3


@pytest.mark.parametrize("name", ["setattr_frozen", "evict_then_lie", "mutate_view"])
def test_a_policy_that_rewrites_its_view_is_that_policys_error(name: str) -> None:
    """The policy zeroes tokens on frozen messages (object.__setattr__) or
    rewrites the view: the worker sees it (issue 19) and says so, naming the
    policy and the step; the runtime's counts were never touched."""
    policy = load_policy(f"{BAD}/cheats.py:{name}")
    state = initial_state(RuntimeConfig(budget=300, hard_ceiling=10_000), policy)
    apply(state, SystemPrompt(100))
    with pytest.raises(PolicyError, match="rewrote") as caught:
        for _ in range(4):
            apply(state, UserMessage(90))
    assert caught.value.step is not None and name in caught.value.subject
    ctx = state.context
    assert ctx.used == sum(m.tokens for m in ctx)  # what is there is counted at its size
    assert all(m.tokens > 0 for m in ctx)
    assert state.config.budget == 300


def test_policy_output_goes_to_stderr_never_stdout() -> None:
    done = _run(
        "replay",
        str(CORPUS / "seed_parallel_batch.json"),
        "--policy",
        f"{BAD}/cheats.py:chatty",
        "--quiet",
    )
    assert "POLICY-STDOUT" not in done.stdout and "POLICY-STDOUT" in done.stderr
    assert done.stdout.startswith("verdict:")


def test_a_policy_that_exhausts_memory_is_a_policy_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRUNECHECK_POLICY_MEMORY_MB", "256")  # its first 256 MB fail at once
    from prunecheck.sim.subjects.cage import close_all

    close_all()  # workers read the limit when they start
    policy = load_policy(f"{BAD}/hangs.py:memory")  # 256 MB more at every turn of a loop
    state = initial_state(RuntimeConfig(budget=150, hard_ceiling=10_000), policy)
    apply(state, SystemPrompt(100))
    with pytest.raises(PolicyError) as info:
        apply(state, UserMessage(100))
    assert "raised MemoryError" in info.value.rule  # the worker's limit, not a hang
    assert info.value.subject == "policy 'memory' at step 2"
    close_all()


#: search, explore and replay report a hang in make test too (tests/test_bad_inputs.py:
#: their *-busy, *-sleeps and *-endless cases); the hang count on them is make test-all's.
_SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["search", "--policy", "{spec}", "--max-examples", "20"], marks=_SLOW),
        pytest.param(["explore", "--policy", "{spec}", "--depth", "4"], marks=_SLOW),
        [
            "check",
            "{spec}",
            "--levels",
            "1",
            "--seeds",
            "1",
            "--max-examples",
            "20",
            "--horizon",
            "60",
        ],
        pytest.param(
            ["replay", str(CORPUS / "seed_parallel_batch.json"), "--policy", "{spec}"],
            marks=_SLOW,
        ),
        [
            "sweep",
            "--out",
            "{tmp}/r.jsonl",
            "--policy",
            "{spec}",
            "--gate",
            "none",
            "--levels",
            "1",
            "--seeds",
            "2",
            "--horizon",
            "60",
            "--jobs",
            "1",
        ],
    ],
    ids=lambda a: a[0],
)
def test_a_hanging_policy_costs_its_timeout_once(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first hang stops the policy's worker, so every later call fails at
    once: told by its effect (one call reached the policy and hung), not by
    the wall clock, which a loaded machine stretches.  The time bound only
    says the command ended: ten times what it needs on an idle core."""
    from prunecheck.sim.subjects.cage import close_all

    mark = tmp_path / "hangs.txt"
    monkeypatch.setenv("HANG_MARK", str(mark))  # the worker inherits it when it starts
    monkeypatch.setenv("PRUNECHECK_JOBS", "1")  # check's placements one by one, in one worker
    spec = f"{BAD}/hangs.py:busy_counted"
    close_all()  # a fresh worker: the last test's stopped one would fail at once
    started = time.monotonic()
    # the policy hangs at every call: the first one costs the whole time limit
    status = main([a.format(spec=spec, tmp=tmp_path) for a in argv] + ["--policy-timeout", "0.5"])
    took = time.monotonic() - started
    err = capsys.readouterr().err
    close_all()
    assert status == 2 and "did not return within 0.5 s" in err
    assert mark.read_text(encoding="utf-8") == "hung\n"  # one hang; later calls failed at once
    assert took < 30, took  # it ended


# ------------------------------------------------------------ issue 8 items
def test_a_policy_file_imports_the_module_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # in process (the policy's worker is a process of its own either way);
    # test_policy_output_goes_to_stderr_never_stdout runs replay as a user does
    monkeypatch.chdir(tmp_path)  # not the policy's folder
    trace = str(CORPUS / "seed_parallel_batch.json")
    status = main(["replay", trace, "--policy", f"{BAD}/with_sibling.py:select", "--quiet"])
    out, err = capsys.readouterr()
    assert "ModuleNotFoundError" not in err
    assert status in (0, 1) and out.startswith("verdict:")


def test_a_list_function_without_its_format_gets_a_hint_naming_the_suffix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["search", f"{BAD}/list_fn.py:trim", "--max-examples", "5"]) == 2
    err = capsys.readouterr().err
    assert "like a list function trim(messages)" in err and "file.py:trim@openai" in err
    assert "fix the policy" not in err


# ------------------------------------------------------ untrusted traces
def test_replay_never_imports_a_traces_policy_without_consent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from prunecheck.sim.subjects.cage import close_all

    trace = json.loads((CORPUS / "seed_parallel_batch.json").read_text())
    trace["policy"] = f"{BAD}/evil.py:select"
    path = tmp_path / "evil_trace.json"
    path.write_text(json.dumps(trace))
    mark = tmp_path / "evil-ran.txt"
    monkeypatch.setenv("EVIL_MARK", str(mark))
    close_all()  # the policy's worker starts anew, with this EVIL_MARK
    assert main(["replay", str(path)]) == 2 and not mark.exists()
    err = capsys.readouterr().err
    assert "evil.py" in err and "--trust-policy" in err
    assert "sha256" in err  # what it would run
    consented = main(["replay", str(path), "--trust-policy", "--quiet"])
    close_all()
    assert consented in (0, 1) and mark.exists()  # the check above can fail


# ------------------------------------------------------- locks, checksums
def test_two_concurrent_sweeps_into_one_file_lose_nothing(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    grid = ["--gate", "none,commit", "--levels", "0.5,1", "--horizon", "300", "--jobs", "1"]
    first = subprocess.Popen(
        [*PY, "sweep", "--out", str(out), "--policy", "recency", "--seeds", "3", *grid],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    second = subprocess.Popen(
        [*PY, "sweep", "--out", str(out), "--policy", "lowest_salience", "--seeds", "2", *grid],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    results = [(*p.communicate(timeout=300), p.returncode) for p in (first, second)]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    stored = {r["policy"] for r in rows}
    assert all(is_intact(r) for r in rows)
    for (_, err, status), policy, runs in zip(
        results, ("recency", "lowest_salience"), (12, 8), strict=True
    ):
        if status == 2:  # the second refused, naming the lock; the first's runs are all there
            assert "being written by another prunecheck" in err and "Traceback" not in err
        else:
            assert status == 0 and policy in stored
            assert sum(1 for r in rows if r["policy"] == policy) == runs
    assert any(status == 0 for _, _, status in results)


def test_an_edited_row_is_detected_reported_and_recomputed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    argv = [
        "sweep",
        "--out",
        str(out),
        "--policy",
        "recency",
        "--gate",
        "none",
        "--levels",
        "1",
        "--seeds",
        "2",
        "--horizon",
        "60",
        "--jobs",
        "1",
    ]
    assert main(argv) == 0
    original = out.read_text()
    rows = [json.loads(line) for line in original.splitlines()]
    rows[0]["invocations"] += 1000  # still a valid row, but not the one computed
    out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    capsys.readouterr()
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "checksum does not match its content" in err and "(1 run now, 1 reused)" in err
    assert out.read_text() == original  # recomputed: byte-identical to the first sweep


def test_seal_and_is_intact() -> None:
    row = seal({"key": "k", "n": 1})
    assert is_intact(row) and not is_intact({**row, "n": 2}) and not is_intact({"n": 1})


def test_sweep_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            *PY,
            "sweep",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--policy",
            "recency",
            "--levels",
            "1",
            "--seeds",
            "20",
            "--horizon",
            "3000",
            "--jobs",
            "2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def children() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == proc.pid:
                    found.append(int(entry.name))
        return found

    deadline = time.monotonic() + 120  # the sweep's start-up, stretched by a loaded machine
    while len(children()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    workers = children()
    assert len(workers) >= 2
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60  # they die at once; a loaded machine may take a while
    while time.monotonic() < deadline and any(
        Path(f"/proc/{p}").exists()
        and "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        for p in workers
    ):
        time.sleep(0.2)
    alive = [
        p
        for p in workers
        if Path(f"/proc/{p}").exists()
        and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    ]
    assert alive == []


# ------------------------------------------------------------- bundles
@pytest.mark.integration  # five prunecheck processes, one after another
def test_a_bundle_replays_where_it_lives_and_is_never_overwritten(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "my_policy.py").write_text(
        (BAD / "sibling_helper.py").read_text().replace("def oldest_first", "def select")
    )
    found = _run(
        "search",
        "--policy",
        "my_policy.py:select",
        "--max-examples",
        "50",
        "--out",
        "repro",
        cwd=work,
    )
    assert found.returncode == 1, found.stderr
    bundle = work / "repro"
    assert (bundle / "my_policy.py").is_file()
    narrative = (bundle / "narrative.md").read_text()
    commands = [
        line.strip().split("  #")[0].strip()
        for line in narrative.splitlines()
        if line.strip().startswith("prunecheck replay")
    ]
    assert commands and all(" my_policy.py:select" in c and "--policy" not in c for c in commands)
    (work / "my_policy.py").write_text("raise SystemExit('the original was edited')\n")
    for command in commands:  # the trace fails as found, and passes under the commit gate
        done = _run(*command.split()[1:], cwd=bundle)
        assert done.returncode == (0 if "--gate commit" in command else 1), done.stderr
        assert "Traceback" not in done.stderr
    # The commands printed outside the bundle work from where they are printed: search's
    # "replay it:" line, and the hint of a replay that refuses to run the trace's code
    # (both named the policy relative to the bundle, so they failed from `work`).
    printed = next(line for line in found.stdout.splitlines() if line.startswith("replay it: "))
    done = _run(*printed.removeprefix("replay it: ").split()[1:], cwd=work)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    refused = _run("replay", "repro/trace.json", cwd=work)
    assert refused.returncode == 2
    hint = refused.stderr.split("to run it: ")[1].split(" (or add")[0]
    done = _run(*hint.split()[1:], cwd=work)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    test = subprocess.run(
        [*CHILD_PYTEST, "test_reproduction.py"],
        capture_output=True,
        text=True,
        cwd=bundle,
        timeout=120,
    )
    assert "1 failed" in test.stdout and "violation(s) under gate none" in test.stdout
    again = _run(
        "search", "--policy", "unit_safe", "--max-examples", "5", "--out", "repro", cwd=work
    )
    assert again.returncode == 2 and "--force" in again.stderr
    assert (bundle / "my_policy.py").is_file()


# --------------------------------------------------------------- smaller
def test_version_and_plain_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    import prunecheck

    assert capsys.readouterr().out.strip() == f"prunecheck {prunecheck.__version__}"
    assert prunecheck.__version__[0].isdigit()
    for command in (
        "report",
        "sweep",
        "search",
        "explore",
        "replay",
        "validate",
        "check",
        "regress",
        "baseline",
        "policies",
    ):
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":mod:" not in text and ":func:" not in text, command
    assert plain("``x`` and :mod:`.y`") == "x and y"


def test_steps_count_from_one_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(CORPUS / "seed_parallel_batch.json")]) == 1
    out = capsys.readouterr().out
    assert "[  1]" in out and "[  0]" not in out
    policy = load_policy(f"{BAD}/cheats.py:raises")
    state = initial_state(RuntimeConfig(budget=150, hard_ceiling=10_000), policy)
    apply(state, SystemPrompt(100))
    with pytest.raises(PolicyError) as info:
        apply(state, UserMessage(100))
    assert info.value.subject == "policy 'raises' at step 2"  # the second event


def test_a_message_copy_is_equal_but_not_the_runtimes() -> None:
    import pickle

    m = Message("m1", Role.USER, 5, 1, 0.0)
    copy = pickle.loads(pickle.dumps(m))
    object.__setattr__(copy, "tokens", 0)
    assert m.tokens == 5


def test_a_caged_hang_is_a_policy_timeout_and_later_calls_fail_at_once() -> None:
    from prunecheck.model.context import Context
    from prunecheck.model.errors import PolicyTimeout
    from prunecheck.model.policies import ContextView
    from prunecheck.sim.subjects.cage import close_all

    close_all()
    caged = time_limited(load_policy(f"{BAD}/hangs.py:sleeps"), 0.1)
    assert isinstance(caged, CagedPolicy)
    ctx = Context()
    ctx.append(Message("m1", Role.USER, 5, 1, 0.0, unit_id="m1"))
    view = ContextView(ctx, pending_calls=frozenset(), budget=1, now=0.0, turn=1)
    errors = []
    for _ in range(2):
        with pytest.raises(PolicyTimeout) as info:
            caged.select(view, 1)
        errors.append(info.value)
    close_all()
    assert "did not return within 0.1 s" in errors[0].rule and errors[0].step is None
    assert errors[1] is not errors[0] and errors[1].paragraph() == errors[0].paragraph()


def test_a_question_asked_again_is_answered_without_a_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a search replays the same prefixes many times: the worker's memo of
    # its answers saves the round trip (issue 20: check's speed)
    from prunecheck.model.context import Context
    from prunecheck.model.policies import ContextView
    from prunecheck.sim.subjects import cage
    from prunecheck.sim.subjects.cage import Worker, close_all

    close_all()
    monkeypatch.setattr(cage, "VERIFY_HITS", 0)  # tests/test_cage_memo.py asks again
    sent: list[int] = []
    send = Worker.send

    def counting(self: Worker, data: bytes) -> None:
        sent.append(1)
        send(self, data)

    monkeypatch.setattr(Worker, "send", counting)
    policy = load_policy(f"{Path(__file__).resolve().parent}/policies/regress_correct.py:select")
    raises = load_policy(f"{BAD}/cheats.py:raises")
    assert isinstance(policy, CagedPolicy) and isinstance(raises, CagedPolicy)

    def view(tokens: int) -> ContextView:
        ctx = Context()
        ctx.append(Message("m1", Role.SYSTEM, 5, 0, 0.0, unit_id="m1"))
        ctx.append(Message("m2", Role.USER, tokens, 1, 1.0, unit_id="m2"))
        return ContextView(ctx, pending_calls=frozenset(), budget=10, now=2.0, turn=1)

    first = list(policy.select(view(90), 85))
    before = len(sent)
    assert list(policy.select(view(90), 85)) == first and len(sent) == before  # equal: memo
    policy.select(view(91), 86)  # another question: asked
    assert len(sent) == before + 1
    for _ in range(2):  # a raise is never remembered: asked each time
        with pytest.raises(PolicyError):
            raises.select(view(90), 85)
    assert len(sent) == before + 3
    close_all()


@pytest.mark.slow
def test_the_memo_changes_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    # the same check with and without the worker's memo: the same result
    from prunecheck.sim.api.check import check_policy
    from prunecheck.sim.subjects import cage

    spec = f"{Path(__file__).resolve().parent}/policies/complete_history_trim.py:trim_openai"
    options: dict[str, Any] = {
        "levels": (0.6,),
        "seeds": (1,),
        "slow_levels": (),
        "max_examples": 20,
    }
    results = []
    for size in (cage.MEMO_SIZE, 0):
        monkeypatch.setattr(cage, "MEMO_SIZE", size)
        cage.close_all()
        results.append(
            check_policy(
                spec, format="openai", placements=["after_append"], failures=False, **options
            )
        )
    cage.close_all()
    memo, plain = results
    assert memo.verdict.value == "unsafe" and memo.summary() == plain.summary()
    assert memo.narrative == plain.narrative and memo.search_examples == plain.search_examples
