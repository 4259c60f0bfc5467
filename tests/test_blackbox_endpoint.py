"""The fake model endpoint, read by the official OpenAI and Anthropic SDKs.

One endpoint serves the whole module (a server thread on loopback); each
test scripts its replies and reads what the SDK parsed, streamed and not,
with one tool call and with many, and checks that a request the provider
would reject comes back as the SDK's ``BadRequestError`` carrying the
provider's exact text (:mod:`prunecheck.model.provider`).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from prunecheck.model.provider import Provider, validate
from prunecheck.sim.subjects.blackbox import (
    Api,
    FakeEndpoint,
    Outcome,
    Reply,
    Timing,
    ToolCall,
    api_of,
)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def _calls(width: int) -> tuple[ToolCall, ...]:
    return tuple(
        ToolCall(f"call_{k}", "read", json.dumps({"path": f"f{k}.txt"})) for k in range(width)
    )


@pytest.fixture(scope="module")
def endpoint() -> Iterator[FakeEndpoint]:
    with FakeEndpoint(answer_timeout=10.0) as server:
        yield server


# The SDKs load when a test first needs them, not when the module is collected:
# every xdist worker collects every test file, and importing openai and
# anthropic there cost each worker about 2.5 s of CPU, also where it ran
# none of these tests.
@pytest.fixture(scope="module")
def openai() -> Any:
    return pytest.importorskip("openai")


@pytest.fixture(scope="module")
def anthropic() -> Any:
    return pytest.importorskip("anthropic")


@pytest.fixture(scope="module")
def chat(endpoint: FakeEndpoint, openai: Any) -> Any:
    return openai.OpenAI(base_url=endpoint.openai_url, api_key="sk-test", max_retries=0, timeout=10)


@pytest.fixture(scope="module")
def claude(endpoint: FakeEndpoint, anthropic: Any) -> Any:
    return anthropic.Anthropic(base_url=endpoint.url, api_key="sk-test", max_retries=0, timeout=10)


USER: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]


@pytest.mark.parametrize("width", [1, 3])
def test_chat_completions_not_streamed(endpoint: FakeEndpoint, chat: Any, width: int) -> None:
    before = len(endpoint.exchanges)
    endpoint.script(Reply(text="", calls=_calls(width)))
    completion = chat.chat.completions.create(model="gpt-4.1", messages=USER, tools=TOOLS)
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    got = [
        (c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls
    ]
    assert got == [(f"call_{k}", "read", {"path": f"f{k}.txt"}) for k in range(width)]
    exchange = endpoint.exchanges[before]
    # the handler settles the outcome once its last byte is written: wait for it
    assert (exchange.api, exchange.stream, exchange.wait(10)) == (Api.CHAT, False, Outcome.ANSWERED)
    assert exchange.body["messages"] == USER and exchange.body["model"] == "gpt-4.1"


@pytest.mark.parametrize("width", [1, 3])
def test_chat_completions_streamed(endpoint: FakeEndpoint, chat: Any, width: int) -> None:
    endpoint.script(Reply(text="Reading.", calls=_calls(width), chunks=3))
    stream = chat.chat.completions.create(
        model="gpt-4.1",
        messages=USER,
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    calls: dict[int, dict[str, str]] = {}
    text, finish, usage = "", None, None
    for chunk in stream:
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or ():
                entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += delta.id or ""
                entry["name"] += (delta.function.name or "") if delta.function else ""
                entry["arguments"] += (delta.function.arguments or "") if delta.function else ""
    assert (text, finish) == ("Reading.", "tool_calls")
    assert [calls[k] for k in sorted(calls)] == [
        {"id": c.id, "name": c.name, "arguments": c.arguments} for c in _calls(width)
    ]
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert endpoint.exchanges[-1].wait(10) is Outcome.ANSWERED and endpoint.exchanges[-1].stream


def test_chat_completions_stream_helper_accumulates(endpoint: FakeEndpoint, chat: Any) -> None:
    """The SDK's own accumulator (``chat.completions.stream``) rebuilds the whole message."""
    endpoint.script(Reply(text="", calls=_calls(2), chunks=4))
    with chat.chat.completions.stream(model="gpt-4.1", messages=USER, tools=TOOLS) as stream:
        final = stream.get_final_completion()
    assert [c.function.arguments for c in final.choices[0].message.tool_calls] == [
        c.arguments for c in _calls(2)
    ]


