"""An agent loop is judged by the provider its model really talks to (issue 31).

The provider is read from the user's model as configured
(:mod:`prunecheck.sim.subjects.loops.frameworks.model_providers`): a model
string's prefix, the class of a model or client object and the settings that
switch its API.  The judge then applies that provider's rules alone: a
history one provider accepts and another rejects is flagged only for an
agent on the provider that rejects it, with that provider's text; a model it
does not know keeps the common set (OpenAI Chat Completions and Anthropic)
and the verdict says so.  Agents are written here as users write them (a
provider string at module level, no key in the environment).
"""

from __future__ import annotations

import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loops_play import Drive, search_call

from prunecheck.sim.subjects.loops.frameworks.model_providers import (
    model_provider,
    models_provider,
)
from prunecheck.sim.subjects.loops.judge import judge_request, judged_by, rules_line
from prunecheck.sim.subjects.loops.ledger import Ledger
from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, Step, User

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")  # fmt: skip


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A CI job without provider keys."""
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    yield


def _call(cid: str) -> dict[str, object]:
    return {"id": cid, "type": "function", "function": {"name": "search", "arguments": "{}"}}


#: What a trim that "resets the context" sends: the system prompt, no conversation.
#: OpenAI Chat Completions and Responses take it; Anthropic, Gemini and Bedrock refuse it.
EMPTIED: dict[str, object] = {"messages": [{"role": "system", "content": "You help."}]}

#: A call turn right after the system prompt, its result after it (a keep-last-two
#: trim that dropped the user's message): OpenAI and Anthropic accept it, Gemini
#: and Bedrock do not.
CALL_FIRST: dict[str, object] = {"messages": [
    {"role": "system", "content": "s"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_1")]},
    {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
]}  # fmt: skip

#: A user's message between a call and its result: Chat Completions rejects it,
#: Anthropic (one user turn) and Responses (the output names an earlier call) do not.
USER_BETWEEN: dict[str, object] = {"messages": [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_1")]},
    {"role": "user", "content": "and?"},
    {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
]}  # fmt: skip


def _rejected_by(body: dict[str, object], providers: frozenset[str]) -> set[str]:
    found = judge_request(body, Ledger(), 2, trims=True, providers=providers)
    return {i.reason.partition(":")[0] for i in found if i.kind.value == "provider_rejection"}


# ----------------------------------------------------------------- the reader
@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai:gpt-4o", "openai"),  # a prefix alone (pydantic-ai reads the class it builds)
        ("openai-chat:gpt-4o", "openai"),
        ("openai-responses:gpt-4o", "openai-responses"),
        ("anthropic:claude-sonnet-4-5", "anthropic"),
        ("google-gla:gemini-2.5-flash", "gemini"),
        ("google:gemini-2.5-flash", "gemini"),
        ("bedrock:us.amazon.nova-2-lite-v1:0", "bedrock"),
        ("mistral:mistral-large-latest", "mistral"),
        ("anthropic/claude-sonnet-4-5", "anthropic"),  # LiteLLM's spelling
        ("gemini/gemini-2.5-flash", "gemini"),
        ("claude-sonnet-4-5", "anthropic"),  # init_chat_model infers it from the name
        ("gpt-4.1", "openai"),
        ("groq:llama-3.3-70b", ""),  # a provider prunecheck has no rules for
        ("my-local-model", ""),
    ],
)
def test_a_model_string_names_the_provider_it_talks_to(model: str, provider: str) -> None:
    found = model_provider(model)
    assert found.names == ({provider} if provider else set())
    assert repr(model) in found.source


def _stand_in(module: str, name: str, **attrs: Any) -> object:
    """An object of a class named and placed as a package not installed here places it."""
    return type(name, (), {"__module__": module, **attrs})()


@pytest.mark.parametrize(
    ("obj", "provider"),
    [
        (_stand_in("langchain_anthropic.chat_models", "ChatAnthropic"), "anthropic"),
        (_stand_in("langchain_google_genai.chat_models", "ChatGoogleGenerativeAI"), "gemini"),
        (
            _stand_in("langchain_aws.chat_models.bedrock_converse", "ChatBedrockConverse"),
            "bedrock",
        ),
        (_stand_in("langchain_aws.chat_models.bedrock", "ChatBedrock"), ""),  # InvokeModel
        (_stand_in("agent_framework_anthropic._chat_client", "AnthropicClient"), "anthropic"),
        (
            _stand_in(
                "agents.extensions.models.litellm_model",
                "LitellmModel",
                model="anthropic/claude-sonnet-4-5",
            ),
            "anthropic",
        ),
        (
            _stand_in(
                "langchain_core.runnables.base",
                "RunnableBinding",
                bound=_stand_in("langchain_anthropic.chat_models", "ChatAnthropic"),
            ),
            "anthropic",
        ),
        (_stand_in("my_app.models", "MyModel"), ""),
    ],
)
def test_a_model_class_names_the_provider_it_talks_to(obj: object, provider: str) -> None:
    assert model_provider(obj).names == ({provider} if provider else set())


def test_langchains_chat_openai_speaks_chat_completions_unless_told_responses() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="gpt-4o", api_key="sk-placeholder")  # type: ignore[arg-type]
    responses = ChatOpenAI(model="gpt-4o", api_key="sk-placeholder", use_responses_api=True)  # type: ignore[arg-type]
    assert model_provider(chat).names == {"openai"}
    assert model_provider(responses).names == {"openai-responses"}
    assert model_provider(responses).source == "ChatOpenAI(use_responses_api=True)"
    bound = chat.bind_tools([])
    assert model_provider(bound).names == {"openai"}


def test_pydantic_ai_model_classes_name_their_api() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(api_key="sk-placeholder")
    assert model_provider(OpenAIChatModel("gpt-4o", provider=provider)).names == {"openai"}
    responses = OpenAIResponsesModel("gpt-4o", provider=provider)
    assert model_provider(responses).names == {"openai-responses"}
    double = model_provider(FunctionModel(lambda m, i: None))  # type: ignore[arg-type, return-value]
    assert double.names == set() and "FunctionModel" in double.source


def test_the_openai_agents_sdks_models_name_their_api() -> None:
    pytest.importorskip("agents")
    from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="sk-placeholder")
    chat = OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=client)
    assert model_provider(chat).names == {"openai"}
    responses = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
    assert model_provider(responses).names == {"openai-responses"}


def test_several_models_one_unknown_keep_the_common_set() -> None:
    known = model_provider("anthropic:claude-sonnet-4-5")
    both = models_provider(["anthropic:claude-sonnet-4-5", _stand_in("my_app", "Mine")])
    assert known.names == {"anthropic"}
    assert both.names == {"anthropic", "openai"}  # the unknown one: OpenAI's and Anthropic's too


# ------------------------------------------------------------------ the judge
@pytest.mark.parametrize(
    ("body", "rejecting"),
    [
        (EMPTIED, {"anthropic", "gemini", "bedrock"}),
        (CALL_FIRST, {"gemini", "bedrock"}),
        (USER_BETWEEN, {"openai", "gemini", "mistral", "bedrock"}),
    ],
)
@pytest.mark.parametrize(
    "provider", ["openai", "openai-responses", "anthropic", "gemini", "bedrock", "mistral"]
)
def test_a_history_is_flagged_only_for_an_agent_on_a_provider_that_rejects_it(
    body: dict[str, object], rejecting: set[str], provider: str
) -> None:
    got = _rejected_by(body, frozenset({provider}))
    assert got == ({provider} if provider in rejecting else set())


def test_an_unknown_provider_is_judged_by_the_common_set_and_the_verdict_says_so() -> None:
    assert [p.value for p in judged_by(frozenset())] == ["openai", "anthropic"]
    assert _rejected_by(EMPTIED, frozenset()) == {"anthropic"}
    assert _rejected_by(USER_BETWEEN, frozenset()) == {"openai"}
    said = rules_line(frozenset(), "FunctionModel: a model whose provider prunecheck does not know")
    assert "OpenAI Chat Completions and Anthropic Messages" in said
    assert "not known (FunctionModel" in said
    from prunecheck.model.provider import PROVIDERS, Provider

    title = PROVIDERS[Provider.GEMINI].title
    assert rules_line(frozenset({"gemini"}), "GoogleModel") == (
        f"provider rules: {title}, the provider the agent's model talks to (GoogleModel)"
    )


def test_a_whole_call_drop_is_ruled_by_the_provider_that_judged_it() -> None:
    """The narrative's ruling names the provider whose rules accepted the request."""
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd

    first, second = ToolCall("call_1", "search", "{}"), ToolCall("call_2", "search", "{}")
    for providers, accepting in (
        (frozenset({"openai-responses"}), "which OpenAI Responses accepts"),
        (frozenset(), "which OpenAI Chat Completions and Anthropic Messages accept"),
    ):
        ledger = Ledger()
        ledger.issue((first, second), 1)
        ledger.bodies += [
            Body("call_1", 1, BodyEnd.OK, 2, "A"),
            Body("call_2", 1, BodyEnd.OK, 2, "B"),
        ]
        kept = {"messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [_call("call_1")]},
            {"role": "tool", "tool_call_id": "call_1", "content": "A"},
        ]}  # fmt: skip
        assert judge_request(kept, ledger, 3, trims=True, providers=providers) == []
        told = [t for _, t in ledger.rulings]
        assert any("call_2" in t and accepting in t for t in told), told


