"""What every provider's rendering writes for one of our messages: its
text, the tool a call names and the call a result answers.

A cleared message reads ``"[cleared]"``; a summary ``"[summary of N
messages] ..."``; an empty text ``"(<id>)"``; a call unknown to ``tools``
reads ``read_file`` of ``"<call id>.txt"``.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from prunecheck.model.context import Message

__all__ = ["DEFAULT_TOOL", "Tools", "assistant_text", "call", "call_id", "text"]

DEFAULT_TOOL = "read_file"
#: Call id -> (tool name, argument path): the input of each call.
Tools = Mapping[str, tuple[str, str]]


def text(message: Message) -> str:
    """The text a body shows for ``message``."""
    shown = "[cleared]" if message.cleared else (message.text or f"({message.id})")
    if message.summary_of:
        shown = f"[summary of {len(message.summary_of)} messages] {shown}"
    return shown


def assistant_text(message: Message) -> str | None:
    """The assistant's text, or None for a bare tool call."""
    if message.tool_calls and not message.cleared and not message.text:
        return None
    return text(message)


def call(cid: str, tools: Tools) -> tuple[str, str]:
    """(tool name, argument path) of call ``cid``."""
    return tools.get(cid, (DEFAULT_TOOL, f"{cid}.txt"))


def call_id(message: Message) -> str:
    """The call a tool message answers; ValueError if it answers none."""
    if message.call_id is None:
        raise ValueError(f"tool message {message.id!r} answers no call (call_id is None)")
    return message.call_id
