"""The bad-input suite: every bad argument, file or policy gets its exit status
and no traceback (issue 10).

Each case is one command line run by ``prunecheck.sim.cli.main`` in-process
(user policies run in their own worker process, so a policy that exits or
hangs cannot take the test down) or, for the policies that end processes, in
a subprocess.  Every case checks: the exit status; no "Traceback" in stdout
or stderr; for exit 2, one paragraph (one line) on stderr; and that nothing
a policy prints reaches stdout.  Tiny horizons, levels and example counts
keep the suite fast.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.sweeps.runs import RunSpec

BAD = Path(__file__).resolve().parent / "bad_policies"
RUNTIMES = Path(__file__).resolve().parent / "bad_runtimes" / "runtimes.py"
CORPUS = Path(__file__).resolve().parent / "corpus"
DOCUMENTED_TRACE = str(CORPUS / "seed_parallel_batch.json")


@dataclass(frozen=True, slots=True)
class Case:
    """One bad input: a command line (``{tmp}`` is the case folder,
    ``{bad}`` the fixture policies) and the exit status it must get."""

    name: str
    argv: tuple[str, ...]
    status: int = 2
    needle: str = ""  # a phrase the paragraph must hold
    subprocess: bool = False
    env: tuple[tuple[str, str], ...] = ()  # environment variables set for the case
    slow: bool = False  # make test-all only: a fast case beside it takes the same path


def _c(
    name: str,
    argv: str,
    status: int = 2,
    needle: str = "",
    sub: bool = False,
    env: dict[str, str] | None = None,
    slow: bool = False,
) -> Case:
    return Case(name, tuple(argv.split()), status, needle, sub, tuple((env or {}).items()), slow)


# ------------------------------------------------------------- arguments
BAD_SECONDS = ("0", "-1", "nan", "inf", "abc")
SEARCHY = (
    "search recency --max-examples 2",
    "explore recency --depth 2",
    "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5",
    "replay " + DOCUMENTED_TRACE,
    "baseline --out {tmp}/b.json --levels 0.5 --seeds 1 --horizon 5",
    "sweep --out {tmp}/r.jsonl recency --gate none --levels 0.5 --seeds 1 --horizon 5 --jobs 1",
    "report --out {tmp}/rep --seeds 1 --quick --jobs 1",
)
ARG_CASES = [
    *(
        _c(
            f"{cmd.split()[0]}-policy-timeout-{v}",
            f"{cmd} --policy-timeout {v}",
            needle="--policy-timeout",
        )
        for cmd in SEARCHY
        for v in BAD_SECONDS
    ),
    *(
        _c(f"search-{flag}-{v}", f"search recency --{flag} {v}", needle=f"--{flag}")
        for flag, values in (
            ("max-examples", ("0", "-1", "x")),
            ("budget", ("0", "-5", "1e3")),
            ("hard-ceiling", ("0", "x")),
            ("seed", ("x", "1.5", "9" * 30)),
            ("max-batches", ("-1", "x")),
            ("max-calls", ("-2",)),
            ("max-steps", ("x",)),
        )
        for v in values
    ),
    _c("search-target", "search recency --target nonsense", needle="--target"),
    _c("search-sizes", "search recency --sizes a,b", needle="--sizes"),
    _c("search-gate", "search recency --gate sometimes", needle="--gate"),
    _c("search-no-policy", "search", needle="POLICY: is missing"),
    _c("explore-no-policy", "explore --depth 2", needle="POLICY: is missing"),
    *(
        _c(f"{cmd.split()[0]}-policy-twice", cmd, needle="given twice")
        for cmd in (
            "search recency --policy unit_safe",
            "explore recency --policy unit_safe --depth 2",
            "check recency --policy unit_safe",
            f"replay {DOCUMENTED_TRACE} recency --policy unit_safe",
            "baseline --out {tmp}/b.json recency --policy unit_safe",
            "regress --baseline {tmp}/b.json recency --policy unit_safe",
        )
    ),
    _c(
        "search-policy-and-runtime",
        "search recency --runtime examples/agent_loop.py:NaiveLoop",
        needle="given twice",
    ),
    *(
        _c(f"{cmd.split()[0]}-policy-in-two-forms", cmd, needle="two forms")
        for cmd in (
            "sweep --out {tmp}/r.jsonl recency --policy unit_safe",
            "report --out {tmp}/rep recency --policy unit_safe",
        )
    ),
    *(
        _c(f"explore-{flag}-{v}", f"explore recency --{flag} {v}", needle=f"--{flag}")
        for flag, values in (("depth", ("-1", "x")), ("max-states", ("0", "-3")))
        for v in values
    ),
    *(
        _c(f"check-{flag}-{v}", f"check recency --{flag} {v}", needle=f"--{flag}")
        for flag, values in (
            ("levels", ("2", "half", "-0.1", "")),
            ("slow-levels", ("2", "half", "nan", "nones")),
            ("seeds", ("x", "", "3-x")),
            ("horizon", ("0", "nan", "inf", "-4")),
            ("max-examples", ("-1", "x")),
        )
        for v in values
        if v
    ),
    _c("check-no-policy", "check", needle="POLICY"),
    _c(
        "check-langchain-and-policy",
        "check recency --langchain strategy=last",
        needle="--langchain",
    ),
    *(
        _c(
            f"baseline-{flag}-{v}",
            f"baseline --out {{tmp}}/b.json --{flag} {v}",
            needle=f"--{flag}",
        )
        for flag, values in (("levels", ("5", "x")), ("seeds", ("x", "1-y")), ("budget", ("0",)))
        for v in values
    ),
    *(
        _c(
            f"regress-{flag}-{v}",
            f"regress --baseline {{tmp}}/none.json --{flag} {v}",
            needle=f"--{flag}",
        )
        for flag, values in (
            ("alpha", ("0", "1", "nan", "2")),
            ("min-effect", ("-1", "inf")),
            ("min-ratio", ("0.5", "nan")),
        )
        for v in values
    ),
    _c("regress-missing-baseline", "regress --baseline {tmp}/none.json", needle="none.json"),
    *(
        _c(
            f"sweep-{flag}-{v}",
            f"sweep --out {{tmp}}/r.jsonl recency --{flag} {v}",
            needle=f"--{flag}",
        )
        for flag, values in (
            ("levels", ("2", "half", "nan")),
            ("seeds", ("0", "-1")),
            ("horizon", ("0", "nan", "inf")),
            ("jobs", ("0", "-1")),
            ("budget", ("0",)),
            ("tightness", ("9", "x")),
            ("gate", ("strict",)),
            ("check-at", ("never",)),
        )
        for v in values
    ),
    *(
        _c(f"{cmd.split()[0]}-time-limit-{v}", f"{cmd} --time-limit {v}", needle="--time-limit")
        for cmd in (
            "sweep --out {tmp}/r.jsonl recency --levels 0.5 --seeds 1",
            "report --out {tmp}/rep --quick --seeds 1",
        )
        for v in ("0", "-1", "nan", "inf", "x")
    ),
    *(
        _c(f"{cmd.split()[0]}-max-retries-{v}", f"{cmd} --max-retries {v}", needle="--max-retries")
        for cmd in (
            "sweep --out {tmp}/r.jsonl recency",
            "search recency",
            "check recency",
        )
        for v in ("-1", "x")
    ),
    _c(
        "sweep-ceiling-below-budget",
        "sweep --out {tmp}/r.jsonl recency --hard-ceiling 10",
        needle="hard_ceiling",
    ),
    _c(
        "sweep-out-is-folder",
        "sweep --out {tmp} recency --levels 0.5 --seeds 1",
        needle="is a folder",
    ),
    _c(
        "sweep-out-unwritable",
        "sweep --out /proc/prunecheck/r.jsonl recency --levels 0.5 --seeds 1",
        needle="cannot be",
    ),
    *(
        _c(f"report-{flag}-{v}", f"report --out {{tmp}}/rep --{flag} {v}", needle=f"--{flag}")
        for flag, values in (("seeds", ("0", "x")), ("jobs", ("0",)), ("seed", ("x",)))
        for v in values
    ),
    _c(
        "report-out-is-file", "report --out {tmp}/file.txt --quick --seeds 1", needle="not a folder"
    ),
    _c(
        "report-out-unwritable",
        "report --out /proc/prunecheck/rep --quick --seeds 1",
        needle="cannot be created",
    ),
    _c("replay-gate", f"replay {DOCUMENTED_TRACE} --gate sometimes", needle="--gate"),
    _c("validate-format", "validate {tmp}/ok.json --format cohere", needle="--format"),
    _c("validate-no-format", "validate {tmp}/ok.json", needle="--format"),
    _c("unknown-command", "frobnicate", needle="invalid choice"),
    _c("no-command", "", status=2),
    *(
        _c(f"{cmd}-out-is-file", f"{cmd} --out {{tmp}}/file.txt", needle="not a folder")
        for cmd in (
            "search lowest_salience --max-examples 50",
            "explore lowest_salience --depth 3",
            "check lowest_salience --levels 0.5 --seeds 1 --max-examples 5 --horizon 5",
        )
    ),
    *(
        _c(f"{cmd.split()[0]}-out-holds-a-bundle", f"{cmd} --out {{tmp}}/bundle", needle="--force")
        for cmd in (
            "search lowest_salience --max-examples 50",
            "explore lowest_salience --depth 3",
            "check lowest_salience --levels 0.5 --seeds 1 --max-examples 5 --horizon 5",
        )
    ),
    _c(
        "search-out-unwritable",
        "search lowest_salience --max-examples 50 --out /proc/prunecheck/repro",
        status=2,
        needle="/proc/prunecheck/repro",
    ),
]

# ----------------------------------------------------------------- files
FILE_CASES = [
    *(
        _c(f"replay-{name}", f"replay {{tmp}}/{name}", needle=name)
        for name in (
            "deep.json",
            "deep_obj.json",
            "not_json.json",
            "empty.json",
            "binary.json",
            "list.json",
            "no_config.json",
            "times_nan.json",
            "times_backwards.json",
            "times_short.json",
            "times_bool.json",
            "bad_format.json",
            "bad_version.json",
            "events_not_list.json",
            "bad_event.json",
            "negative_tokens.json",
            "no_policy.json",
            "seed_text.json",
            "meta_list.json",
            "missing.json",
            "empty_dir",
        )
    ),
    _c("replay-impossible-event", "replay {tmp}/impossible.json", needle="impossible.json"),
    *(
        _c(f"shrink-{name}", f"shrink {{tmp}}/{name}", needle=name)
        for name in ("deep.json", "not_json.json", "no_config.json", "missing.json", "empty_dir")
    ),
    _c("shrink-evil-without-consent", "shrink {tmp}/evil_trace.json", needle="--trust-policy"),
    _c("shrink-no-violation", "shrink {tmp}/ok_trace.json", needle="nothing to shrink"),
    _c("shrink-bad-target", f"shrink {DOCUMENTED_TRACE} --target nonsense", needle="--target"),
    _c("shrink-bad-replays", f"shrink {DOCUMENTED_TRACE} --max-replays 0", needle="--max-replays"),
    *(
        _c(f"validate-{name}", f"validate {{tmp}}/{name} --format openai", needle=name)
        for name in (
            "deep.json",
            "not_json.json",
            "binary.json",
            "missing.json",
            "empty.json",
            "no_messages.json",
            "scalar.json",
        )
    ),
    _c(
        "validate-anthropic-as-openai",
        "validate {tmp}/anthropic.json --format openai",
        needle="--format anthropic",
    ),
    _c(
        "validate-openai-as-anthropic",
        "validate {tmp}/openai.json --format anthropic",
        needle="--format openai",
    ),
    _c("validate-missing-function", "validate {tmp}/no_function.json --format openai", status=1),
    _c("validate-bad-part", "validate {tmp}/bad_part.json --format openai", status=1),
    _c("validate-text-part", "validate {tmp}/text_part.json --format openai", status=1),
    _c("validate-dup-call", "validate {tmp}/dup_call.json --format openai", status=1),
    _c("validate-dup-tool-use", "validate {tmp}/dup_tool_use.json --format anthropic", status=1),
    _c("regress-deep-baseline", "regress --baseline {tmp}/deep.json", needle="deep.json"),
    _c(
        "regress-not-json-baseline",
        "regress --baseline {tmp}/not_json.json",
        needle="not_json.json",
    ),
    _c("replay-evil-without-consent", "replay {tmp}/evil_trace.json", needle="--trust-policy"),
    *(
        _c(f"import-{name}", f"import {{tmp}}/{file}", needle=needle)
        for name, file, needle in (
            ("not-json", "not_json.json", "not JSON"),
            ("cut-line", "imp_cut_line.jsonl", "line 3"),
            ("lone-surrogate", "imp_surrogate.jsonl", "lone surrogate"),
            ("binary", "binary.json", "not UTF-8"),
            ("empty", "empty.json", "no model request"),
            ("scalar", "scalar.json", "not an object"),
            ("numbers", "imp_numbers.json", "not an object"),
            ("missing", "missing.jsonl", "does not exist"),
            ("empty-dir", "empty_dir", "empty folder"),
            ("deep", "deep.json", "deeper than"),
            ("no-messages", "no_messages.json", "neither a model request body"),
            ("bad-role", "imp_bad_role.jsonl", "role 'robot'"),
            ("unrelated-spans", "imp_unrelated.otlp.jsonl", "no model request"),
            ("all-truncated", "imp_all_truncated.otlp.jsonl", "cut off"),
            ("no-content", "imp_no_content.otlp.jsonl", "not captured"),
            ("mixed-providers", "imp_mixed.jsonl", "mixes openai"),
            ("llm-run-without-inputs", "imp_run_no_inputs.jsonl", "inputs.messages"),
            ("mistyped-span", "imp_mistyped.otlp.jsonl", "wrong type"),
        )
    ),
    _c(
        "import-other-format",
        "import {tmp}/imp_chat.jsonl --format anthropic",
        needle="--format openai-chat",
    ),
    _c(
        "import-unknown-conversation",
        "import {tmp}/imp_chat.jsonl --conversation nope",
        needle="conv-cut-batch",
    ),
    _c("import-bundle-exists", "import {tmp}/imp_chat.jsonl --out {tmp}/bundle", needle="--force"),
    _c("import-bad-format-flag", "import {tmp}/imp_chat.jsonl --format xml", needle="--format"),
    _c(
        "sweep-locked",
        "sweep --out {tmp}/locked.jsonl recency --gate none "
        "--levels 0.5 --seeds 1 --horizon 5 --jobs 1",
        needle="being written",
    ),
]

# -------------------------------------------------------------- policies
EXITS = (
    "sys_exit",
    "os_exit",
    "keyboard",
    "generator_exit",
    "base_exception",
    "sys_exit_3",
    "kill_self",
    "lazy_exit",
)
CHEATS = ("returns_int", "returns_junk", "unknown_id", "raises")


def _policy_cases() -> Iterator[Case]:
    for name in (*EXITS, *CHEATS):
        spec = f"{BAD}/{'exits' if name in EXITS else 'cheats'}.py:{name}"
        yield _c(f"search-{name}", f"search {spec} --max-examples 5", needle=name)
        yield _c(
            f"check-{name}",
            f"check {spec} --levels 1 --seeds 1 --max-examples 5 --horizon 60",
            needle=name,
        )
        yield _c(f"explore-{name}", f"explore {spec} --depth 4", needle=name)
        yield _c(f"replay-{name}", f"replay {DOCUMENTED_TRACE} {spec}", needle=name)
    for name in ("sleeps", "busy", "endless"):
        spec = f"{BAD}/hangs.py:{name}"
        for cmd in (
            f"search {spec} --max-examples 5",
            f"replay {DOCUMENTED_TRACE} {spec}",
            f"explore {spec} --depth 4",
        ):
            yield _c(  # the policy hangs at its first call: any time limit stops it
                f"{cmd.split()[0]}-{name}",
                f"{cmd} --policy-timeout 0.1",
                needle="did not return within 0.1 s",
            )
    yield _c(
        "search-exit-on-import",
        f"search {BAD}/exit_on_import.py:select",
        needle="sys.exit(0)",
    )
    yield _c("check-exit-on-import", f"check {BAD}/exit_on_import.py:select", needle="sys.exit(0)")
    for cmd in ("search {spec}", "check {spec}", "explore {spec} --depth 2"):
        yield _c(
            f"{cmd.split()[0]}-list-fn-without-format",
            cmd.format(spec=f"{BAD}/list_fn.py:trim"),
            needle="@openai",
        )
    yield _c("search-missing-file", "search nope/missing.py:select", needle="does not exist")
    yield _c(
        "search-missing-attr",
        f"search {BAD}/cheats.py:nothing_here",
        needle="no attribute",
    )
    yield _c("search-unknown-builtin", "search no_such_policy", needle="built-in")
    yield _c("search-bad-format-suffix", f"search {BAD}/list_fn.py:trim@gemini", needle="gemini")
    # The acceptance points: a policy that ends its process, through every command,
    # run as a user runs it (a subprocess).  make test spawns the real binary once
    # per way of exiting (check), and for sweep's pool (--jobs 2, two runs; no
    # in-process case above takes it, and report runs its sweep through the same
    # pool: test_a_policy_that_exits_in_reports_pool_is_one_paragraph is its
    # cheap twin, the real report's 530 runs are make test-all's); the in-process
    # cases above take search's, explore's and replay's path; make test-all
    # spawns every command.
    FAST_PROCESS = {"process-check-sys_exit", "process-check-os_exit"}
    FAST_PROCESS |= {"process-sweep-sys_exit"}
    for name in ("sys_exit", "os_exit"):
        spec = f"{BAD}/exits.py:{name}"
        for cmd in (
            f"check {spec} --levels 1 --seeds 1 --max-examples 5 --horizon 60",
            f"search {spec} --max-examples 5",
            f"explore {spec} --depth 4",
            f"replay {DOCUMENTED_TRACE} {spec}",
            f"sweep --out {{tmp}}/r.jsonl {spec} --gate none --levels 1 "
            "--seeds 2 --horizon 60 --jobs 2",
            f"report --out {{tmp}}/rep {spec} --quick --seeds 1 --jobs 2",
        ):
            case = f"process-{cmd.split()[0]}-{name}"
            yield _c(case, cmd, needle=name, sub=True, slow=case not in FAST_PROCESS)


POLICY_CASES = list(_policy_cases())


# -------------------------------------------------------------- runtimes
#: A runtime under test that ends its process, raises, answers garbage or
#: hangs (issue 19): exit 2, one paragraph naming the runtime and the step.
RUNTIME_FAULTS = {
    "SysExit": "called sys.exit(0)",
    "OsExit": "its process exited with status 0",
    "Raises": "raised ValueError: the runtime broke",
    "Keyboard": "raised KeyboardInterrupt",
    "Base": "raised BaseException",
    "Garbage": "request() returned an int (42), not a list",
    "NoRole": "whose role is null",
    "BadExecutions": "executions() returned a str",
    "Hangs": "request() did not return within 0.5 s",
}


def _runtime_cases() -> Iterator[Case]:
    for name, words in RUNTIME_FAULTS.items():
        spec = f"{RUNTIMES}:{name}"
        limit = " --policy-timeout 0.5" if name == "Hangs" else ""
        yield _c(
            f"search-runtime-{name}",
            f"search runtime:{spec} --max-examples 5{limit}",
            needle=words,
        )
        if name in ("SysExit", "OsExit", "Raises", "Garbage", "Hangs"):
            yield _c(
                f"explore-runtime-{name}",
                f"explore runtime:{spec} --depth 4{limit}",
                needle=words,
            )
            yield _c(
                f"check-runtime-{name}",
                f"check runtime:{spec} --levels 1 --seeds 1 --max-examples 5 --horizon 60{limit}",
                needle=words,
            )
    yield _c(
        "search-runtime-init-exits",
        f"search runtime:{RUNTIMES}:InitExits --max-examples 5",
        needle="building it called sys.exit(3)",
    )
    yield _c(
        "search-runtime-hangs-past-time-limit",
        # 2 s, not less: under load the runtime's own process can take most of half a
        # second to start, and a limit spent before the first run says "out of time after 0"
        f"search runtime:{RUNTIMES}:Hangs --time-limit 2",
        needle="before --time-limit ran out",
    )
    for name in ("SysExit", "OsExit", "Keyboard"):  # as a user runs it: a subprocess
        yield _c(
            f"process-search-runtime-{name}",
            f"search runtime:{RUNTIMES}:{name} --max-examples 5",
            needle=RUNTIME_FAULTS[name],
            sub=True,
            slow=name != "OsExit",  # in process above (search-runtime-*), each of them
        )


RUNTIME_CASES = list(_runtime_cases())

# ------------------------------------------------------------- agent loops
#: A loop spec that is malformed, names no agent, or an agent loop that spins
#: or cannot open (issue 21): exit 2, one paragraph naming the spec or the loop.
BAD_LOOPS = Path(__file__).resolve().parent / "bad_loops.py"
BAD_LOOPS_GRAPH = Path(__file__).resolve().parent / "bad_loops_graph.py"
FAKE_LOOPS = Path(__file__).resolve().parent / "loops_fake.py"
LOOP_CASES = [
    _c("loop-spec-malformed", "check loop:nothing", needle="must be loop:FILE.py:ATTR"),
    _c("loop-file-missing", "check loop:{tmp}/absent.py:agent", needle="does not exist"),
    _c("loop-attr-missing", f"check loop:{FAKE_LOOPS}:absent", needle="no attribute 'absent'"),
    _c("loop-not-an-agent", f"check loop:{BAD_LOOPS}:not_an_agent", needle="no framework"),
    # an uncompiled StateGraph: what it is, and no unrelated framework named (round 35)
    _c("loop-graph-not-compiled", f"check loop:{BAD_LOOPS_GRAPH}:builder",
       needle="(a langgraph StateGraph) is an agent of no framework prunecheck drives."),
    _c("loop-framework-wrong", f"check loop:langgraph:{FAKE_LOOPS}:careful",
       needle="langgraph"),
    _c("loop-spins", f"search loop:{BAD_LOOPS}:spins --max-examples 2", needle="spins"),
    _c("loop-cannot-open", f"check loop:{BAD_LOOPS}:cannot_open --max-examples 2",
       needle="could not open the agent (RuntimeError: no API key)"),
    _c("loop-scenario-unknown", f"search loop:{FAKE_LOOPS}:careful --scenario nap",
       needle="--scenario"),
    _c("loop-scenario-not-applicable", f"search loop:{FAKE_LOOPS}:careful --scenario interrupt",
       needle="no human-in-the-loop approval"),
]  # fmt: skip

# ------------------------------------------------- files, the machine, small holes
SWEEP = "recency --gate none --levels 0.5 --seeds 1 --horizon 5 --jobs 1"
ODD = f"{BAD}/odd.py"
MACHINE_CASES = [
    _c("sweep-out-device", f"sweep --out /dev/null {SWEEP}", needle="character device"),
    _c("sweep-out-fifo", f"sweep --out {{tmp}}/pipe.fifo {SWEEP}", needle="FIFO"),
    _c("sweep-out-foreign", f"sweep --out {{tmp}}/foreign.jsonl {SWEEP}", needle="other data"),
    _c("report-out-device", "report --out /dev/null --quick --seeds 1", needle="character device"),
    *(
        _c(f"{cmd.split()[0]}-env-{var}-{value}", cmd, needle=var, env={var: value})
        for cmd in (
            "search recency --max-examples 2",
            f"replay {DOCUMENTED_TRACE}",
        )
        for var, value in (
            ("PRUNECHECK_POLICY_MEMORY_MB", "-5"),
            ("PRUNECHECK_POLICY_MEMORY_MB", "lots"),
            ("PRUNECHECK_CAGE", "yes"),
            ("PRUNECHECK_JOBS", "0"),
            ("PRUNECHECK_JOBS", "two"),
        )
    ),
    _c(
        "search-cage-off-sys-exit",
        f"search {BAD}/exits.py:sys_exit --max-examples 5",
        needle="called sys.exit(0)",
        env={"PRUNECHECK_CAGE": "0"},
    ),
    _c(
        "replay-cage-off-sys-exit",
        f"replay {DOCUMENTED_TRACE} {BAD}/exits.py:sys_exit",
        needle="called sys.exit(0)",
        env={"PRUNECHECK_CAGE": "0"},
    ),
    *(
        _c(
            f"{cmd.split()[0]}-rewrites-{name}",
            cmd.format(spec=f"{BAD}/cheats.py:{name}"),
            needle="rewrote",
        )
        for name in ("setattr_frozen", "mutate_view")
        for cmd in (
            "search {spec} --max-examples 5",
            f"replay {DOCUMENTED_TRACE} {{spec}}",
        )
    ),
    _c("search-name-raises", f"search {ODD}:BadName", needle="RuntimeError: no name today"),
    *(
        _c(f"replay-{name}", f"replay {DOCUMENTED_TRACE} {ODD}:{name}", needle="tokens=-")
        for name in ("negative_summary", "negative_clear")
    ),
    _c(
        "search-list-fn-no-role",
        f"search {BAD}/list_fn.py:no_role@openai --max-examples 5",
        needle="without a role",
    ),
    _c("replay-lone-surrogate", "replay {tmp}/surrogate.json", status=1),
    _c(
        "validate-lone-surrogate",
        "validate {tmp}/surrogate_transcript.json --format openai",
        status=0,
    ),
    _c(
        "replay-ascii-only-output",
        f"replay {DOCUMENTED_TRACE}",
        status=1,
        sub=True,
        env={"PYTHONIOENCODING": "ascii"},
    ),
]

# --json and --junit (issue 23): bad input still exits 2 with one paragraph on
# stderr and prints no document (test_bad_input_with_json_prints_no_document).
JSON_CASES = [
    _c("json-check-missing-file", "check nope/missing.py:select --json", needle="does not exist"),
    _c("json-search-unknown-builtin", "search no_such_policy --json", needle="built-in"),
    _c("json-explore-bad-depth", "explore recency --depth 0 --json", needle="--depth"),
    _c("json-replay-not-json", "replay {tmp}/not_json.json --json", needle="not_json.json"),
    _c("json-validate-not-json", "validate {tmp}/not_json.json --format openai --json"),
    _c("json-regress-missing", "regress --baseline {tmp}/none.json --json", needle="none.json"),
    _c("json-import-not-json", "import {tmp}/not_json.json --json", needle="not_json.json"),
    _c("json-shrink-not-json", "shrink {tmp}/not_json.json --json", needle="not_json.json"),
    _c(
        "json-sweep-unknown-policy",
        "sweep --out {tmp}/r.jsonl no_such_policy --levels 0.5 --seeds 1 --horizon 5 --json",
        needle="no_such_policy",
    ),
    _c(
        "junit-check-no-folder",
        "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5 "
        "--junit {tmp}/no/such/dir/r.xml",
        needle="--junit",
    ),
    _c("junit-check-is-folder", "check recency --junit {tmp} --json", needle="is a folder"),
    _c(
        "junit-regress-no-folder",
        "regress --baseline {tmp}/b.json --junit {tmp}/no/such/dir/r.xml",
        needle="--junit",
    ),
]
CASES = [*ARG_CASES, *FILE_CASES, *POLICY_CASES, *RUNTIME_CASES, *LOOP_CASES, *MACHINE_CASES,
         *JSON_CASES]  # fmt: skip


def test_the_suite_is_large() -> None:
    assert len(CASES) >= 150
    assert len({c.name for c in CASES}) == len(CASES)


# ------------------------------------------------------------- fixtures
def _trace(**change: object) -> str:
    data: dict[str, object] = {
        "format": "prunecheck-trace",
        "version": 1,
        "policy": "recency",
        "config": {"budget": 100, "hard_ceiling": 200},
        "times": [0.0, 1.0],
        "events": [{"kind": "user", "tokens": 5}, {"kind": "user", "tokens": 5}],
    }
    data.update(change)
    return json.dumps({k: v for k, v in data.items() if v is not None})


def _files(tmp: Path, names: Collection[str] | None = None) -> None:
    """Write the case files into ``tmp``: all of them, or those ``names``
    gives (what a case's command line names under ``{tmp}/``)."""
    for name, content in _contents().items():
        if names is None or name in names:
            path = tmp / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            elif content is _FIFO:
                os.mkfifo(path)
            elif content is _FOLDER:
                path.mkdir()
            else:
                path.write_text(content, encoding="utf-8")
    if names is None or "bundle" in names:
        (tmp / "bundle" / "trace.json").write_text("an earlier bundle", encoding="utf-8")


_FIFO, _FOLDER = "<a FIFO>", "<a folder>"


@functools.cache
def _contents() -> dict[str, str | bytes]:
    """Every case file's content by name (a FIFO or a folder: ``_FIFO``,
    ``_FOLDER``), built once."""
    files: dict[str, str | bytes] = {
        "deep.json": "[" * 100_000,
        "deep_obj.json": '{"a":' * 50_000 + "1" + "}" * 50_000,
        "not_json.json": "{not json",
        "empty.json": "",
        "list.json": "[]",
        "no_config.json": _trace(config=None),
        "times_nan.json": _trace(times=[0.0, "NaN"]).replace('"NaN"', "NaN"),
        "times_backwards.json": _trace(times=[2.0, 1.0]),
        "times_short.json": _trace(times=[1]),
        "times_bool.json": _trace(times=[True, False]),
        "bad_format.json": _trace(format="other"),
        "bad_version.json": _trace(version=9),
        "events_not_list.json": _trace(events={}),
        "bad_event.json": _trace(events=[{"kind": "teleport"}], times=None),
        "negative_tokens.json": _trace(events=[{"kind": "user", "tokens": -5}], times=None),
        "no_policy.json": _trace(policy=None),
        "seed_text.json": _trace(seed="1"),
        "meta_list.json": _trace(meta=[]),
        "impossible.json": _trace(
            events=[{"kind": "result", "call": "c9", "tokens": 5}], times=None
        ),
        "evil_trace.json": _trace(policy=f"{BAD}/evil.py:select"),
        "ok_trace.json": _trace(),
        "ok.json": '[{"role": "user", "content": "hi"}]',
        "no_messages.json": '{"model": "x"}',
        "scalar.json": "42",
        "anthropic.json": json.dumps(
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}],
                }
            ]
        ),
        "openai.json": json.dumps([{"role": "tool", "tool_call_id": "c1", "content": "x"}]),
        "no_function.json": json.dumps(
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function"}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": ""},
            ]
        ),
        "bad_part.json": json.dumps([{"role": "user", "content": [{"type": "video"}]}]),
        "text_part.json": json.dumps([{"role": "user", "content": [{"type": "text"}]}]),
        "dup_call.json": json.dumps(
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "a", "arguments": "{}"},
                        },
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "a", "arguments": "{}"},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": ""},
            ]
        ),
        "dup_tool_use.json": json.dumps(
            [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
                        {"type": "tool_use", "id": "t1", "name": "a", "input": {}},
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
                },
            ]
        ),
        "file.txt": "a file, not a folder",
    }
    files.update(_import_files())
    files["binary.json"] = b"\xff\xfe\x00garbage"
    files["pipe.fifo"] = _FIFO
    files["foreign.jsonl"] = '{"level": "info", "msg": "another tool"}\n' * 3
    seed = json.loads(Path(DOCUMENTED_TRACE).read_text(encoding="utf-8"))
    seed["events"][1]["text"] = "half an emoji \ud83d, as a truncated log has"
    files["surrogate.json"] = json.dumps(seed)
    files["surrogate_transcript.json"] = json.dumps([{"role": "user", "content": "cut \ud83d"}])
    files["empty_dir"] = files["bundle"] = _FOLDER
    return files


