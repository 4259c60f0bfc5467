"""Stands for a policy file attached to a bug report: importing it leaves a mark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView

Path(os.environ.get("EVIL_MARK", "evil-ran.txt")).write_text("evil.py was imported\n")


def select(view: ContextView, need: int) -> list[str]:
    return []
