"""The keep-last filter of ``openai_agents_keep_last.py`` behind prunecheck's
commit guard (``prunecheck.guard.ListGuard``): the guard reads the model
input's structure (a batch's ``function_call`` items and their outputs are
one unit), asks the trimmer what to drop when the input is over budget, and
lets only whole, closed units go.  Check it with::

    prunecheck check loop:examples/loops/openai_agents_guarded.py:app
"""

from __future__ import annotations

from typing import Any

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

from prunecheck.guard import HardCeilingExceeded, ListGuard
from prunecheck.guard.readers import Item

__all__ = ["app", "read_group"]

Group = list[Any]  # one message: a batch's consecutive function_call items, or one item


def read_group(group: Group) -> Item:
    """The structure of one group of input items, for the guard."""
    first = group[0] if isinstance(group[0], dict) else {}
    kind = first.get("type")
    if kind == "function_call":
        ids = tuple(str(i["call_id"]) for i in group)
        text = " ".join(f"{i.get('name')} {i.get('arguments')}" for i in group)
        return Item("assistant", calls=ids, text=text)
    if kind == "function_call_output":
        return Item("tool", answers=(str(first["call_id"]),), text=str(first.get("output")))
    content = first.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return Item(str(first.get("role", "user")), text=str(content or ""))


def _groups(items: list[Any]) -> list[Group]:
    out: list[Group] = []
    for item in items:
        is_call = isinstance(item, dict) and item.get("type") == "function_call"
        if is_call and out and out[-1][0].get("type") == "function_call":
            out[-1].append(item)
        else:
            out.append([item])
    return out


def keep_last(groups: list[Group]) -> list[Group]:
    """The plain trimmer: the last 6 messages."""
    return groups[-6:]


@function_tool
async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


@function_tool(timeout=30)
async def run_tests(target: str) -> str:
    """Run the test suite on a target (gives up after 30 s)."""
    raise NotImplementedError("runs pytest in the real app")


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and a run config whose input filter trims through the guard."""
    guard = ListGuard(keep_last, format="groups", reader=read_group, budget=400)

    def guarded(data: CallModelData[None]) -> ModelInputData:
        groups = _groups(list(data.model_data.input))
        try:
            kept = guard(groups)
        except HardCeilingExceeded as exc:  # over the ceiling: the safe list, over budget
            kept = list(exc.messages or groups)
        items = [item for group in kept for item in group]
        return ModelInputData(input=items, instructions=data.model_data.instructions)

    agent = Agent(
        name="coder",
        instructions="You are a coding assistant. Use the tools.",
        model="gpt-5.2",
        tools=[read_file, run_tests],
    )
    return agent, RunConfig(call_model_input_filter=guarded)
