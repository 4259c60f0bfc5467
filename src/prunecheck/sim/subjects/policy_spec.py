"""Policy specs: the one parser of the text that names a policy or a runtime.

Each kind of spec has one spelling, given to every command as its ``POLICY``
argument (:mod:`prunecheck.sim.cli.policy_argument` lists them and reads the
deprecated spellings, ``--runtime X``, ``--langchain S``, ``--format F``, into
these).  A spec is one of

* a built-in name: ``lowest_salience``;
* ``module:attr`` or ``path/to/file.py:attr`` — a ``select(view, need)``
  policy (the *last* colon splits, so ``C:\\\\policies\\\\p.py:select`` works);
* the same ending in ``@openai`` or ``@anthropic`` — a list function
  ``trim(messages)`` over that provider's message dicts;
* ``ADAPTER:key=value,...`` — a framework trimmer (``langchain:strategy=last``;
  the adapters are :data:`~prunecheck.sim.subjects.catalog.ADAPTERS`);
* ``observed:@#T evict #L ...`` — the removals a production log showed,
  replayed (written by ``prunecheck import``; data, not code; see
  :mod:`prunecheck.model.observed`);
* ``runtime:FILE.py:CLASS`` or ``runtime:module:CLASS`` — a runtime under
  test; ``runtime:guard:POLICY`` and ``runtime:model:POLICY`` wrap any other
  spec in prunecheck's reference runtime or the model runtime;
* ``loop:FILE.py:ATTR``, ``loop:module:ATTR`` or ``loop:FRAMEWORK:FILE.py:ATTR``
  — a real agent loop, the user's agent or a factory of one
  (:mod:`prunecheck.sim.subjects.loops.target` loads it);
* ``loop:process:MANIFEST.toml`` — a black-box agent in any language, run
  as a subprocess against prunecheck's fake model endpoint, as its manifest
  says (:mod:`prunecheck.sim.subjects.blackbox`).

:func:`parse_spec` reads a spec into a :class:`PolicySpec`; everything that
needs to know what a spec names (loading, sweeps, reproductions, reports,
the ``--format`` option, the agent-loop harness) asks it, so the syntax has
one set of rules and one parser (a test holds that no other module splits a
spec).

>>> parse_spec("mypkg.trim:select").kind
<SpecKind.ATTRIBUTE: 'attribute'>
>>> spec = parse_spec("policies/trim.py:trim@anthropic")
>>> spec.where, spec.attr, spec.format, spec.is_file
('policies/trim.py', 'trim', 'anthropic', True)
>>> parse_spec("runtime:guard:recency").inner.kind
<SpecKind.BUILTIN: 'builtin'>
>>> loop = parse_spec("loop:langgraph:app/agent.py:build")
>>> loop.kind, loop.adapter, loop.where, loop.attr
(<SpecKind.LOOP: 'loop'>, 'langgraph', 'app/agent.py', 'build')
>>> box = parse_spec("loop:process:agents/notes/agent.toml")
>>> box.kind, box.adapter, box.where, box.attr
(<SpecKind.LOOP: 'loop'>, 'process', 'agents/notes/agent.toml', '')
>>> with_format("my_trim.py:trim", "openai"), with_format("recency", "openai")
('my_trim.py:trim@openai', 'recency')
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from prunecheck.model.errors import PolicyError
from prunecheck.model.observed import OBSERVED_PREFIX
from prunecheck.model.policies import BUILTINS
from prunecheck.model.provider import Provider
from prunecheck.sim.subjects.catalog import ADAPTERS

__all__ = [
    "FORMATS",
    "LOOP_FRAMEWORKS",
    "LOOP_PREFIX",
    "PROCESS",
    "RUNTIME_PREFIX",
    "PolicySpec",
    "SpecKind",
    "is_file_reference",
    "is_loop_spec",
    "list_format",
    "parse_spec",
    "parse_spec_or_none",
    "policy_file",
    "split_framework",
    "split_reference",
    "user_code_of",
    "with_format",
]

#: The message formats a list function may take (``…@openai``): the two
#: message shapes list trimmers are written for (the other providers'
#: rules apply through ``--provider``).
FORMATS = (Provider.ANTHROPIC.value, Provider.OPENAI.value)
#: What starts a runtime spec.
RUNTIME_PREFIX = "runtime:"
#: What starts an agent-loop spec.
LOOP_PREFIX = "loop:"
#: The frameworks whose agent loops prunecheck drives (``loop:FRAMEWORK:...``).
LOOP_FRAMEWORKS = (
    "pydantic-ai", "openai-agents", "langgraph", "autogen", "strands", "pyautogen", "maf", "adk",
    "llamaindex-openai-agent", "llamaindex",
)  # fmt: skip
#: The loop "framework" of a black-box agent: ``loop:process:MANIFEST.toml``.
PROCESS = "process"
_LOOP_USAGE = (
    "must be loop:FILE.py:ATTR, loop:module:ATTR, loop:FRAMEWORK:FILE.py:ATTR "
    "or loop:process:MANIFEST.toml."
)
_RUNTIME_USAGE = (
    "must be runtime:FILE.py:CLASS, runtime:module:CLASS, runtime:guard:POLICY "
    "or runtime:model:POLICY."
)


class SpecKind(Enum):
    """What a spec names."""

    BUILTIN = "builtin"
    ATTRIBUTE = "attribute"  # module:attr, file.py:attr — a select policy
    LIST = "list"  # module:attr@format — a list function
    FRAMEWORK = "framework"  # ADAPTER:key=value,...
    RUNTIME = "runtime"  # runtime:FILE.py:CLASS, runtime:module:CLASS
    GUARD_RUNTIME = "guard_runtime"  # runtime:guard:POLICY
    MODEL_RUNTIME = "model_runtime"  # runtime:model:POLICY
    OBSERVED = "observed"  # observed:@#T evict #L ... (an imported log's removals)
    LOOP = "loop"  # loop:[FRAMEWORK:]FILE.py:ATTR, loop:module:ATTR (a real agent loop)

    @property
    def is_runtime(self) -> bool:
        """Whether the spec names a runtime under test (``runtime:…``)."""
        return self in (SpecKind.RUNTIME, SpecKind.GUARD_RUNTIME, SpecKind.MODEL_RUNTIME)

    @property
    def owns_placement(self) -> bool:
        """Whether the spec's runtime decides its own gate, budget-check
        placement and retries (your runtime, or the guarded reference one),
        so that those knobs of a run do not apply to it."""
        return self in (SpecKind.RUNTIME, SpecKind.GUARD_RUNTIME)


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """A parsed spec.

    Attributes
    ----------
    text : str
        The spec as written.
    kind : SpecKind
        What it names.
    where : str
        The module or file of user code (ATTRIBUTE, LIST, RUNTIME).
    attr : str
        The attribute (dotted) in ``where``.
    format : str or None
        A list function's provider format (LIST).
    adapter : str
        A framework adapter's name (FRAMEWORK), or the framework a loop spec
        names (LOOP; empty: detected when loaded).
    settings : str
        A framework adapter's ``key=value,...`` text (FRAMEWORK).
    inner : PolicySpec or None
        The policy a ``runtime:guard:`` or ``runtime:model:`` spec wraps.
    """

    text: str
    kind: SpecKind
    where: str = ""
    attr: str = ""
    format: str | None = None
    adapter: str = ""
    settings: str = ""
    inner: PolicySpec | None = None

    @property
    def is_file(self) -> bool:
        """Whether ``where`` is a file path rather than a module name."""
        return bool(self.where) and is_file_reference(self.where)

    @property
    def reference(self) -> str:
        """``where:attr``, the user code's address without a format."""
        return f"{self.where}:{self.attr}"

    @property
    def tail(self) -> str:
        """The spec after its file or module part (``:attr@format``), so a
        moved file keeps its attribute and format: ``new_path + tail``."""
        return self.text[len(self.where) :] if self.where else ""

    @property
    def list_format(self) -> str | None:
        """The message format the policy takes: a list function's own, a
        framework adapter's (OpenAI's), None for any other policy."""
        if self.kind is SpecKind.FRAMEWORK:
            return Provider.OPENAI.value
        return self.format


