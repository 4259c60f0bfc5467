"""Held back (written last; prunecheck not changed for it): a pydantic-ai
sync history processor taking the ``RunContext`` that clears old tool outputs.

A plain ``def`` processor with a ``RunContext`` parameter (pydantic-ai runs
it in a worker thread) that, once the run has made more than 2 model
requests (``ctx.run_step``), replaces the content of every tool return but
those of the last response by ``"[output removed to save tokens]"``: each
call keeps its result, honestly marked.  The tools are sync too.

Expected: no hang, a real verdict: **safe**.
"""

from dataclasses import replace

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart

REMOVED = "[output removed to save tokens]"


def drop_old_outputs(ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
    if ctx.run_step <= 2:
        return messages
    last = max((i for i, m in enumerate(messages) if isinstance(m, ModelResponse)), default=0)
    out: list[ModelMessage] = []
    for i, message in enumerate(messages):
        if i < last and isinstance(message, ModelRequest):
            message = replace(
                message,
                parts=[
                    replace(p, content=REMOVED) if isinstance(p, ToolReturnPart) else p
                    for p in message.parts
                ],
            )
        out.append(message)
    return out


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a DevOps assistant.",
    capabilities=[ProcessHistory(drop_old_outputs)],
    defer_model_check=True,
)


@agent.tool_plain
def kubectl_get(resource: str, namespace: str) -> str:
    """List Kubernetes resources."""
    raise NotImplementedError("runs kubectl")


@agent.tool_plain
def kubectl_logs(pod: str, namespace: str) -> str:
    """Read a pod's logs."""
    raise NotImplementedError("runs kubectl")
