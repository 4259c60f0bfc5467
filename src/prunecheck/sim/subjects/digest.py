"""A policy's source digest: what changed when a policy's code changed.

``regress`` records it in a baseline (so that a changed file is reported as
a change, not as "nothing"), and the failure database records it with each
saved counterexample.  The digest is the SHA-256 of the source a spec
names: the file of ``file.py:attr`` (or of ``runtime:FILE.py:CLASS``), the
module file of ``module:attr`` (found without importing it), the
settings and any user file of a framework spec, and prunecheck's own
policies module for a built-in.  A source that cannot be read gives the
digest of the spec text alone, marked so.

>>> policy_digest("recency") == policy_digest("recency")
True
>>> policy_digest("no/such/file.py:select").startswith("unread:")
True
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from prunecheck.sim.subjects.policy_spec import (
    PolicySpec,
    SpecKind,
    parse_spec_or_none,
    split_reference,
)

__all__ = ["policy_digest", "source_of"]

_MODEL_POLICIES = Path(__file__).resolve().parent.parent.parent / "model" / "policies.py"


def _module_file(name: str) -> Path | None:
    try:
        found = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    origin = getattr(found, "origin", None)
    return Path(origin) if isinstance(origin, str) and origin.endswith(".py") else None


def source_of(spec: str) -> Path | None:
    """The file holding the code a spec names, or None (nothing readable)."""
    parsed: PolicySpec | None = parse_spec_or_none(spec)
    if parsed is None:
        return None
    if parsed.kind is SpecKind.BUILTIN:
        return _MODEL_POLICIES
    if parsed.kind in (SpecKind.GUARD_RUNTIME, SpecKind.MODEL_RUNTIME) and parsed.inner:
        return source_of(parsed.inner.text)
    if parsed.kind is SpecKind.FRAMEWORK:
        # a framework spec may name a user's file in its settings (processor=x.py:fn)
        for part in parsed.settings.split(","):
            value = part.partition("=")[2]
            if ".py:" in value:
                return Path(split_reference(value)[0])
        return None
    if not parsed.where:
        return None
    if parsed.is_file:
        return Path(parsed.where)
    return _module_file(parsed.where)


def policy_digest(spec: str) -> str:
    """``sha256:<16 hex>`` of the spec's source (see the module's doc), or
    ``spec:<16 hex>`` of the spec text when it names no source file, or
    ``unread:<16 hex>`` when its file cannot be read.  A file's digest is of
    its content alone, however the spec names it."""
    path = source_of(spec)
    text = hashlib.sha256(spec.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    if path is None:
        return f"spec:{text}"
    try:
        source = path.read_bytes().replace(b"\r\n", b"\n")
    except OSError:
        return f"unread:{text}"
    return f"sha256:{hashlib.sha256(source).hexdigest()[:16]}"