TELEMETRY = Path(__file__).resolve().parent / "data" / "telemetry"


def _import_files() -> dict[str, str]:
    """Bad and partial logs for ``prunecheck import``, cut from the generated ones."""
    chat = (TELEMETRY / "raw_chat_cut.jsonl").read_text(encoding="utf-8")
    lines = chat.splitlines()
    spans = json.loads((TELEMETRY / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8"))

    def otlp(edit: object) -> str:
        data = json.loads(json.dumps(spans))
        for scope in data["resourceSpans"][0]["scopeSpans"]:
            scope["spans"] = [s for s in (edit(s) for s in scope["spans"]) if s]  # type: ignore[operator]
        return json.dumps(data)

    def attribute(span: dict[str, object], key: str) -> dict[str, object] | None:
        attrs = span["attributes"]
        assert isinstance(attrs, list)
        return next((a for a in attrs if a["key"] == key), None)

    def truncated(span: dict[str, object]) -> dict[str, object]:
        found = attribute(span, "gen_ai.input.messages")
        if found is not None:
            found["value"]["stringValue"] = found["value"]["stringValue"][:120]  # type: ignore[index]
        return span

    def unrelated(span: dict[str, object]) -> dict[str, object] | None:
        return None if attribute(span, "gen_ai.input.messages") else span

    def mistyped(span: dict[str, object]) -> dict[str, object]:
        span["status"] = "error"  # an object in OTLP JSON
        return span

    def no_content(span: dict[str, object]) -> dict[str, object]:
        attrs = span["attributes"]
        assert isinstance(attrs, list)
        span["attributes"] = [a for a in attrs if not a["key"].startswith("gen_ai.input")]
        return span

    anthropic = (TELEMETRY / "raw_anthropic_dropped_result.jsonl").read_text(encoding="utf-8")
    mixed = anthropic.splitlines()[0].replace('"conversation_id": "conv"', '"conversation_id": '
                                              '"conv-cut-batch"')  # fmt: skip
    bad_role = json.loads(lines[0])
    bad_role["request"]["messages"][1]["role"] = "robot"
    return {
        "imp_chat.jsonl": chat,
        "imp_cut_line.jsonl": "\n".join([*lines[:2], lines[2][:200]]) + "\n",
        "imp_surrogate.jsonl": lines[0].replace("What do", "What \\ud83d do") + "\n",
        "imp_numbers.json": "[1, 2]",
        "imp_bad_role.jsonl": json.dumps(bad_role) + "\n",
        "imp_unrelated.otlp.jsonl": otlp(unrelated),
        "imp_all_truncated.otlp.jsonl": otlp(truncated),
        "imp_no_content.otlp.jsonl": otlp(no_content),
        "imp_mistyped.otlp.jsonl": otlp(mistyped),
        "imp_mixed.jsonl": chat + mixed + "\n",
        "imp_run_no_inputs.jsonl": json.dumps({"id": "r1", "run_type": "llm", "inputs": {}}),
    }


@pytest.fixture
def case_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Path:
    """The case's folder, holding the case files and its current folder.
    This module's cases get the files their command line names (writing all
    of them for each of ~400 cases cost about 2 s of CPU); other modules'
    tests, which check that no file changed, get all of them."""
    case = getattr(request.node, "callspec", None) and request.node.callspec.params.get("case")
    if request.module.__name__ == __name__ and isinstance(case, Case):
        _files(tmp_path, {m for a in case.argv for m in re.findall(r"\{tmp\}/([^/\s]+)", a)})
    else:
        _files(tmp_path)
    monkeypatch.setenv("EVIL_MARK", str(tmp_path / "evil-ran.txt"))
    monkeypatch.setenv("PRUNECHECK_POLICY_MEMORY_MB", "1024")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(case: Case, tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    argv = [a.format(tmp=tmp, bad=BAD) for a in case.argv]
    if case.subprocess:
        done = subprocess.run(
            [sys.executable, "-m", "prunecheck", *argv],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=120,
            env={**os.environ, "COLUMNS": "200", **dict(case.env)},
        )
        return done.returncode, done.stdout, done.stderr
    if case.name == "sweep-locked":  # another writer holds the results file's lock
        import fcntl

        with (tmp / ".locked.jsonl.lock").open("w") as other:
            fcntl.flock(other, fcntl.LOCK_EX)
            status = main(argv)
    else:
        status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in CASES]
)
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in case.env if not case.subprocess else ():
        monkeypatch.setenv(var, value)
    if case.name == "loop-spins":  # the same spin, declared after 2,000 loop turns, not 50,000
        from prunecheck.sim.subjects.loops import clock

        monkeypatch.setattr(clock, "MAX_TICKS", 2000)
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)