# --------------------------------------------- user agents, loaded without keys
def _module(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return path


def _load(path: Path, attr: str) -> Any:
    from prunecheck.sim.subjects.loops.target import load_target

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_target(f"loop:{path}:{attr}")


_PA_LAST_TWO = '''
    """Keep the last two messages: a call and its result stay together."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory

    def last_two(messages):
        return messages[-2:]

    def search(query: str) -> str:
        """Search the docs."""
        raise NotImplementedError("calls the search API")

    on_openai = Agent("openai:gpt-4o", instructions="Help.", tools=[search],
                      capabilities=[ProcessHistory(last_two)])
    on_chat = Agent("openai-chat:gpt-4o", instructions="Help.", tools=[search],
                    capabilities=[ProcessHistory(last_two)])
    on_anthropic = Agent("anthropic:claude-sonnet-4-5", instructions="Help.", tools=[search],
                         capabilities=[ProcessHistory(last_two)])
    on_gemini = Agent("google:gemini-2.5-flash", instructions="Help.", tools=[search],
                      capabilities=[ProcessHistory(last_two)])
'''


@pytest.mark.parametrize(
    ("attr", "provider", "source"),
    [
        ("on_openai", "openai-responses", "OpenAIResponsesModel"),  # pydantic-ai's "openai:"
        ("on_chat", "openai", "OpenAIChatModel"),
        ("on_anthropic", "anthropic", "AnthropicModel"),
        ("on_gemini", "gemini", "GoogleModel"),
    ],
)
def test_pydantic_ai_agents_are_judged_by_their_models_provider(
    tmp_path: Path, no_keys: None, attr: str, provider: str, source: str
) -> None:
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.api.loop_verdict import provider_rules

    target = _load(_module(tmp_path, "pa_last_two", _PA_LAST_TWO), attr)
    assert target.adapter.providers(target.target) == {provider}
    assert target.adapter.provider(target.target).source.endswith(source)
    assert provider_rules(target).endswith(
        f"talks to ({target.adapter.provider(target.target).source})"
    )


def test_a_deferred_pydantic_ai_model_string_is_read_as_pydantic_ai_builds_it(
    tmp_path: Path, no_keys: None
) -> None:
    pytest.importorskip("pydantic_ai")
    path = _module(tmp_path, "pa_deferred", '''
        from pydantic_ai import Agent

        agent = Agent("anthropic:claude-sonnet-4-5", defer_model_check=True)
    ''')  # fmt: skip
    target = _load(path, "agent")
    found = target.adapter.provider(target.target)
    assert found.names == {"anthropic"}
    assert found.source == ("model string 'anthropic:claude-sonnet-4-5', which pydantic-ai "
                            "builds as AnthropicModel")  # fmt: skip


def _last_two_run(target: Any, store: Path) -> list[tuple[str, str]]:
    """A search call and its result, then the next request: the trim has dropped
    the user's message, and the call turn comes first."""
    steps: list[Step] = [User("find x"), ReplyStep("", (search_call(1),)),
                         Complete("call_1", "r1")]  # fmt: skip
    store.mkdir()
    with Drive(target.adapter, target.target, store) as drive:
        drive.step(*steps)
        return [(i.reason, i.text) for i in drive.run.incidents if i.kind.value ==
                "provider_rejection"]  # fmt: skip


def test_the_same_trim_is_flagged_on_gemini_and_not_on_openai(
    tmp_path: Path, no_keys: None
) -> None:
    """pydantic-ai's real loop: the keep-last-two trim leaves the call turn
    first, which Gemini refuses (its own text) and OpenAI accepts."""
    pytest.importorskip("pydantic_ai")
    from prunecheck.model.provider import rule

    path = _module(tmp_path, "pa_last_two", _PA_LAST_TWO)
    on_gemini = _last_two_run(_load(path, "on_gemini"), tmp_path / "gemini")
    assert on_gemini == [("gemini:call_out_of_place", rule("gemini.call_out_of_place").template)]
    assert _last_two_run(_load(path, "on_openai"), tmp_path / "openai") == []
    assert _last_two_run(_load(path, "on_anthropic"), tmp_path / "anthropic") == []


_LC_RESET = '''
    """A LangChain agent whose middleware starts over when the history grows."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import before_model
    from langchain_core.messages import RemoveMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    @before_model
    def start_over(state, runtime):
        if any(m.type == "tool" for m in state["messages"]):
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}
        return None

    @tool
    def search(query: str) -> str:
        """Search the docs."""
        raise NotImplementedError("calls the search API")

    on_chat = create_agent(ChatOpenAI(model="gpt-4o"), tools=[search], middleware=[start_over],
                           system_prompt="Help.")
    on_responses = create_agent(ChatOpenAI(model="gpt-4o", use_responses_api=True),
                                tools=[search], middleware=[start_over], system_prompt="Help.")
    on_string = create_agent("openai:gpt-4o", tools=[search], middleware=[start_over],
                             system_prompt="Help.")

    def factory(model):
        return create_agent(model, tools=[search], middleware=[start_over], system_prompt="Help.")
'''


@pytest.mark.parametrize(
    ("attr", "provider"),
    [
        ("on_chat", {"openai"}),
        ("on_responses", {"openai-responses"}),
        ("on_string", {"openai"}),
        ("factory", set()),
    ],
)
def test_langchain_agents_are_judged_by_their_chat_models_provider(
    tmp_path: Path, no_keys: None, attr: str, provider: set[str]
) -> None:
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    target = _load(_module(tmp_path, "lc_reset", _LC_RESET), attr)
    assert target.adapter.providers(target.target) == provider


def test_an_emptied_request_is_flagged_for_an_unknown_model_not_for_chatopenai(
    tmp_path: Path, no_keys: None
) -> None:
    """LangGraph's real loop: the reset sends the system prompt alone, which
    OpenAI accepts (the ChatOpenAI agent) and Anthropic refuses (the factory's
    model is unknown: both judge)."""
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    path = _module(tmp_path, "lc_reset", _LC_RESET)
    steps: list[Step] = [User("find x"), ReplyStep("", (search_call(1),)),
                         Complete("call_1", "r1")]  # fmt: skip
    found = {}
    for attr in ("on_chat", "factory"):
        target = _load(path, attr)
        (tmp_path / attr).mkdir()
        with Drive(target.adapter, target.target, tmp_path / attr) as drive:
            drive.step(*steps)
            found[attr] = [i.reason for i in drive.run.incidents
                           if i.kind.value == "provider_rejection"]  # fmt: skip
    assert found == {"on_chat": [], "factory": ["anthropic:no_messages"]}


_OA = '''
    """OpenAI Agents SDK agents: the SDK's default model, and Chat Completions."""
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, function_tool
    from agents.models.openai_provider import OpenAIProvider
    from openai import AsyncOpenAI

    @function_tool
    def search(query: str) -> str:
        """Search the docs."""
        raise NotImplementedError("calls the search API")

    default = Agent(name="a", instructions="Help.", tools=[search])
    named = Agent(name="a", instructions="Help.", model="gpt-4.1", tools=[search])
    chat = Agent(name="a", instructions="Help.", tools=[search],
                 model=OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=AsyncOpenAI()))

    def chat_provider():
        return named, RunConfig(model_provider=OpenAIProvider(use_responses=False))
'''


@pytest.mark.parametrize(
    ("attr", "provider"),
    [
        ("default", "openai-responses"),
        ("named", "openai-responses"),
        ("chat", "openai"),
        ("chat_provider", "openai"),
    ],
)
def test_openai_agents_sdk_agents_are_judged_by_their_models_api(
    tmp_path: Path, no_keys: None, attr: str, provider: str
) -> None:
    pytest.importorskip("agents")
    target = _load(_module(tmp_path, "oa_agents", _OA), attr)
    assert target.adapter.providers(target.target) == {provider}
    rejected = _rejected_by(USER_BETWEEN, target.adapter.providers(target.target))
    assert rejected == ({"openai"} if provider == "openai" else set())


_MAF = '''
    """Agent Framework agents on the chat-completions and the responses client."""
    from agent_framework import Agent
    from agent_framework.openai import OpenAIChatClient, OpenAIChatCompletionClient

    on_chat = Agent(client=OpenAIChatCompletionClient(model="gpt-4.1"), instructions="Help.")
    on_responses = Agent(client=OpenAIChatClient(model="gpt-4.1"), instructions="Help.")
'''


@pytest.mark.parametrize(("attr", "provider"), [("on_chat", "openai"),
                                                ("on_responses", "openai-responses")])  # fmt: skip
def test_maf_agents_are_judged_by_their_clients_api(
    tmp_path: Path, no_keys: None, attr: str, provider: str
) -> None:
    pytest.importorskip("agent_framework_openai")
    target = _load(_module(tmp_path, "maf_agents", _MAF), attr)
    assert target.adapter.providers(target.target) == {provider}
    rejected = _rejected_by(USER_BETWEEN, target.adapter.providers(target.target))
    assert rejected == ({"openai"} if provider == "openai" else set())
    assert _rejected_by(EMPTIED, target.adapter.providers(target.target)) == set()
