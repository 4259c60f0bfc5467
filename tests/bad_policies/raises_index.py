"""User code that raises ``IndexError`` as real code does — an index past
the end — in a policy, a list function and a runtime under test (issue 36:
the paragraph names the file, the line and the code)."""

from __future__ import annotations

from typing import Any


def select(view: Any, need: int) -> list[str]:
    ids = [m.id for m in view.messages]
    return [ids[len(ids) + 5]]


def trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [messages[len(messages) + 5]]


class Runtime:
    """Breaks on the third thing it is fed."""

    def __init__(self, budget: int = 0, hard_ceiling: int = 0) -> None:
        self.fed: list[object] = []

    def feed(self, stimulus: object) -> None:
        self.fed.append(stimulus)
        self.fed[3 - len(self.fed) + 5]

    def request(self) -> list[dict[str, Any]]:
        return []

    def executions(self) -> list[object]:
        return []
