"""Real agent loops under test (issue 21): the harness owns every await point.

:mod:`.contract` is what a framework adapter implements (:class:`Adapter`,
:class:`Loop`) and what it is given (:class:`Harness`); :mod:`.steps` is the
environment's vocabulary (a schedule).  The adapters live in
:mod:`.frameworks`, one module per framework, importing their framework
lazily.  The scheduler, the ledger, the judge and the loop ``System`` are the
other modules of this package.
"""

from prunecheck.sim.loops.contract import (
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
