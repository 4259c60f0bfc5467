"""What a user of 0.2.0 imported still works in 0.3: unchanged, or through a
shim of ``prunecheck._deprecated`` that warns with the release it goes in."""

from __future__ import annotations

import importlib
import json
import warnings
from importlib.metadata import version
from pathlib import Path

import pytest

import prunecheck.model
from prunecheck._deprecated import (
    MODEL_MOVED,
    PrunecheckDeprecationWarning,
    RemovedIn040Warning,
)

CORPUS = Path(__file__).resolve().parent / "corpus"
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: ``prunecheck.model.__all__`` in 0.2.0, as released.
MODEL_020 = [
    "BUILTINS",
    "AssistantChunk",
    "BudgetCheck",
    "CallSpec",
    "CheckAt",
    "Clear",
    "ConfigError",
    "Context",
    "ContextView",
    "Effect",
    "Event",
    "Evict",
    "ExternalWrite",
    "FailureReason",
    "Gate",
    "Incident",
    "IncidentKind",
    "Invoke",
    "IssueBatch",
    "Message",
    "NewSession",
    "Policy",
    "PolicyError",
    "Proposal",
    "Provider",
    "PrunecheckError",
    "Repair",
    "ResultChunk",
    "Retry",
    "RetryMode",
    "Role",
    "RuntimeConfig",
    "RuntimeState",
    "StepResult",
    "StreamLoss",
    "Summarize",
    "SystemPrompt",
    "ToolFailure",
    "Trace",
    "TraceError",
    "TranscriptError",
    "UserMessage",
    "Violation",
    "ViolationReason",
    "apply",
    "as_policy",
    "builtin_policy",
    "check_prune",
    "initial_state",
    "is_commit_boundary",
    "replay",
    "step",
]

#: The other names of 0.2.0 users imported, kept unchanged (module → names).
KEPT_020 = {
    "prunecheck": [
        "CheckResult",
        "UnsafePolicy",
        "Verdict",
        "__version__",
        "assert_policy_safe",
        "check_policy",
        "list_policy",
    ],
    "prunecheck.model.actions": [
        "Action",
        "Clear",
        "Evict",
        "Proposal",
        "Summarize",
        "proposal_from",
    ],
    "prunecheck.model.policies": [
        "BUILTINS",
        "ContextView",
        "FunctionPolicy",
        "Policy",
        "SelectFn",
        "as_policy",
        "builtin_policy",
        "salience",
    ],
    "prunecheck.pytest_plugin": ["PrunecheckFixture", "prunecheck", "pytest_addoption"],
    "prunecheck.model.trace": ["FORMAT", "VERSION", "Trace", "dumps", "loads"],
}


def test_every_name_the_model_exported_in_020_still_resolves() -> None:
    assert set(MODEL_020) == set(prunecheck.model.__all__) - {"PolicyTimeout"} | set(MODEL_MOVED)
    assert not set(MODEL_MOVED) & set(prunecheck.model.__all__)


@pytest.mark.parametrize("name", sorted(MODEL_MOVED))
def test_a_moved_model_name_warns_with_its_release_and_is_the_real_thing(name: str) -> None:
    home = MODEL_MOVED[name]
    with pytest.warns(RemovedIn040Warning, match=rf"prunecheck\.model\.{name} .* 0\.4\.0.*{home}"):
        value = getattr(prunecheck.model, name)
    assert value is getattr(importlib.import_module(home), name)


def test_each_use_of_a_moved_name_warns_not_only_the_first() -> None:
    for _ in range(2):
        with pytest.warns(RemovedIn040Warning):
            exec("from prunecheck.model import step", {})  # the form users wrote
    assert "step" not in vars(prunecheck.model) and "step" not in dir(prunecheck.model)


def test_a_name_the_model_never_had_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"prunecheck\.model' has no attribute 'nope'"):
        prunecheck.model.nope  # noqa: B018


@pytest.mark.parametrize("module", sorted(KEPT_020))
def test_what_020_users_imported_imports_without_a_warning(module: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        imported = importlib.import_module(module)
        for name in KEPT_020[module]:
            assert getattr(imported, name) is not None, f"{module}.{name}"


def test_trace_format_1_reads_without_a_warning() -> None:
    from prunecheck.model.trace import FORMAT, VERSION, loads

    text = (CORPUS / "seed_parallel_batch.json").read_text(encoding="utf-8")
    assert (
        (json.loads(text)["format"], json.loads(text)["version"])
        == (FORMAT, 1)
        == (FORMAT, VERSION)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert loads(text).events


def test_the_warnings_are_deprecation_warnings_users_can_filter() -> None:
    assert issubclass(RemovedIn040Warning, PrunecheckDeprecationWarning)
    assert issubclass(PrunecheckDeprecationWarning, DeprecationWarning)
    assert RemovedIn040Warning.release == "0.4.0"


def test_no_shim_outlives_the_release_it_goes_in() -> None:
    """Bumping to 0.4.0 fails here until the RemovedIn040Warning shims are deleted."""
    installed = tuple(int(p) for p in version("prunecheck").split(".")[:2])
    assert installed < (0, 4), (
        "0.4.0: delete what RemovedIn040Warning keeps (prunecheck._deprecated)"
    )


def test_a_020_stimulus_name_warns_with_its_release_and_how_to_migrate() -> None:
    from prunecheck.sim.subjects.runtimes import stimuli

    with pytest.warns(RemovedIn040Warning, match=r"stimuli\.ResultChunk .* 0\.4\.0.*'result'"):
        exec(
            "from prunecheck.sim.subjects.runtimes.stimuli import ResultChunk", {}
        )  # as 0.2 users did
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        stimuli.Nope  # noqa: B018


def test_a_runtime_written_against_020_runs_as_the_current_example(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # examples/agent_loop.py as 0.2.0 shipped it (isinstance(st, s.System | s.User),
    # st.call, s.ToolCalls ...): it runs, and finds what today's example finds
    from prunecheck.sim.cli.app import main

    old = tmp_path / "agent_loop_020.py"
    old.write_text((DATA / "agent_loop_020.txt").read_text(encoding="utf-8"), encoding="utf-8")
    trace = str(CORPUS / "seed_parallel_batch.json")
    outs = []
    for spec in (f"runtime:{old}:NaiveLoop", f"runtime:{EXAMPLES}/agent_loop.py:NaiveLoop"):
        status = main(["replay", trace, spec, "--trust-policy"])
        out, err = capsys.readouterr()
        assert status == 1, err[-2000:]
        outs.append(out.splitlines()[-1])
    assert outs[0] == outs[1] and "violation" in outs[0]
