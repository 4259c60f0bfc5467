"""A pydantic-ai agent with ``Hooks`` that only log: nothing rewrites a request.

Its ``after_model_request`` hook logs the usage of each response; no
``before_model_request`` is registered.

Expected: no trim hook (nothing of the user's rewrites the messages sent).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import Hooks

log = logging.getLogger("billing-agent")
hooks = Hooks()


@hooks.on.after_model_request
async def log_usage(ctx: RunContext[Any], *, request_context: Any, response: Any) -> Any:
    log.info("model answered: %s", getattr(response, "usage", None))
    return response


agent = Agent("openai:gpt-4.1", instructions="You answer billing questions.", capabilities=[hooks])


@agent.tool_plain
def get_invoice(invoice_id: str) -> str:
    """Get an invoice."""
    raise NotImplementedError("calls the billing service")