def is_file_reference(where: str) -> bool:
    """Whether the part before a spec's colon is a file, not a module."""
    return where.endswith(".py") or "/" in where or "\\" in where


def split_framework(text: str) -> tuple[str, str]:
    """``(adapter, settings)`` of ``ADAPTER:key=value,...`` (the first colon
    splits; the settings may hold more colons, as paths do)."""
    adapter, _, settings = text.partition(":")
    return adapter, settings


def split_reference(text: str) -> tuple[str, str]:
    """``(where, attr)`` of ``module:attr`` or ``file.py:attr``: the *last*
    colon splits (a Windows path keeps its drive); either may be empty if
    the text is malformed, which the caller reports in its own words."""
    where, _, attr = text.rpartition(":")
    return where, attr


def parse_spec(text: str) -> PolicySpec:
    """Read a spec (see the module notes).

    Raises
    ------
    PolicyError
        if ``text`` is none of the forms, lacks a module or attribute, or
        names an unknown list format.
    """
    if text.startswith(RUNTIME_PREFIX):
        return _runtime(text)
    if is_loop_spec(text):
        return _loop(text)
    if text in BUILTINS:
        return PolicySpec(text, SpecKind.BUILTIN)
    if text.startswith(OBSERVED_PREFIX):
        return PolicySpec(text, SpecKind.OBSERVED)
    adapter, settings = split_framework(text)
    if ":" in text and adapter in ADAPTERS:
        return PolicySpec(text, SpecKind.FRAMEWORK, adapter=adapter, settings=settings)
    if ":" not in text:
        raise PolicyError(
            f"policy spec {text!r}",
            "is neither a built-in policy nor of the form module:attr or file.py:attr.",
            f"built-ins: {', '.join(BUILTINS)}; run 'prunecheck policies' to list them.",
        )
    where, attr = split_reference(text)
    fmt: str | None = None
    if "@" in attr:
        attr, _, fmt = attr.partition("@")
        if fmt not in FORMATS:
            raise PolicyError(
                f"policy spec {text!r}",
                f"list format {fmt!r} is unknown.",
                f"end the spec with @{' or @'.join(FORMATS)}.",
            )
    if not where or not attr:
        raise PolicyError(
            f"policy spec {text!r}",
            "needs both a module (or file) and an attribute, as module:attr.",
            "for example mypkg.trim:select.",
        )
    kind = SpecKind.ATTRIBUTE if fmt is None else SpecKind.LIST
    return PolicySpec(text, kind, where=where, attr=attr, format=fmt)


