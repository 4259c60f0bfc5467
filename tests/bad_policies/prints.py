"""A policy, a list function and a runtime that print by every means — to
``sys.stdout``, to ``sys.__stdout__`` and to file descriptor 1 — at import
and in every call (issue 36: in-process, with the cage off, none of it may
reach prunecheck's standard output)."""

from __future__ import annotations

import os
import sys
from typing import Any


def _say(where: str) -> None:
    print(f"POLICY-STDOUT print {where}")
    print(f"POLICY-STDOUT __stdout__ {where}", file=sys.__stdout__)
    os.write(1, f"POLICY-STDOUT fd {where}\n".encode())


_say("import")


def select(view: object, need: int) -> list[str]:
    _say("select")
    return []


def trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    _say("trim")
    return messages


class Runtime:
    """Says everything it is fed, sends nothing."""

    def __init__(self, budget: int = 0, hard_ceiling: int = 0) -> None:
        _say("build")

    def feed(self, stimulus: object) -> None:
        _say("feed")

    def request(self) -> list[dict[str, Any]]:
        _say("request")
        return []

    def executions(self) -> list[object]:
        return []
