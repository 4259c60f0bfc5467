"""Held back, round 34 (written last; prunecheck not changed for it): a
LlamaIndex ``FunctionAgent`` whose memory summarizes what no longer fits.

``ChatSummaryMemoryBuffer.from_defaults(llm=..., token_limit=3_000)``: when
the conversation passes 3,000 tokens (LlamaIndex's default tokenizer; far
above a default tool output), its ``get`` keeps the newest messages that fit,
moves any assistant or tool message at the front of them to the part to
summarize (so the kept part starts at a user's message: no call is kept
without its result, nor a result without its call), and replaces the rest
with one summary written by a second model, a small Anthropic model named by
its string.  The summary is a whole-units summary, what a summarizer is for.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the memory summarized in some schedules; its summarizer's model answered by
prunecheck, never by Anthropic): no broken pair, no ``synthesized_result``.
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatSummaryMemoryBuffer
from llama_index.llms.anthropic import Anthropic


def lookup_patient(patient_id: str) -> str:
    """Look up a patient's record."""
    raise NotImplementedError("calls the records system")


def list_appointments(patient_id: str) -> str:
    """List a patient's upcoming appointments."""
    raise NotImplementedError("calls the scheduling system")


memory = ChatSummaryMemoryBuffer.from_defaults(
    llm=Anthropic(model="claude-haiku-4-5"),
    token_limit=3_000,
)

agent = FunctionAgent(
    tools=[lookup_patient, list_appointments],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You help the front desk with patients' appointments.",
)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, memory=memory))
