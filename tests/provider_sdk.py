"""Each provider's own request types, offline: does a request body pass
them as its SDK builds it?  Shared by the golden tests of
``tests/test_provider_golden_*.py``.

- OpenAI Chat Completions, DeepSeek and OpenAI Responses: the ``openai``
  SDK's TypedDicts (``CompletionCreateParamsNonStreaming``,
  ``ResponseCreateParamsNonStreaming``) validated with pydantic's TypeAdapter;
- Anthropic Messages: ``anthropic``'s ``MessageCreateParamsNonStreaming``;
- Gemini: ``google-genai``'s ``types.Content`` for each turn and
  ``types.GenerateContentConfig`` for ``systemInstruction`` and ``tools``;
- Bedrock Converse: botocore's ``bedrock-runtime`` service model, checked by
  ``botocore.validate.ParamValidator`` as the client does before sending;
- Mistral: ``mistralai``'s ``ChatCompletionRequest``.

A TypedDict or a pydantic model that ignores a key it does not know would
let a misspelt field through, so every check also holds the validated value
equal to the body: nothing dropped, nothing coerced.  The SDKs are imported
only here, and a test that needs one is marked ``slow`` (importing an SDK costs up
to 2 s of CPU, the anthropic one most) and skips when it is not installed
(they are in the ``providers`` extra, which ``dev`` includes); each has a
fast twin that checks our side of the same bodies without the SDK.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from prunecheck.model.provider import Provider

__all__ = [
    "Golden",
    "check_complete",
    "check_render",
    "check_render_validates",
    "check_sdk",
    "check_texts",
    "contexts",
    "needs_sdk",
    "sdk_accepts",
    "sdk_rejects_shape",
]

#: The distribution each provider's check needs.
NEEDS = {
    Provider.OPENAI: "openai",
    Provider.DEEPSEEK: "openai",
    Provider.OPENAI_RESPONSES: "openai",
    Provider.ANTHROPIC: "anthropic",
    Provider.GEMINI: "google.genai",
    Provider.BEDROCK: "botocore",
    Provider.MISTRAL: "mistralai",
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # google.genai without google
        return False


def needs_sdk(provider: Provider) -> pytest.MarkDecorator:
    """``slow`` and skipped unless ``provider``'s SDK is installed."""
    module = NEEDS[provider]

    def mark(test: Any) -> Any:
        test = pytest.mark.slow(test)
        reason = f"{provider}'s SDK ({module}) is in the 'providers' extra"
        return pytest.mark.skipif(not _installed(module), reason=reason)(test)

    return mark  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    """``value`` with every lazily validated iterable run (which validates
    it) and turned into a list, as JSON would hold it."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Iterator) or type(value).__name__ == "ValidatorIterator":
        return [_plain(v) for v in value]
    return value


def _typed(kind: Any, body: Mapping[str, Any]) -> Any:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(kind)
    return _plain(adapter.validate_python(json.loads(json.dumps(body))))


def _openai_chat(body: Mapping[str, Any]) -> Any:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return _typed(CompletionCreateParamsNonStreaming, body)


def _openai_responses(body: Mapping[str, Any]) -> Any:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    return _typed(ResponseCreateParamsNonStreaming, body)


def _anthropic(body: Mapping[str, Any]) -> Any:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return _typed(MessageCreateParamsNonStreaming, body)


def _gemini(body: Mapping[str, Any]) -> Any:
    from google.genai import types

    out: dict[str, Any] = {"model": body["model"]}
    out["contents"] = [
        types.Content.model_validate(c).model_dump(by_alias=True, exclude_none=True, mode="json")
        for c in body["contents"]
    ]
    config = {k: body[k] for k in ("systemInstruction", "tools") if k in body}
    dumped = types.GenerateContentConfig.model_validate(config).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    out.update(dumped)
    return out


def _bedrock(body: Mapping[str, Any]) -> Any:
    import botocore.session
    from botocore.validate import ParamValidator

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    report = ParamValidator().validate(dict(body), model.operation_model("Converse").input_shape)
    if report.has_errors():
        raise ValueError(report.generate_report())
    return body  # the service model rejects unknown keys itself


def _mistral(body: Mapping[str, Any]) -> Any:
    from mistralai.client.models import ChatCompletionRequest

    request = ChatCompletionRequest.model_validate(json.loads(json.dumps(body)))
    return request.model_dump(by_alias=True, exclude_unset=True, mode="json")


_CHECKS = {
    Provider.OPENAI: _openai_chat,
    Provider.DEEPSEEK: _openai_chat,
    Provider.OPENAI_RESPONSES: _openai_responses,
    Provider.ANTHROPIC: _anthropic,
    Provider.GEMINI: _gemini,
    Provider.BEDROCK: _bedrock,
    Provider.MISTRAL: _mistral,
}


def sdk_accepts(provider: Provider, body: Mapping[str, Any]) -> None:
    """Assert that ``provider``'s SDK request types take ``body`` as it is."""
    checked = _CHECKS[Provider(provider)](body)
    assert checked == json.loads(json.dumps(body)), (
        f"{provider}'s SDK types changed the body (a field dropped or coerced):\n"
        f"sent:    {json.dumps(body, sort_keys=True)}\n"
        f"checked: {json.dumps(checked, sort_keys=True)}"
    )


