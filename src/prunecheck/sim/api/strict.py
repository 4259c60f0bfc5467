"""What providers reject beyond tool pairing, for ``prunecheck validate``.

:func:`prunecheck.model.provider.validate` checks tool pairing.  This module
adds the request-shape rules a transcript trips over before pairing matters:

- the other provider's format (refused: it is a wrong ``--format``, not a
  broken transcript; :func:`other_format` says why);
- OpenAI content parts that are not objects with a known ``type``, a text
  part without a string ``text``, a tool call without ``function`` (or its
  ``name``), duplicate ``tool_calls`` ids;
- Anthropic duplicate ``tool_use`` ids.

Texts.  Where a provider's own words were seen in public reports they are
used as seen, with the path filled in: Anthropic's
"messages.N.content.K: `tool_use` ids must be unique" and OpenAI's
"Missing required parameter: 'messages[N]...'." pattern.  OpenAI's texts for
a part that is not an object, an unknown part type and duplicate call ids
were not verified: they are marked "(text unverified)" where printed
(:data:`UNVERIFIED`).
"""

from __future__ import annotations

from collections.abc import Sequence

from prunecheck.model.provider import Provider, ProviderError

__all__ = ["UNVERIFIED", "other_format", "shape_errors"]

#: Kinds whose provider text is our wording, not a text seen from the provider.
UNVERIFIED = frozenset({"invalid_part", "invalid_part_type", "duplicate_call_id"})

#: The providers whose request shape this module checks: OpenAI's body
#: (also DeepSeek's) and Anthropic's.
_SHAPED = (Provider.OPENAI, Provider.DEEPSEEK, Provider.ANTHROPIC)
_OPENAI_PARTS = ("text", "image_url", "input_audio", "file", "refusal")
_ANTHROPIC_ONLY_BLOCKS = ("tool_use", "tool_result")


def _messages(payload: object) -> list[object]:
    raw = payload.get("messages") if isinstance(payload, dict) else payload
    return list(raw) if isinstance(raw, list) else []


def other_format(payload: object, provider: Provider) -> str | None:
    """Why ``payload`` looks like the other provider's transcript, or None."""
    if provider not in _SHAPED:
        return None
    for i, message in enumerate(_messages(payload)):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if provider is not Provider.ANTHROPIC:
            for k, block in enumerate(blocks):
                if isinstance(block, dict) and block.get("type") in _ANTHROPIC_ONLY_BLOCKS:
                    return f"messages[{i}].content[{k}] is an Anthropic {block['type']!r} block"
        else:
            if message.get("role") == "tool" or "tool_calls" in message:
                what = "a 'tool' role" if message.get("role") == "tool" else "'tool_calls'"
                return f"messages[{i}] has {what}, as OpenAI Chat Completions messages do"
    return None


def _error(
    provider: Provider, kind: str, path: str, text: str, ids: tuple[str, ...] = ()
) -> ProviderError:
    return ProviderError(provider, kind, path, ids, text)


def _openai(messages: Sequence[object]) -> list[ProviderError]:
    out: list[ProviderError] = []
    seen: dict[str, int] = {}
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        for k, part in enumerate(content if isinstance(content, list) else []):
            at = f"messages[{i}].content[{k}]"
            if not isinstance(part, dict):
                out.append(
                    _error(
                        Provider.OPENAI,
                        "invalid_part",
                        at,
                        f"Invalid type for '{at}': expected an object, but got "
                        f"{type(part).__name__} instead.",
                    )
                )
            elif "type" not in part:
                out.append(
                    _error(
                        Provider.OPENAI,
                        "missing_part_type",
                        at,
                        f"Missing required parameter: '{at}.type'.",
                    )
                )
            elif part["type"] not in _OPENAI_PARTS:
                supported = ", ".join(f"'{t}'" for t in _OPENAI_PARTS)
                out.append(
                    _error(
                        Provider.OPENAI,
                        "invalid_part_type",
                        at,
                        f"Invalid value: {part['type']!r}. Supported values are: {supported}.",
                    )
                )
            elif part["type"] == "text" and not isinstance(part.get("text"), str):
                out.append(
                    _error(
                        Provider.OPENAI,
                        "missing_part_text",
                        at,
                        f"Missing required parameter: '{at}.text'.",
                    )
                )
        calls = message.get("tool_calls")
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            if not isinstance(call, dict):
                continue
            at = f"messages[{i}].tool_calls[{j}]"
            function = call.get("function")
            if not isinstance(function, dict):
                out.append(
                    _error(
                        Provider.OPENAI,
                        "missing_function",
                        at,
                        f"Missing required parameter: '{at}.function'.",
                    )
                )
            elif not isinstance(function.get("name"), str):
                out.append(
                    _error(
                        Provider.OPENAI,
                        "missing_function_name",
                        at,
                        f"Missing required parameter: '{at}.function.name'.",
                    )
                )
            cid = call.get("id")
            if isinstance(cid, str):
                if cid in seen:
                    out.append(
                        _error(
                            Provider.OPENAI,
                            "duplicate_call_id",
                            at,
                            f"Duplicate tool call id {cid!r} in '{at}' (first in "
                            f"messages[{seen[cid]}]); tool call ids must be unique.",
                            (cid,),
                        )
                    )
                else:
                    seen[cid] = i
    return out


def _anthropic(messages: Sequence[object]) -> list[ProviderError]:
    out: list[ProviderError] = []
    seen: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        for k, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                cid = block.get("id")
                if isinstance(cid, str):
                    if cid in seen:
                        out.append(
                            _error(
                                Provider.ANTHROPIC,
                                "duplicate_tool_use_id",
                                f"messages.{i}.content.{k}",
                                f"messages.{i}.content.{k}: `tool_use` ids must be unique",
                                (cid,),
                            )
                        )
                    seen.add(cid)
    return out


def shape_errors(payload: object, provider: Provider) -> list[ProviderError]:
    """Every request-shape error of ``payload`` (see the module docs), in order."""
    messages = _messages(payload)
    if provider is Provider.OPENAI:
        return _openai(messages)
    return _anthropic(messages) if provider is Provider.ANTHROPIC else []
