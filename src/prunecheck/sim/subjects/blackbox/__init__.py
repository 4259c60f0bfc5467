"""Black-box mode: the agent under test is any program, in any language,
that talks to a model over HTTP and to tools over MCP.

prunecheck owns that boundary: :class:`FakeEndpoint` is a scripted model
endpoint on loopback speaking OpenAI Chat Completions, OpenAI Responses and
Anthropic Messages (streamed or not), which records every request the agent
sends and answers a request the real provider would reject with that
provider's HTTP 400 and exact text.  The MCP tool server
(:mod:`.mcp_server`) runs the agent's tools with the latency, failures,
timeouts and output sizes the harness chooses, and records each tool body
it ran.
"""

from __future__ import annotations

from ..loops.contract import Reply, ToolCall
from .endpoint import FakeEndpoint, Responder, api_of
from .exchange import PROVIDER_OF, Api, Exchange, Outcome, Timing

__all__ = [
    "PROVIDER_OF",
    "Api",
    "Exchange",
    "FakeEndpoint",
    "Outcome",
    "Reply",
    "Responder",
    "Timing",
    "ToolCall",
    "api_of",
]