def sdk_rejects_shape(provider: Provider, body: Mapping[str, Any]) -> bool:
    """Whether ``provider``'s SDK types refuse ``body`` (a misspelt field, a
    wrong type): the check the golden tests use to show it can fail."""
    try:
        sdk_accepts(provider, body)
    except (AssertionError, ValueError, TypeError):
        return True
    return False


def contexts() -> dict[str, list[Any]]:
    """Contexts of every shape ``render`` meets, clean and broken: a system
    prompt, a parallel batch, a cleared result, a summary, a result whose
    call was cut, a call whose result was cut, a user message right after
    results.  Each provider's rendering of each must pass its SDK types."""
    from prunecheck.model.context import Message, Role

    def m(i: int, role: Role, **kw: Any) -> Message:
        return Message(f"m{i}", role, 5, 1, float(i), **kw)

    system = m(0, Role.SYSTEM, text="be brief")
    user = m(1, Role.USER, text="read both")
    batch = m(2, Role.ASSISTANT, tool_calls=("c1", "c2"))
    r1, r2 = m(3, Role.TOOL, call_id="c1", text="one"), m(4, Role.TOOL, call_id="c2", text="two")
    answer = m(5, Role.ASSISTANT, text="done")
    again = m(6, Role.USER, text="again")
    said_and_called = m(7, Role.ASSISTANT, text="reading", tool_calls=("c3",))
    r3 = m(8, Role.TOOL, call_id="c3", text="three", cleared=True)
    summary = m(9, Role.USER, text="they read files", summary_of=("m1", "m2", "m3", "m4"))
    return {
        "clean": [system, user, batch, r1, r2, answer, again, said_and_called, r3],
        "summary": [system, summary, answer, again],
        "result_without_call": [system, user, r1, r2, answer],
        "call_without_result": [system, user, batch, answer, again],
        "partial_batch": [system, user, batch, r1, answer],
        "user_after_results": [user, batch, r1, r2, again],
        "call_first": [batch, r1, r2, answer],
    }


@dataclass(frozen=True)
class Golden:
    """One rule's golden pair: a body the provider rejects with the rule's
    exact text (as its first error), and the nearest body it accepts."""

    rule: str
    rejected: dict[str, Any]
    accepted: dict[str, Any]
    text: str
    #: OpenAI Responses: the server's record the rule needs (output item id ->
    #: reasoning item id), which the body alone does not carry.
    stored: dict[str, str] | None = None


def check_sdk(provider: Provider, case: Golden) -> None:
    """Both bodies pass the provider's SDK request types."""
    sdk_accepts(provider, case.rejected)
    sdk_accepts(provider, case.accepted)


def check_texts(provider: Provider, case: Golden) -> None:
    """Ours answers the rejected body with exactly ``case.text`` under
    ``case.rule`` first, accepts the other, and ``recognize`` knows the text."""
    from prunecheck.model.provider import recognize, rule, validate

    errors = validate(case.rejected, provider, stored=case.stored)
    assert errors, f"{case.rule}: the rejected body validated clean"
    assert (errors[0].rule, errors[0].text) == (case.rule, case.text)
    assert errors[0].provider is Provider(provider) and errors[0].status == 400
    assert validate(case.accepted, provider, stored=case.stored) == []
    assert recognize(case.text) is rule(case.rule)


def check_complete(
    provider: Provider, cases: list[Golden], recognized: list[Golden] | None = None
) -> None:
    """Every rule the validator answers has its golden pair in ``cases``, and
    every rule only :func:`recognize` knows has its pair in ``recognized``."""
    from prunecheck.model.provider import rules_of

    emitted = {r.id for r in rules_of(provider) if r.emitted}
    assert {c.rule for c in cases} == emitted
    known = {r.id for r in rules_of(provider) if not r.emitted}
    assert {c.rule for c in recognized or []} == known


def check_recognized(provider: Provider, case: Golden) -> None:
    """A rule our validator does not answer in its words: ``recognize``
    knows the exact text (the rule's template filled in gives it back), the
    accepted body validates clean, and the rejected body is rejected by our
    validator for the same kind of broken history when a body can show it
    (an altered signature cannot be seen in a body)."""
    from prunecheck.model.provider import recognize, rule, validate

    known = rule(case.rule)
    assert known.provider is Provider(provider) and not known.emitted
    assert recognize(case.text) is known
    assert validate(case.accepted, provider, stored=case.stored) == []
    errors = validate(case.rejected, provider, stored=case.stored)
    assert not errors or errors[0].kind == known.kind, errors


def check_render(provider: Provider) -> None:
    """``render`` of every shape in :func:`contexts` passes the SDK's types."""
    from prunecheck.model.provider import render

    for name, ctx in contexts().items():
        try:
            sdk_accepts(provider, render(ctx, provider))
        except (AssertionError, ValueError) as exc:
            raise AssertionError(f"render of {name!r} for {provider}: {exc}") from None


def check_render_validates(provider: Provider) -> None:
    """Our validator reads ``render`` of every shape in :func:`contexts`
    (no shape error) and finds the clean ones clean: the fast twin of
    :func:`check_render`."""
    from prunecheck.model.provider import render, validate

    for name, ctx in contexts().items():
        errors = validate(render(ctx, provider), provider)
        if name in ("clean", "summary"):
            assert errors == [], (name, errors)
        if name in ("result_without_call", "call_without_result", "partial_batch"):
            assert errors, name