def _check(case: Case, case_dir: Path, status: int, out: str, err: str) -> None:
    """What every case asserts: its exit status, no traceback, no policy
    output on stdout, one paragraph holding the needle for exit 2, and the
    evil policy never ran."""
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    assert "POLICY-STDOUT" not in out
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
    assert not (case_dir / "evil-ran.txt").exists()


def _its(runs: list[RunSpec], spec: str) -> list[RunSpec]:
    return [s for s in runs if s.policy == spec]


def test_a_policy_that_exits_in_reports_pool_is_one_paragraph(
    case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast twin of process-report-sys_exit (make test-all): report's
    sweep on its process pool (--jobs 2) meets a policy that exits, in
    process, with the quick report cut to that policy's runs.  The slow case
    adds the console script and the built-ins' 510 runs beside them."""
    from prunecheck.sim.cli import report

    spec = f"{BAD}/exits.py:sys_exit"
    parts = report.default_parts

    def its_runs(seeds: list[int], extra: list[str], *, quick: bool = False) -> report.Parts:
        main, tight, knobs = parts(seeds, extra, quick=quick)
        return _its(main, spec), _its(tight, spec), _its(knobs, spec)

    monkeypatch.setattr(report, "default_parts", its_runs)
    argv = f"report --out {{tmp}}/rep {spec} --quick --seeds 1 --jobs 2"
    case = _c("report-pool-sys_exit", argv, needle="sys_exit")
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert "more run(s) failed too" in err  # several runs, on the pool


@pytest.mark.parametrize(
    ("missing", "extra"),
    [("simpy", "harness"), ("matplotlib.pyplot", "report"), ("distributed", "dask")],
)
def test_a_package_the_install_left_out_is_one_paragraph_naming_its_extra(
    missing: str, extra: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As the base install (the guard alone) meets a command: the command's
    # module cannot import a harness package (tests/test_install.py runs the
    # real thing in a venv without them).
    def import_module(name: str) -> object:
        raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)

    monkeypatch.setattr(importlib, "import_module", import_module)  # what app calls
    assert main(["sweep", "--out", "r.jsonl"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1
    top = missing.partition(".")[0]
    assert err.startswith(f"prunecheck sweep: needs the package {top!r}, which is not installed")
    assert err.rstrip().endswith(f"pip install 'prunecheck[{extra}]'")


def test_a_missing_package_that_no_extra_brings_is_not_disguised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def import_module(name: str) -> object:
        raise ModuleNotFoundError("No module named 'mylib'", name="mylib")

    monkeypatch.setattr(importlib, "import_module", import_module)  # what app calls
    with pytest.raises(ModuleNotFoundError, match="mylib"):
        main(["sweep", "--out", "r.jsonl"])


@pytest.mark.parametrize("case", JSON_CASES, ids=[c.name for c in JSON_CASES])
def test_bad_input_with_json_prints_no_document(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bad input is not a verdict: stdout stays empty (a CI job reading it
    sees no document and the exit status 2), the paragraph is on stderr."""
    status, out, err = _run(case, case_dir, capsys)
    assert status == 2, err[-2000:]
    assert out == ""
    assert err.startswith("prunecheck "), err[-2000:]