def _runtime(text: str) -> PolicySpec:
    rest = text[len(RUNTIME_PREFIX) :]
    kind, _, inner = rest.partition(":")
    if kind in ("guard", "model") and inner:
        wraps = SpecKind.GUARD_RUNTIME if kind == "guard" else SpecKind.MODEL_RUNTIME
        return PolicySpec(text, wraps, inner=parse_spec(inner))
    where, attr = split_reference(rest)
    if not where or not attr:
        raise PolicyError(
            f"runtime spec {text!r}",
            _RUNTIME_USAGE,
            "for example runtime:examples/agent_loop.py:NaiveLoop.",
        )
    return PolicySpec(text, SpecKind.RUNTIME, where=where, attr=attr)


def is_loop_spec(text: str) -> bool:
    """Whether ``text`` names an agent loop (``loop:…``)."""
    return text.startswith(LOOP_PREFIX)


def _loop(text: str) -> PolicySpec:
    rest = text[len(LOOP_PREFIX) :]
    framework = ""
    head, sep, tail = rest.partition(":")
    if sep and head == PROCESS:
        if not tail.endswith(".toml"):
            raise PolicyError(
                f"loop spec {text!r}",
                "a black-box agent is named by its manifest, a .toml file.",
                "for example loop:process:examples/blackbox/py_openai/agent.toml.",
            )
        return PolicySpec(text, SpecKind.LOOP, where=tail, adapter=PROCESS)
    if sep and head in LOOP_FRAMEWORKS:
        framework, rest = head, tail
    where, attr = split_reference(rest)
    if not where or not attr:
        raise PolicyError(
            f"loop spec {text!r}",
            _LOOP_USAGE,
            "for example loop:examples/loops/fake_agent.py:agent.",
        )
    return PolicySpec(text, SpecKind.LOOP, where=where, attr=attr, adapter=framework)


def parse_spec_or_none(text: str) -> PolicySpec | None:
    """The parsed spec, or None if it is malformed (loading will say why)."""
    try:
        return parse_spec(text)
    except PolicyError:
        return None


def with_format(text: str, fmt: str | None) -> str:
    """``text`` naming a list function of format ``fmt``: unchanged if
    ``fmt`` is None or the spec is not a plain ``module:attr`` (a built-in,
    a framework adapter, a spec that already names a format, a runtime)."""
    spec = parse_spec_or_none(text)
    if not fmt or spec is None or spec.kind is not SpecKind.ATTRIBUTE:
        return text
    return f"{text}@{fmt}"


def list_format(text: str) -> str | None:
    """The message format of a list-function spec (``…@openai``; a
    framework adapter's is OpenAI's), or None for any other policy."""
    spec = parse_spec_or_none(text)
    return spec.list_format if spec is not None else None


def user_code_of(text: str) -> PolicySpec | None:
    """The parsed spec if it names a user's policy or list function
    (``module:attr``, ``file.py:attr``, with or without a format), else None
    (a built-in, a framework adapter, a runtime, a malformed spec)."""
    spec = parse_spec_or_none(text)
    if spec is None or spec.kind not in (SpecKind.ATTRIBUTE, SpecKind.LIST):
        return None
    return spec


def policy_file(text: str) -> Path | None:
    """The user's file a policy spec names (``file.py:attr``, with or without
    a format), or None (a built-in, a module, a framework adapter, a runtime)."""
    spec = user_code_of(text)
    return Path(spec.where) if spec is not None and spec.is_file else None
