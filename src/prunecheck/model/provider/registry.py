"""Every provider's rules, one registry: what the validators answer, what
the telemetry import recognizes, what the narratives and the matrix name.

:data:`PROVIDERS` maps each :class:`Provider` to its :class:`ProviderRules`
(a display name, the request's conversation field and its rules, each with
its verbatim text and source).  :func:`recognize` finds any provider's
rejection text in a string (a logged error body, an exception message),
whatever ids and paths it names.  Pure: no I/O.

>>> recognize('{"error": {"message": "No tool output found for function call '
...           'call_Q1.", "type": "invalid_request_error", "param": "input"}}').id
'openai-responses.call_without_result'
>>> recognize("all good") is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from prunecheck.model.provider import (
    anthropic_messages,
    bedrock_converse,
    deepseek,
    gemini,
    mistral,
    openai_chat,
    openai_responses,
)
from prunecheck.model.provider.rule import Rule, normalized, pattern
from prunecheck.model.provider.vocabulary import Provider

__all__ = ["PROVIDERS", "RULES", "ProviderRules", "first_rule", "recognize", "rule", "rules_of"]


@dataclass(frozen=True, slots=True)
class ProviderRules:
    """One provider's API and the rules it enforces.

    Attributes
    ----------
    provider: the provider.
    title: its API's name, as docs and verdicts print it.
    conversation: the request field that holds the history
        (``messages``, ``input``, ``contents``).
    rules: its rules; for each kind, the first one listed is the text our
        validator answers unless it tells a case apart.
    """

    provider: Provider
    title: str
    conversation: str
    rules: tuple[Rule, ...]

    def kinds(self) -> tuple[str, ...]:
        """The kinds of broken history this provider's validator rejects, in
        rule order (a rule only :func:`recognize` knows adds none)."""
        return tuple(dict.fromkeys(r.kind for r in self.rules if r.emitted))


def _entry(
    provider: Provider, title: str, conversation: str, rules: tuple[Rule, ...]
) -> ProviderRules:
    assert all(r.provider is provider for r in rules), provider
    return ProviderRules(provider, title, conversation, rules)


#: Every provider, in the order docs and the matrix list them.
PROVIDERS: Mapping[Provider, ProviderRules] = MappingProxyType(
    {
        Provider.OPENAI: _entry(
            Provider.OPENAI, "OpenAI Chat Completions", "messages", openai_chat.RULES
        ),
        Provider.OPENAI_RESPONSES: _entry(
            Provider.OPENAI_RESPONSES, "OpenAI Responses", "input", openai_responses.RULES
        ),
        Provider.ANTHROPIC: _entry(
            Provider.ANTHROPIC, "Anthropic Messages", "messages", anthropic_messages.RULES
        ),
        Provider.GEMINI: _entry(Provider.GEMINI, "Gemini", "contents", gemini.RULES),
        Provider.BEDROCK: _entry(
            Provider.BEDROCK, "AWS Bedrock Converse", "messages", bedrock_converse.RULES
        ),
        Provider.MISTRAL: _entry(Provider.MISTRAL, "Mistral", "messages", mistral.RULES),
        Provider.DEEPSEEK: _entry(
            Provider.DEEPSEEK, "DeepSeek (OpenAI-compatible)", "messages", deepseek.RULES
        ),
    }
)
assert set(PROVIDERS) == set(Provider), "every Provider has its rules"

#: Every rule by id.
RULES: Mapping[str, Rule] = MappingProxyType(
    {r.id: r for entry in PROVIDERS.values() for r in entry.rules}
)


def rules_of(provider: Provider | str) -> tuple[Rule, ...]:
    """The rules of ``provider`` (a :class:`Provider` or its value)."""
    return PROVIDERS[Provider(provider)].rules


def rule(rule_id: str) -> Rule:
    """The rule named ``rule_id``; KeyError names the known ids."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise KeyError(f"no provider rule {rule_id!r}; known: {', '.join(RULES)}") from None


def first_rule(provider: Provider, kind: str) -> Rule:
    """The rule whose text ``provider``'s validator answers for ``kind``."""
    for candidate in PROVIDERS[Provider(provider)].rules:
        if candidate.kind == kind and candidate.emitted:
            return candidate
    raise KeyError(f"{provider} has no rule of kind {kind!r}")


# Most specific first: the longest fixed text wins when two could match.
_BY_SPECIFICITY = sorted(RULES.values(), key=lambda r: -len(pattern(r.template).pattern))


def recognize(text: str) -> Rule | None:
    """The provider rule whose rejection text ``text`` carries, or None.

    ``text`` may be a whole log line, an error body as JSON (also JSON or a
    Python repr nested in another error's message, with escaped quotes), or
    a text a terminal wrapped over lines; the ids and paths in it may be
    any.  O(len(text) × number of rules).
    """
    flat = normalized(text)
    for candidate in _BY_SPECIFICITY:
        if pattern(candidate.template).search(flat):
            return candidate
    return None
