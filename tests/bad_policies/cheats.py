"""Policies that try to corrupt the runtime's accounting or its output."""

import sys


def setattr_frozen(view, need):
    """Shrink every message's tokens in place, then evict nothing."""
    for m in view.messages:
        object.__setattr__(m, "tokens", 0)
    return []


def evict_then_lie(view, need):
    """Evict the oldest non-system message, and zero its tokens so that its
    removal would seem to free nothing."""
    for m in view.messages:
        if m.role != "system" and m.closed:
            object.__setattr__(m, "tokens", 0)
            return [m.id]
    return []


def chatty(view, need):
    print("POLICY-STDOUT " * 20)
    sys.stdout.write("more policy output\n")
    return []


def mutate_view(view, need):
    view.budget = 10**9
    view.used = 0
    return []


def returns_int(view, need):
    return 7


def returns_junk(view, need):
    return [object()]


def unknown_id(view, need):
    return ["no-such-message"]


def raises(view, need):
    raise ValueError("boom")
