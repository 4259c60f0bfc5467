"""Stands for a policy file attached to a bug report: importing it leaves a mark."""

import os
from pathlib import Path

Path(os.environ.get("EVIL_MARK", "evil-ran.txt")).write_text("evil.py was imported\n")


def select(view, need):
    return []