def _orphan_chat() -> list[dict[str, Any]]:
    return [*USER, {"role": "tool", "tool_call_id": "call_9", "content": "42"}]


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_rejects_like_openai(
    endpoint: FakeEndpoint, chat: Any, openai: Any, stream: bool
) -> None:
    messages = _orphan_chat()
    expected = validate({"messages": messages}, Provider.OPENAI)[0]
    with pytest.raises(openai.BadRequestError) as caught:
        chat.chat.completions.create(model="gpt-4.1", messages=messages, stream=stream)
    assert caught.value.status_code == 400
    assert caught.value.body["message"] == expected.text
    assert caught.value.body["param"] == "messages.[1].role"
    exchange = endpoint.exchanges[-1]
    assert exchange.wait(10) is Outcome.REJECTED and exchange.rejection == expected


def test_a_rejected_request_uses_no_scripted_reply(
    endpoint: FakeEndpoint, chat: Any, openai: Any
) -> None:
    endpoint.script(Reply(text="kept for the next request"))
    with pytest.raises(openai.BadRequestError):
        chat.chat.completions.create(model="gpt-4.1", messages=_orphan_chat())
    done = chat.chat.completions.create(model="gpt-4.1", messages=USER)
    assert done.choices[0].message.content == "kept for the next request"


def test_harness_answers_a_pending_request(endpoint: FakeEndpoint, openai: Any) -> None:
    """No scripted reply: the request waits until the harness takes it and answers."""
    import threading

    client = openai.OpenAI(base_url=endpoint.openai_url, api_key="k", max_retries=0, timeout=10)
    got: list[str] = []
    agent = threading.Thread(
        target=lambda: got.append(
            client.chat.completions.create(model="m", messages=USER).choices[0].message.content
        )
    )
    agent.start()
    exchange = endpoint.next_exchange(timeout=10)
    assert exchange.outcome is Outcome.PENDING and exchange.body["messages"] == USER
    exchange.answer(Reply(text="answered by the harness"))
    assert exchange.wait(10) is Outcome.ANSWERED
    agent.join(10)
    assert got == ["answered by the harness"]


def _post(endpoint: FakeEndpoint, body: dict[str, object]) -> socket.socket:
    data = json.dumps(body).encode()
    conn = socket.create_connection(("127.0.0.1", int(endpoint.url.rsplit(":", 1)[1])), timeout=10)
    conn.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\n\r\n%s" % (len(data), data)
    )
    return conn


def test_a_client_that_hangs_up_while_waiting_is_seen(endpoint: FakeEndpoint) -> None:
    conn = _post(endpoint, {"model": "m", "messages": USER})
    exchange = endpoint.next_exchange(timeout=10)
    conn.close()
    assert exchange.wait(10) is Outcome.DISCONNECTED


def test_a_client_that_hangs_up_during_the_delay_is_seen(endpoint: FakeEndpoint) -> None:
    before = len(endpoint.exchanges)
    endpoint.script((Reply(text="late"), Timing(delay=30.0)))
    conn = _post(endpoint, {"model": "m", "messages": USER, "stream": True})
    for _ in range(2000):  # until the request arrived (a bounded wait, no clock read)
        if len(endpoint.exchanges) > before and endpoint.exchanges[before].reply is not None:
            break
        time.sleep(0.005)
    conn.close()
    exchange = endpoint.exchanges[before]
    assert exchange.wait(10) is Outcome.DISCONNECTED and exchange.events_sent == 0


