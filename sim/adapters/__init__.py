"""User code: loading policy and runtime specs, list and framework adapters, the cage."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prunecheck.sim.adapters.lists import ListPolicy, list_policy

__all__ = ["ListPolicy", "list_policy"]


def __getattr__(name: str) -> Any:
    # ``from prunecheck.sim.adapters import list_policy`` (its home before 0.2)
    # keeps working without importing the list adapter for every user-code load.
    home = "loader" if name == "adapter_policy" else "lists"
    return getattr(importlib.import_module(f"prunecheck.sim.adapters.{home}"), name)
