"""One request the fake model endpoint received, and how it was answered.

An :class:`Exchange` is the record of one HTTP request an agent sent to the
:class:`~.endpoint.FakeEndpoint`: which API (:class:`Api`), the parsed body,
whether it asked for a stream, the provider's rejection when the request
breaks that provider's rules, and what came of it (:class:`Outcome`): the
scripted reply sent, a rejection, a stream the harness cut, or a client
that hung up first.  The harness answers a pending exchange with
:meth:`Exchange.answer`, giving the :class:`~prunecheck.sim.subjects.loops.contract.Reply`
the in-process drivers play and a :class:`Timing`.

Thread-safe: the endpoint's handler threads and the harness share these.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from prunecheck.model.provider import Provider, ProviderError

from ..loops.contract import Reply

__all__ = ["PROVIDER_OF", "Api", "Exchange", "Outcome", "Timing"]


class Api(StrEnum):
    """The wire API a request spoke, told by its path."""

    CHAT = "chat"
    """OpenAI Chat Completions: ``POST …/chat/completions``."""
    RESPONSES = "responses"
    """OpenAI Responses: ``POST …/responses``."""
    MESSAGES = "messages"
    """Anthropic Messages: ``POST …/messages``."""


#: Whose rules and error texts judge a request of each API.
PROVIDER_OF: Mapping[Api, Provider] = {
    Api.CHAT: Provider.OPENAI,
    Api.RESPONSES: Provider.OPENAI_RESPONSES,
    Api.MESSAGES: Provider.ANTHROPIC,
}


class Outcome(StrEnum):
    """What came of one exchange."""

    PENDING = "pending"
    """Received; no reply chosen yet (the harness answers it)."""
    SENDING = "sending"
    """A reply is being written (a stream in progress)."""
    ANSWERED = "answered"
    """The whole reply was sent."""
    REJECTED = "rejected"
    """Answered with the provider's HTTP 400 (see :attr:`Exchange.rejection`)."""
    CUT = "cut"
    """The harness cut the stream after :attr:`Timing.cut_after` events."""
    DISCONNECTED = "disconnected"
    """The client closed the connection before the reply was all sent
    (a cancellation, as the agent's side sees it)."""
    UNANSWERED = "unanswered"
    """The endpoint stopped, or no reply came in time (HTTP 503)."""

    def is_final(self) -> bool:
        """True once nothing more will happen to the exchange."""
        return self not in (Outcome.PENDING, Outcome.SENDING)


@dataclass(frozen=True, slots=True)
class Timing:
    """When a reply's bytes go out, chosen by the harness.

    Attributes
    ----------
    delay : float
        Seconds between choosing the reply and sending its first byte
        (the status line).  The client may hang up meanwhile: that is
        detected (:attr:`Outcome.DISCONNECTED`).
    gap : float
        Seconds between two events of a stream (ignored when not streaming).
    cut_after : int | None
        Stream only: close the connection after this many events, without
        the stream's end (a dropped stream, as a network failure leaves it).
    """

    delay: float = 0.0
    gap: float = 0.0
    cut_after: int | None = None

    def __post_init__(self) -> None:
        if self.delay < 0 or self.gap < 0:
            raise ValueError(f"delay ({self.delay}) and gap ({self.gap}) must be >= 0")
        if self.cut_after is not None and self.cut_after < 0:
            raise ValueError(f"cut_after ({self.cut_after}) must be >= 0 or None")


@dataclass(eq=False, slots=True)
class Exchange:
    """One request received and what came of it.

    Attributes
    ----------
    index : int
        0 for the first request the endpoint received, then 1, 2, …
    api : Api
        The API its path names.
    path : str
        The request path (``/v1/chat/completions`` …).
    headers : Mapping[str, str]
        Its headers, names lower-cased.
    body : Mapping[str, object]
        Its JSON body.
    stream : bool
        Whether it asked for a stream (``"stream": true``).
    conversation : Mapping[str, object] | None
        OpenAI Responses: the body as the provider reads it, when it names
        server-side state (``previous_response_id``, ``item_reference``
        items): ``input`` holds the whole conversation.  None otherwise.
    rejection : ProviderError | None
        The provider's error when the request breaks its rules (answered
        with HTTP 400, no scripted reply used), else None.
    reply : Reply | None
        The reply chosen for it.
    timing : Timing
        When that reply's bytes went out.
    outcome : Outcome
        What came of it so far.
    events_sent : int
        Stream events written before the end, the cut or the hang-up.
    """

    index: int
    api: Api
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, object]
    stream: bool
    conversation: Mapping[str, object] | None = None
    rejection: ProviderError | None = None
    reply: Reply | None = None
    timing: Timing = Timing()
    outcome: Outcome = Outcome.PENDING
    events_sent: int = 0
    _changed: threading.Condition = field(default_factory=threading.Condition, repr=False)

    @property
    def provider(self) -> Provider:
        """Whose rules judged it."""
        return PROVIDER_OF[self.api]

    @property
    def judged_body(self) -> Mapping[str, object]:
        """What the provider's rules judge: :attr:`conversation` if any, else :attr:`body`."""
        return self.conversation if self.conversation is not None else self.body

    def answer(self, reply: Reply, timing: Timing | None = None) -> None:
        """Answer this pending exchange with ``reply``, sent as ``timing`` says.

        Raises
        ------
        ValueError
            If the exchange was already answered, rejected or abandoned.
        """
        with self._changed:
            if self.outcome is not Outcome.PENDING or self.reply is not None:
                raise ValueError(
                    f"exchange {self.index} is {self.outcome.value}: only a pending "
                    "exchange can be answered"
                )
            self.reply = reply
            self.timing = timing or Timing()
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> Outcome:
        """Block until the exchange is over (or ``timeout`` seconds pass);
        the outcome then."""
        with self._changed:
            self._changed.wait_for(lambda: self.outcome.is_final(), timeout)
            return self.outcome

    # The endpoint's side.

    def _await_reply(self, timeout: float) -> Reply | None:
        with self._changed:
            self._changed.wait_for(
                lambda: self.reply is not None or self.outcome.is_final(), timeout
            )
            return self.reply

    def _settle(self, outcome: Outcome) -> None:
        with self._changed:
            if not self.outcome.is_final():
                self.outcome = outcome
            self._changed.notify_all()