def test_a_cut_stream_ends_without_its_end(endpoint: FakeEndpoint) -> None:
    endpoint.script((Reply(text="abcdef", chunks=6), Timing(cut_after=3)))
    conn = _post(endpoint, {"model": "m", "messages": USER, "stream": True})
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    conn.close()
    exchange = endpoint.exchanges[-1]
    assert exchange.wait(10) is Outcome.CUT and exchange.events_sent == 3
    assert data.count(b"data: ") == 3 and b"[DONE]" not in data


def test_a_body_sent_in_chunks_is_read(endpoint: FakeEndpoint) -> None:
    endpoint.script(Reply(text="got it"))
    data = json.dumps({"model": "m", "messages": USER}).encode()
    half = len(data) // 2
    conn = socket.create_connection(("127.0.0.1", int(endpoint.url.rsplit(":", 1)[1])), timeout=10)
    conn.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
        + b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, data[:half], len(data) - half, data[half:])
    )
    answer = b""
    while b"got it" not in answer and (chunk := conn.recv(65536)):
        answer += chunk
    conn.close()
    assert answer.startswith(b"HTTP/1.1 200") and endpoint.exchanges[-1].body["messages"] == USER


def test_paths_name_the_api() -> None:
    assert [api_of(p) for p in ("/v1/responses", "/chat/completions/", "/x")] == [
        Api.RESPONSES,
        Api.CHAT,
        None,
    ]


# OpenAI Responses.

RESPONSES_TOOLS = [
    {"type": "function", "name": "read", "parameters": TOOLS[0]["function"]["parameters"]}
]


@pytest.mark.parametrize("width", [1, 3])
def test_responses_not_streamed(endpoint: FakeEndpoint, chat: Any, width: int) -> None:
    endpoint.script(Reply(text="Reading.", calls=_calls(width)))
    response = chat.responses.create(model="gpt-4.1", input="read the files", tools=RESPONSES_TOOLS)
    assert response.output_text == "Reading."
    calls = [(i.call_id, i.name, i.arguments) for i in response.output if i.type == "function_call"]
    assert calls == [(c.id, c.name, c.arguments) for c in _calls(width)]
    assert endpoint.exchanges[-1].api is Api.RESPONSES


@pytest.mark.parametrize("width", [1, 3])
def test_responses_streamed(endpoint: FakeEndpoint, chat: Any, width: int) -> None:
    endpoint.script(Reply(text="Reading.", calls=_calls(width), chunks=3))
    with chat.responses.stream(
        model="gpt-4.1", input="read the files", tools=RESPONSES_TOOLS
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.function_call_arguments.done") == width
    assert final.output_text == "Reading."
    calls = [(i.call_id, i.arguments) for i in final.output if i.type == "function_call"]
    assert calls == [(c.id, c.arguments) for c in _calls(width)]


def test_responses_rejects_like_openai(endpoint: FakeEndpoint, chat: Any, openai: Any) -> None:
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call_output", "call_id": "call_9", "output": "42"},
    ]
    expected = validate({"input": items}, Provider.OPENAI_RESPONSES)[0]
    with pytest.raises(openai.BadRequestError) as caught:
        chat.responses.create(model="gpt-4.1", input=items)
    assert caught.value.body["message"] == expected.text
    assert caught.value.body["param"] == "input"


# Anthropic Messages.

ANTHROPIC_TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "input_schema": TOOLS[0]["function"]["parameters"],
    }
]


