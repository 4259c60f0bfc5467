"""Which providers reject what a check found: one judgment per provider named.

``check --provider bedrock,gemini`` (``check_policy(..., providers=...)``)
runs the check once, under the first provider named (its rules decide the
runtime's rejections and retries, its texts fill the narrative), and then
judges every request of the reproductions against *each* provider named:
the request the runtime sent at each model invocation is rendered in that
provider's request format (:func:`~prunecheck.model.provider.render`) and
validated by its rules (:func:`~prunecheck.model.provider.validate`).  The
judgment is the provider's first rejection — the step, the request
location it names and its exact text — or "accepts".

The histories judged are the check's reproductions (the lead one first, then
each other unsafe placement's): a provider that accepts them all is said to
accept *the reproduction*, not every history the policy can produce.  A safe
check has no reproduction; every provider's judgment then says that no
request of the check broke tool pairing (the runtime judges pairing at every
invocation of the suite and the search).

Examples
--------
>>> parse_providers(["anthropic,openai", "anthropic"])
(<Provider.ANTHROPIC: 'anthropic'>, <Provider.OPENAI: 'openai'>)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from prunecheck.model.context import Message, Role
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import Invoke
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.provider import Provider, ProviderError, messages_of_body, render, validate
from prunecheck.model.state import CounterName
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace

__all__ = [
    "ProviderJudgment",
    "first_rejections",
    "is_judgeable",
    "judge_requests",
    "judge_runs",
    "judgeable",
    "loop_requests",
    "not_judged",
    "parse_providers",
    "provider_names",
    "with_next_invoke",
]


def is_judgeable(provider: Provider) -> bool:
    """Whether prunecheck can render a request for ``provider`` and check it
    against its rules (a provider whose rules are known but whose request
    body or validator is not written yet answers a ``ConfigError``)."""
    probe = [Message("m1", Role.USER, 1, 0, 0.0, text="hi")]
    try:
        validate(render(probe, provider), provider)
    except ConfigError:
        return False
    return True


def judgeable() -> tuple[Provider, ...]:
    """Every provider a request can be judged against, in :class:`Provider` order."""
    return tuple(p for p in Provider if is_judgeable(p))


def provider_names() -> tuple[str, ...]:
    """Every provider a subject can be judged against, as ``--provider`` spells it."""
    return tuple(p.value for p in judgeable())


def parse_providers(values: str | Iterable[str] | None, *, flag: str = "--provider") -> (
    tuple[Provider, ...]
):  # fmt: skip
    """The providers named by ``values`` (comma-separated, repeatable), in the
    order first named, each once; () for None.

    Raises
    ------
    ConfigError
        For an unknown name, or a value that names none (empty).
    """
    if values is None:
        return ()
    texts = [values] if isinstance(values, str) else list(values)
    found: list[Provider] = []
    known = ", ".join(provider_names())
    for text in texts:
        if not isinstance(text, str | Provider):
            raise ConfigError(
                f"{flag} {text!r}",
                "is not a provider name.",
                f"name one or more of {known}, separated by commas.",
            )
        names = [n.strip() for n in str(text).split(",")]
        if not any(names):
            raise ConfigError(
                f"{flag} {text!r}",
                "names no provider.",
                f"name one or more of {known}, separated by commas "
                f"(e.g. {flag} {provider_names()[0]}).",
            )
        for name in names:
            if not name:
                raise ConfigError(
                    f"{flag} {text!r}",
                    "has an empty name between commas.",
                    f"write the names separated by single commas, each one of {known}.",
                )
            try:
                provider = Provider(name.lower())
            except ValueError:
                raise ConfigError(
                    f"{flag} {name!r}",
                    "is not a provider whose rules prunecheck knows.",
                    f"use one or more of {known}, separated by commas.",
                ) from None
            if not is_judgeable(provider):
                raise ConfigError(
                    f"{flag} {name!r}",
                    "is a provider whose rules prunecheck knows, but it cannot yet render "
                    "and check a request against them.",
                    f"use one or more of {known}, separated by commas.",
                )
            if provider not in found:
                found.append(provider)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class ProviderJudgment:
    """One provider's answer to the requests judged.

    Attributes
    ----------
    provider : Provider
        Whose request format and rules.
    error : ProviderError or None
        Its first rejection (``error.path`` is the request location it
        names, ``error.text`` its exact text); None: it accepts every
        request judged.
    step : int or None
        The 1-based step of the reproduction whose invocation it rejects
        (``steps + 1``: the request the runtime sends next, after the
        reproduction's last step).
    steps : int or None
        The length of that reproduction.
    check_at : str or None
        The placement whose reproduction it rejects.
    requests : int
        Requests judged (0: the check found no reproduction to judge).
    unjudged : str or None
        Why nothing was judged (an error, out of time), or None.
    reproductions : int
        The reproductions whose requests were judged (0: a safe check).
    label : str or None
        How the line names the rejecting reproduction (an agent loop's: "the
        minimal schedule of class cancel"); None: "the reproduction at checks
        <check_at>".
    """

    provider: Provider
    error: ProviderError | None
    step: int | None = None
    steps: int | None = None
    check_at: str | None = None
    requests: int = 0
    unjudged: str | None = None
    reproductions: int = 0
    label: str | None = None

    @property
    def rejects(self) -> bool:
        """Whether the provider rejects a request judged."""
        return self.error is not None

    @property
    def verdict(self) -> str:
        """``rejects``, ``accepts`` or ``not_judged``."""
        if self.error is not None:
            return "rejects"
        return "not_judged" if self.unjudged else "accepts"

    def line(self) -> str:
        """The judgment in one line, as ``check`` prints it."""
        if self.unjudged:
            return f"{self.provider}: not judged — {self.unjudged}"
        if self.error is not None:
            where = f"at step {self.step} of {self.steps}" if self.step is not None else ""
            if self.step is not None and self.steps is not None and self.step > self.steps:
                where = f"sent next, after step {self.steps}"
            if self.label:
                where += f" of {self.label}"
            elif self.check_at:
                where += f" of the reproduction at checks {self.check_at}"
            return (
                f"{self.provider}: rejects the request {where}, {self.error.path}: "
                f"HTTP {self.error.status}: {self.error.text}"
            )
        if self.requests == 0 and self.reproductions:
            return (
                f"{self.provider}: accepts — the reproduction sends no request (the model is "
                "not called while its calls are pending)"
            )
        if self.requests == 0:
            return (
                f"{self.provider}: accepts — no reproduction to judge (no request of the "
                "check broke tool pairing)"
            )
        return (
            f"{self.provider}: accepts every request of the reproduction "
            f"({self.requests} request{'s' if self.requests != 1 else ''})"
        )

    def to_json(self) -> dict[str, Any]:
        """The judgment as ``--json``'s ``providers`` entries hold it."""
        error = self.error
        return {
            "provider": str(self.provider),
            "verdict": self.verdict,
            "kind": error.kind if error is not None else None,
            "location": error.path if error is not None else None,
            "ids": list(error.ids) if error is not None else [],
            "status": error.status if error is not None else None,
            "text": error.text if error is not None else None,
            "step": self.step,
            "check_at": self.check_at,
            "requests": self.requests,
            "reproductions": self.reproductions,
        }


def not_judged(provider: Provider, why: str) -> ProviderJudgment:
    """A judgment that could not be made, and why."""
    return ProviderJudgment(provider, None, unjudged=why)


# ------------------------------------------------------------------ judging
def judge_requests(
    requests: Iterable[tuple[int, Sequence[Message]]], providers: Sequence[Provider]
) -> dict[Provider, tuple[int, tuple[int, ProviderError] | None]]:
    """Each provider's answer to ``requests`` ((step, messages) pairs, in
    order): the requests it judged, and its first rejection ``(step, error)``
    or None.  Each request is rendered in the provider's format and validated
    by its rules; a provider is not asked again after its first rejection.
    O(requests × providers × messages)."""
    judged = dict.fromkeys(providers, 0)
    first: dict[Provider, tuple[int, ProviderError]] = {}
    for step, messages in requests:
        waiting = [p for p in providers if p not in first]
        if not waiting:
            break
        for provider in waiting:
            judged[provider] += 1
            errors = validate(render(messages, provider), provider)
            if errors:
                first[provider] = (step, errors[0])
    return {p: (judged[p], first.get(p)) for p in providers}


def _messages(system: System[Any], state: Any) -> Sequence[Message]:
    if isinstance(system, ModelSystem):
        return tuple(system.truth(state).context)
    sent = system.request(state)
    return messages_of_body(sent.body, sent.provider)


def with_next_invoke(trace: Trace) -> Trace:
    """``trace`` with a model invocation after its last step (unless it ends
    on one): a reproduction ends at its violation, and the harm is in the
    request the runtime sends next — as the runtime sends it (its budget
    check before the call, its repair layer), or nothing while calls are
    pending."""
    if trace.events and isinstance(trace.events[-1], Invoke):
        return trace
    times = None if trace.times is None else (*trace.times, trace.times[-1] if trace.times else 0.0)
    return replace(trace, events=(*trace.events, Invoke()), times=times)


def _sent(trace: Trace, system: System[Any]) -> Iterable[tuple[int, Sequence[Message]]]:
    """Every request the reproduction sends, as (1-based step, messages),
    the request sent next included (step ``len(trace.events) + 1``, see
    :func:`with_next_invoke`)."""
    invocations = 0
    for item, state in replay(with_next_invoke(trace), system, record=False):
        done = system.truth(state).count(CounterName.INVOCATIONS)
        if done == invocations:
            continue  # not an invocation, or a blocked one: nothing was sent
        invocations = done
        yield item.index + 1, _messages(system, state)


def first_rejections(
    traces: Sequence[tuple[str, Trace]],
    system: System[Any] | None,
    providers: Sequence[Provider],
) -> tuple[ProviderJudgment, ...]:
    """Each provider's judgment of the reproductions ``traces`` ((placement,
    trace) pairs, the lead one first): its first rejection, or how many
    requests it accepted."""
    if system is None:
        return judge_runs((), providers)
    runs = ((check_at, len(trace.events), _sent(trace, system)) for check_at, trace in traces)
    return judge_runs(runs, providers)


def judge_runs(
    runs: Iterable[tuple[str, int, Iterable[tuple[int, Sequence[Message]]]]],
    providers: Sequence[Provider],
) -> tuple[ProviderJudgment, ...]:
    """Each provider's judgment of ``runs``: per reproduction (the lead one
    first), its placement or scenario class, its length in steps, and the
    requests it sent as (1-based step, messages).  A run is read only while
    some provider has not rejected yet."""
    judged: dict[Provider, ProviderJudgment] = {}
    counts: dict[Provider, int] = dict.fromkeys(providers, 0)
    seen = 0
    for check_at, steps, requests in runs:
        waiting = [p for p in providers if p not in judged]
        if not waiting:
            break
        seen += 1
        for provider, (count, rejection) in judge_requests(requests, waiting).items():
            counts[provider] += count
            if rejection is not None:
                step, error = rejection
                judged[provider] = ProviderJudgment(
                    provider, error, step, steps, check_at, counts[provider], reproductions=seen
                )
    return tuple(
        judged.get(p) or ProviderJudgment(p, None, requests=counts[p], reproductions=seen)
        for p in providers
    )


def loop_requests(
    received: Iterable[tuple[int, Mapping[str, object]]],
) -> Iterable[tuple[int, Sequence[Message]]]:
    """An agent loop's requests ((0-based step, OpenAI body) as its ledger
    keeps them) as (1-based step, messages) for :func:`judge_runs`."""
    for step, body in received:
        yield step + 1, messages_of_body(body, Provider.OPENAI)
