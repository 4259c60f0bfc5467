"""The observability products' own log formats: the readers :mod:`.reading` asks first.

Most stacks export OpenTelemetry spans that :mod:`.spans` reads as they are
(OpenLLMetry, Pydantic Logfire and Arize Phoenix write ``gen_ai.*`` or
OpenInference attributes).  The others get one module each:

* :mod:`.langfuse`: the spans the Langfuse SDK sends (``langfuse.observation.*``
  attributes), read span by span (:data:`SPAN_READERS`);
* :mod:`.mlflow`: MLflow traces (``Trace.to_json()``: ``info`` and ``data.spans``);
* :mod:`.agents_tracing`: the OpenAI Agents SDK's own traces and spans, as a
  trace processor writes their ``export()`` (one JSON object a line).

A record reader (:class:`RecordReader`) takes whole records, may need all of
them before it knows a conversation (a span names its trace, the trace its
group), and gives its requests (whole or :class:`~.records.Incomplete`) at
the end.  ``request_of_body``
(:mod:`.sent`) is the part they share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from prunecheck.sim.ingest import agents_tracing, langfuse, mlflow
from prunecheck.sim.ingest.records import Incomplete, LoggedRequest, Source
from prunecheck.sim.ingest.spans import ToolRun

__all__ = ["RECORD_READERS", "SPAN_READERS", "Found", "RecordReader", "Thin"]

#: What a record reader gives: a request, or one the log shows only in part.
Found = LoggedRequest | Incomplete
#: What a record reader passes each whole request through before keeping it.
Thin = Callable[[LoggedRequest], LoggedRequest]


class RecordReader(Protocol):
    """A reader of one product's whole records (see the module notes)."""

    #: The records, in words, for errors: "an MLflow trace".
    what: str
    #: Records seen before (the same trace or span id): read once.
    duplicates: int

    def takes(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` is one of this product's records."""
        ...

    def add(self, record: Mapping[str, Any], source: Source) -> None:
        """Keep one record (read where ``source`` says)."""
        ...

    def finish(self) -> Iterator[Found]:
        """The requests, whole or incomplete, of every record kept."""
        ...

    def runs(self) -> dict[str, list[ToolRun]]:
        """The tool runs its records hold, by conversation (after
        :meth:`finish`): what rebuilds a failed call whose request is not
        logged (:mod:`.recovery`)."""
        ...


#: Record readers, a fresh one per log read, given the user's conversation
#: field (``--key``), if any, and what to pass each request through before
#: keeping it until :meth:`RecordReader.finish` (the reader of the log shares
#: the messages it has seen: memory follows what the log says once).
RECORD_READERS: tuple[Callable[[str | None, Thin], RecordReader], ...] = (
    mlflow.TraceReader,
    agents_tracing.ProcessorReader,
)

#: Readers of one stack's attributes on an OpenTelemetry span, asked before
#: the GenAI / OpenInference reader: each gives the request, a gap sentence,
#: or None when the span is not its stack's.
SPAN_READERS = (langfuse.request_of_span,)