@pytest.mark.parametrize("width", [1, 3])
def test_messages_not_streamed(endpoint: FakeEndpoint, claude: Any, width: int) -> None:
    endpoint.script(Reply(text="Reading.", calls=_calls(width)))
    message = claude.messages.create(
        model="claude-sonnet-4-5", max_tokens=100, messages=USER, tools=ANTHROPIC_TOOLS
    )
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["text"] + ["tool_use"] * width
    uses = [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert uses == [(c.id, c.name, json.loads(c.arguments)) for c in _calls(width)]
    assert endpoint.exchanges[-1].api is Api.MESSAGES


@pytest.mark.parametrize("width", [1, 3])
def test_messages_streamed(endpoint: FakeEndpoint, claude: Any, width: int) -> None:
    endpoint.script(Reply(text="Reading.", calls=_calls(width), chunks=3))
    with claude.messages.stream(
        model="claude-sonnet-4-5", max_tokens=100, messages=USER, tools=ANTHROPIC_TOOLS
    ) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "Reading." and message.stop_reason == "tool_use"
    uses = [(b.id, b.input) for b in message.content if b.type == "tool_use"]
    assert uses == [(c.id, json.loads(c.arguments)) for c in _calls(width)]


@pytest.mark.parametrize("stream", [False, True])
def test_messages_rejects_like_anthropic(
    endpoint: FakeEndpoint, claude: Any, anthropic: Any, stream: bool
) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}],
        },
        {"role": "user", "content": "and?"},
    ]
    expected = validate({"messages": messages}, Provider.ANTHROPIC)[0]
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(
            model="claude-sonnet-4-5", max_tokens=100, messages=messages, stream=stream
        )
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": expected.text},
    }


# OpenAI Responses' server-side state.


def test_previous_response_id_continues_the_stored_conversation(
    endpoint: FakeEndpoint, chat: Any
) -> None:
    endpoint.script(Reply(calls=_calls(1)), Reply(text="done"))
    first = chat.responses.create(model="gpt-4.1", input="read", tools=RESPONSES_TOOLS)
    output = {"type": "function_call_output", "call_id": "call_0", "output": "42"}
    second = chat.responses.create(
        model="gpt-4.1", previous_response_id=first.id, input=[output], tools=RESPONSES_TOOLS
    )
    assert second.output_text == "done"  # judged with the call it answers: no rejection
    exchange = endpoint.exchanges[-1]
    assert exchange.conversation is not None and exchange.body["input"] == [output]
    conversation: Any = exchange.conversation["input"]
    kinds = [i.get("type", "message") for i in conversation]
    assert kinds == ["message", "function_call", "function_call_output"]


def test_an_item_reference_stands_for_the_stored_item(endpoint: FakeEndpoint, chat: Any) -> None:
    endpoint.script(Reply(calls=_calls(1)), Reply(text="done"))
    first = chat.responses.create(model="gpt-4.1", input="read", tools=RESPONSES_TOOLS)
    call = next(i for i in first.output if i.type == "function_call")
    items = [
        {"role": "user", "content": "read"},
        {"type": "item_reference", "id": call.id},
        {"type": "function_call_output", "call_id": call.call_id, "output": "42"},
    ]
    assert chat.responses.create(model="gpt-4.1", input=items).output_text == "done"
    filled: Any = endpoint.exchanges[-1].judged_body["input"]
    assert filled[1]["type"] == "function_call"


@pytest.mark.parametrize("store", [True, False])
def test_a_previous_response_not_stored_is_rejected_like_openai(
    endpoint: FakeEndpoint, chat: Any, openai: Any, store: bool
) -> None:
    previous = "resp_unknown"
    if not store:  # a response the request asked not to store is not there later
        endpoint.script(Reply(text="hi"))
        previous = chat.responses.create(model="gpt-4.1", input="hi", store=False).id
    with pytest.raises(openai.BadRequestError) as caught:
        chat.responses.create(model="gpt-4.1", previous_response_id=previous, input="more")
    assert caught.value.body == {
        "message": f"Previous response with id '{previous}' not found.",
        "type": "invalid_request_error",
        "param": "previous_response_id",
        "code": "previous_response_not_found",
    }
