"""The user's agent loads and runs offline: placeholder provider keys, outbound
connections refused.

prunecheck replaces an agent's model by a scripted double, but the user's
module is imported as written, and its first line is often
``agent = Agent("openai:gpt-4o", ...)`` (pydantic-ai) or
``create_agent("openai:gpt-4o", ...)`` (LangChain): both build a provider
client at import and refuse to without ``OPENAI_API_KEY`` — which a CI job
has not.  While prunecheck imports the user's module and runs its code
(:func:`offline`, re-entrant):

* every provider credential of :data:`PLACEHOLDERS` is set to
  :data:`PLACEHOLDER` in ``os.environ`` — whether it was set before or not,
  so that a real key cannot leave the process even by a path the guard
  below does not see — and put back as it was afterwards;
* ``socket.socket.connect`` (and ``connect_ex``, and name lookups) refuse
  every address but the machine's own (loopback, Unix sockets) with
  :class:`ConnectionRefused`, a ``ConnectionRefusedError`` saying that
  prunecheck refused it; each attempt is recorded (:attr:`Offline.refused`).

Nothing the user's module does at import or in a run reaches a provider.
:meth:`Offline.line` is the sentence ``check`` and ``search`` print (and
``--json`` carries) saying both facts.  What it cannot see: a subprocess the
user's code starts, or a C library opening its own sockets (neither gets a
real key: the environment a subprocess inherits holds the placeholders).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PLACEHOLDER", "PLACEHOLDERS", "ConnectionRefused", "Offline", "offline"]

#: The value every provider credential has while the user's code runs.
PLACEHOLDER = "prunecheck-placeholder-not-a-key"

#: The environment variables set to :data:`PLACEHOLDER` (the credentials the
#: frameworks' provider clients read at construction; regions and endpoints
#: that a client needs to be built at all get a harmless value of their kind).
PLACEHOLDERS: dict[str, str] = {
    **{
        name: PLACEHOLDER
        for name in (
            "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
            "GROQ_API_KEY", "MISTRAL_API_KEY", "CO_API_KEY", "COHERE_API_KEY",
            "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY", "TOGETHER_API_KEY",
            "FIREWORKS_API_KEY", "CEREBRAS_API_KEY", "AZURE_OPENAI_API_KEY", "HF_TOKEN",
            "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK",
            "PYDANTIC_AI_GATEWAY_API_KEY", "VERCEL_AI_GATEWAY_API_KEY", "OLLAMA_API_KEY",
            "NEBIUS_API_KEY", "SAMBANOVA_API_KEY", "MOONSHOTAI_API_KEY", "DASHSCOPE_API_KEY",
            "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY",
        )
    },
    "AZURE_OPENAI_ENDPOINT": "https://placeholder.invalid",
    "OPENAI_API_VERSION": "2024-10-21",
    "AWS_DEFAULT_REGION": "us-east-1",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",  # the Agents SDK's trace exporter posts to OpenAI
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
}  # fmt: skip


class ConnectionRefused(ConnectionRefusedError):
    """An outbound connection prunecheck refused while the user's code ran."""


@dataclass(slots=True)
class Offline:
    """What :func:`offline` did: the placeholders it set, the connections it refused.

    Attributes
    ----------
    placeholders : tuple[str, ...]
        The credential variables set to :data:`PLACEHOLDER`.
    refused : list[str]
        Each refused address (``host:port``), in order.
    """

    placeholders: tuple[str, ...] = tuple(n for n, v in PLACEHOLDERS.items() if v == PLACEHOLDER)
    refused: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One sentence saying both facts (what ``check`` prints)."""
        tried = (
            f"{len(self.refused)} refused: {', '.join(dict.fromkeys(self.refused))}"
            if self.refused
            else "none attempted"
        )
        return (
            f"offline: the agent was loaded and run with placeholder provider keys "
            f"({', '.join(self.placeholders[:3])} and {len(self.placeholders) - 3} more; "
            f"real keys are never read) and outbound network connections refused ({tried})"
        )

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line(), "placeholder_keys": list(self.placeholders),
                "network": "refused", "refused": list(self.refused)}  # fmt: skip


_LOCK = threading.Lock()
_ACTIVE: list[Offline] = []  # the outermost session first
_SAVED: dict[str, Any] = {}


def _local(host: object) -> bool:
    if not isinstance(host, str):
        return True  # bytes paths of Unix sockets, odd families: not the network
    name = host.split("%", 1)[0].strip("[]").lower()
    if name in ("localhost", "localhost.localdomain", "ip6-localhost", ""):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _refuse(address: object) -> None:
    if isinstance(address, tuple) and address and not _local(address[0]):
        where = f"{address[0]}:{address[1]}" if len(address) > 1 else str(address[0])
        if _ACTIVE:
            _ACTIVE[-1].refused.append(where)
        raise ConnectionRefused(
            f"prunecheck refused the connection to {where}: the agent's code runs "
            "offline under prunecheck (its model is scripted, its provider keys are "
            "placeholders)"
        )


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _refuse(address)
    return _SAVED["connect"](self, address)  # type: ignore[no-any-return]


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _refuse(address)
    return _SAVED["connect_ex"](self, address)  # type: ignore[no-any-return]


def _guarded_getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host is not None:
        _refuse((host, port))
    return _SAVED["getaddrinfo"](host, port, *args, **kwargs)


def _install() -> None:
    _SAVED["environ"] = {name: os.environ.get(name) for name in PLACEHOLDERS}
    os.environ.update(PLACEHOLDERS)
    _SAVED["connect"] = socket.socket.connect
    _SAVED["connect_ex"] = socket.socket.connect_ex
    _SAVED["getaddrinfo"] = socket.getaddrinfo
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo


def _uninstall() -> None:
    socket.socket.connect = _SAVED.pop("connect")  # type: ignore[method-assign]
    socket.socket.connect_ex = _SAVED.pop("connect_ex")  # type: ignore[method-assign]
    socket.getaddrinfo = _SAVED.pop("getaddrinfo")
    for name, value in _SAVED.pop("environ").items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def offline() -> Iterator[Offline]:
    """Run the block with placeholder provider keys and outbound connections
    refused (see the module's docs); the :class:`Offline` record of it.

    Re-entrant: an inner block shares the outermost's record and changes
    nothing more; the outermost puts the environment and the socket module
    back as they were.
    """
    with _LOCK:
        outer = not _ACTIVE
        if outer:
            _install()
            _ACTIVE.append(Offline())
        session = _ACTIVE[0]
    try:
        yield session
    finally:
        if outer:
            with _LOCK:
                _ACTIVE.clear()
                _uninstall()
