"""Real agent loops under test (issue 21): the harness owns every await point.

:mod:`.contract` is what a framework adapter implements (:class:`Adapter`,
:class:`Loop`) and what it is given (:class:`Harness`); :mod:`.steps` is the
environment's vocabulary (a schedule).  The adapters live in
:mod:`.frameworks`, one module per framework, importing their framework
lazily.  The scheduler, the ledger, the judge, the scenario classes (the
environment's action vocabulary) and the loop ``System`` (:mod:`.system`:
the loop driven by its own enabled actions) are the other modules of this
package.  This package is the subject only: the search, the verdict, the
narrative and the bundle are every subject's (``prunecheck.sim.drivers``,
``.verdicts``, ``.reproductions``; the ``loops-are-a-subject`` contract).
"""

from prunecheck.sim.subjects.loops.contract import (
    Adapter,
    Capability,
    Harness,
    Loop,
    Reply,
    ToolCall,
    ToolFailed,
    ToolSpec,
)

__all__ = [
    "Adapter",
    "Capability",
    "Harness",
    "Loop",
    "Reply",
    "ToolCall",
    "ToolFailed",
    "ToolSpec",
]
