"""A weather assistant that keeps only the last items of its session
(openai-agents-python issue 4322): ``RunConfig(session_settings=
SessionSettings(limit=...))`` reads the last N stored items on every turn."""

from agents import Agent, RunConfig, function_tool
from agents.memory import SessionSettings


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"It is sunny in {city}."


agent = Agent(
    name="weather",
    instructions="Answer weather questions. Use get_weather.",
    model="gpt-4.1",
    tools=[get_weather],
)

run_config = RunConfig(session_settings=SessionSettings(limit=2))


def app() -> tuple[Agent, RunConfig]:
    """The agent and the run config the application runs it with."""
    return agent, run_config
