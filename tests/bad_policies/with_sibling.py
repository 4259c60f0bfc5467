"""A policy that imports a module sitting next to it."""

from sibling_helper import oldest_first


def select(view, need):
    return oldest_first(view, need)
