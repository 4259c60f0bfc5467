"""``--json``: a checking command's verdict as one JSON document on stdout.

Every checking command (check, search, explore, replay, validate, regress,
import, shrink, sweep) takes ``--json``.  With it, the command's human text goes to
stderr and stdout holds one JSON document only, valid against the versioned
schema ``schemas/verdict-3.json`` (JSON Schema draft 2020-12; version 2
added an agent loop's scenario classes as placements, :mod:`prunecheck.sim.api.loop_documents`;
version 3 says ``vacuous``, not ``safe``, when nothing the verdict is about
was exercised).  The exit
status is the command's own (0 safe, 1 violation, 2 bad input, 3 out of
time); bad input prints its one paragraph on stderr and no document.

The documents are built by the API (:mod:`prunecheck.sim.api.documents`,
:mod:`prunecheck.sim.api.loop_documents`), so every entry point writes the
same one; here a command records its document with :func:`record`, and a
command that records none still gets the common fields (the verdict read
from its exit status).

Examples
--------
>>> doc = document("validate", verdict="safe", exit_status=0)
>>> doc["schema"], doc["schema_version"], doc["verdict"]
('prunecheck/verdict', 3, 'safe')
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from prunecheck.sim.api.documents import SCHEMA_VERSION, VERDICT_OF_STATUS, document
from prunecheck.sim.api.documents import driver_document as _driver_document

__all__ = ["add_json_argument", "driver_document", "record", "run_as_json"]

_ATTR = "json_document"


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """``--json``: the verdict as one JSON document on stdout (human text on stderr)."""
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the verdict as one JSON document on stdout (schema prunecheck/verdict "
        f"version {SCHEMA_VERSION}, schemas/verdict-{SCHEMA_VERSION}.json); the human text "
        "goes to stderr; exit statuses unchanged",
    )


def record(args: argparse.Namespace, doc: dict[str, Any]) -> None:
    """Keep ``doc`` as the command's document (printed by :func:`run_as_json`)."""
    setattr(args, _ATTR, doc)


def run_as_json(args: argparse.Namespace) -> int:
    """Run the command with its stdout sent to stderr; print its document.

    A :class:`~prunecheck.model.errors.PrunecheckError` (bad input) passes
    through: the caller prints its paragraph and stdout stays empty.
    """
    with contextlib.redirect_stdout(sys.stderr):
        status: int = args.func(args)
    doc = getattr(args, _ATTR, None)
    if doc is None:
        doc = document(
            args.command,
            policy=_policy_of(args),
            verdict=VERDICT_OF_STATUS.get(status, "error"),
            exit_status=status,
        )
    doc["exit_status"] = status
    sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    sys.stdout.flush()
    return status


def _policy_of(args: argparse.Namespace) -> str | None:
    policy = getattr(args, "policy", None)
    return policy if isinstance(policy, str) else None


def driver_document(command: str, args: argparse.Namespace, **fields: Any) -> dict[str, Any]:
    """The API's document of a command that is not ``check``
    (:func:`prunecheck.sim.api.documents.driver_document`), recorded as the
    command's document."""
    doc = _driver_document(command, **fields)
    record(args, doc)
    return doc
