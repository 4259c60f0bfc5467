"""An OpenAI Agents SDK agent on a custom session that trims: UNSAFE.

A ``SQLiteSession`` subclass whose ``get_items`` hands the runner only the
last 8 items of the conversation, a common way to cap the history the SDK
prepends to each run.  It counts items, so the cut can fall between a
``function_call`` and its ``function_call_output``: the input then starts
with an output whose call is gone (400 from the Responses API).  A user
expects prunecheck to run the agent on this session (not on its own
``SQLiteSession``) and to judge the session's trimming.

``app`` returns what the app passes to ``Runner.run``: the agent, its run
config and the session (``Runner.run(agent, text, run_config=..., session=...)``).

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from agents import Agent, RunConfig, SQLiteSession, TResponseInputItem, function_tool


class LastNSession(SQLiteSession):
    """A SQLite session that returns only the most recent ``keep`` items."""

    def __init__(self, session_id: str, db_path: str = ":memory:", keep: int = 8) -> None:
        super().__init__(session_id, db_path)
        self.keep = keep

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = await super().get_items(limit)
        return items[-self.keep :]


@function_tool
def get_balance(account_id: str) -> str:
    """Get an account's balance."""
    raise NotImplementedError("calls the bank API")


@function_tool
def list_transactions(account_id: str, days: int) -> str:
    """List an account's recent transactions."""
    raise NotImplementedError("calls the bank API")


agent = Agent(
    name="banker",
    instructions="You answer questions about the customer's accounts.",
    model="gpt-4.1",
    tools=[get_balance, list_transactions],
)


def app() -> tuple[Agent[None], RunConfig, LastNSession]:
    """The agent, its run config and the conversation's session."""
    return agent, RunConfig(), LastNSession("customer-42")
