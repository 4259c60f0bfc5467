"""A policy that is safe in an agent's first session and unsafe in every
later one (issue 19): its suite reproduction spans a session boundary.

In the first session the context's first message a policy sees (the system
prompt, m0, is protected) is ``m1``, since it frees nothing there; after a
new session it starts with a later id.  Until then it frees nothing; after, it
prunes as ``lowest_salience`` does (blind to units).
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.actions import Action
from prunecheck.model.policies import ContextView, builtin_policy

_UNSAFE = builtin_policy("lowest_salience")


def select(view: ContextView, need: int) -> Iterable[str | Action]:
    if not view.messages or view.messages[0].id in ("m0", "m1"):
        return []
    assert _UNSAFE is not None
    return _UNSAFE.select(view, need)
