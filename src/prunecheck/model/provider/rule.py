"""One provider rule as data, and the error a request that breaks it gets.

A :class:`Rule` is what a provider checks and what it answers: an id, the
kind of broken history it catches, the verbatim text template (with
``{path}``, ``{ids}`` or ``{id}`` where the provider names a place or an
id), the request location form the text or the error body names, the HTTP
status, and where the text is documented or was observed.  The validators,
the model-side pairing check, the telemetry import and the narratives read
the same rules (:mod:`.registry` lists them per provider).

:func:`pattern` turns a template into a regular expression that finds the
text in a log line whatever the ids and paths are, also when the log
escaped its quotes or wrapped its lines.  Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from prunecheck.model.provider.vocabulary import Provider

__all__ = ["ProviderError", "Rule", "normalized", "pattern"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule a provider enforces, with its verbatim error text.

    Attributes
    ----------
    id: ``"<provider>.<name>"``, stable: reports and the matrix name it.
    provider: whose rule.
    kind: the kind of broken history it catches (a :data:`REJECTION_KINDS` entry).
    template: the text, verbatim; ``{path}``, ``{ids}`` (comma separated),
        ``{id}`` (the first id), ``{ref}`` (the second) and ``{count}`` (how
        many ids) stand for what varies; ``{role}`` for a role the text names,
        ``{item}`` for an item or block type it names, ``{doc}`` for the
        documentation link it gives (its last field: a log may give another).
    location: the request location form the error names
        (``messages.N.content.K``, ``input[N]``, ``contents[N]``).
    status: the HTTP status.
    source: where the text is documented or was observed (a URL).
    emitted: False for a wording that logs carry (an older text, or a case
        our validators do not tell apart) but that no validator of ours
        answers: :func:`~.registry.recognize` knows it, the checks do not.
    """

    id: str
    provider: Provider
    kind: str
    template: str
    location: str
    source: str
    status: int = 400
    emitted: bool = True

    def text(self, path: str = "", ids: tuple[str, ...] = (), **fields: str) -> str:
        """The text for one error at ``path`` naming ``ids``.

        >>> Rule("x.y", Provider.OPENAI, "k", "{path}: {ids} ({count})", "messages.N",
        ...      "https://example.org").text("messages.2", ("a", "b"))
        'messages.2: a, b (2)'
        """
        first, ref = (*ids, "", "")[:2]
        # the role and the item type a text names, as observed
        values = {"role": "user", "item": "function_call", "doc": _DOC, **fields}
        return self.template.format(
            path=path, ids=", ".join(ids), id=first, ref=ref, count=len(ids), **values
        )

    def error(self, path: str, ids: tuple[str, ...] = (), **fields: str) -> ProviderError:
        """The error of a request that breaks this rule at ``path``, naming
        ``ids`` (``fields`` fill the template's other slots, e.g. ``role``)."""
        text = self.text(path, ids, **fields)
        return ProviderError(self.provider, self.kind, path, ids, text, self.status, self.id)


@dataclass(frozen=True, slots=True)
class ProviderError:
    """One tool pairing error, as the provider would answer it.

    Attributes
    ----------
    provider: the provider that rejects the request.
    kind: ``"result_without_call"``, ``"call_without_result"``, ... (the rule's kind).
    path: the offending message (``"messages.4"``) or block
        (``"messages.3.content.0"``), indexed in the request's ``messages``
        (``input[N]`` / ``contents[N]`` for the providers that name those).
    ids: the tool_use / tool_call ids involved.
    text: the exact text the provider sends.
    status: the HTTP status.
    rule: the id of the :class:`Rule` broken ("" for a shape error).
    """

    provider: Provider
    kind: str
    path: str
    ids: tuple[str, ...]
    text: str
    status: int = 400
    rule: str = ""

    def __str__(self) -> str:
        return f"HTTP {self.status} ({self.provider}): {self.text}"


# What a placeholder matches in a log: a path, a list of ids, one id.
_SLOTS = {
    "path": r"[\w.\[\]]+?",
    "ids": r"[\w\-…]+(?:, [\w\-…]+)*",
    "id": r"[\w\-…]+",
    "ref": r"[\w\-…]+",
    "count": r"\d+",
    "role": r"\w+",
    "item": r"\w+",
    "doc": r"https?://\S+",
}
_FIELD = re.compile(r"\{(path|ids|id|ref|count|role|item|doc)\}")
#: The documentation link a text with ``{doc}`` gives, unless told another.
_DOC = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"


@cache
def pattern(template: str) -> re.Pattern[str]:
    """The regular expression that finds ``template``'s text in a
    :func:`normalized` log text, any ids and paths filled in.

    A text's leading "The " and its closing period are not required: logs,
    tracker titles and quotes drop them (Bedrock's "The toolConfig field
    must be defined ... content blocks." is quoted as "toolConfig field
    must be defined ... content blocks").

    >>> bool(pattern("No tool output found for function call {id}.").search(
    ...     'error: {"message": "No tool output found for function call call_9."}'))
    True
    >>> bool(pattern("The {path} field is wrong.").search("Error: messages.2 field is wrong"))
    True
    """
    template = template.removeprefix("The ")
    ending = ""
    if template.endswith("."):
        template, ending = template[:-1], r"\.?"
    parts: list[str] = []
    at = 0
    for match in _FIELD.finditer(template):
        parts.append(re.escape(normalized(template[at : match.start()])))
        parts.append(_SLOTS[match.group(1)])
        at = match.end()
    parts.append(re.escape(normalized(template[at:])))
    return re.compile("".join(parts) + ending)


_ESCAPES = re.compile(r"\\+(['\"`])")
_SPACE = re.compile(r"\s+")


def normalized(text: str) -> str:
    """``text`` with escaped quotes unescaped (``\\'`` -> ``'``, as a JSON
    or Python repr of an error body shows them) and every run of white
    space one space (a terminal wraps long texts)."""
    return _SPACE.sub(" ", _ESCAPES.sub(r"\1", text))
