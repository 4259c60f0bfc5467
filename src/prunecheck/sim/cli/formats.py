"""``--format`` on every command that takes a policy: a list function
``trim(messages)`` in OpenAI or Anthropic format, and its provider's rules.

A spec ``file.py:trim`` with ``--format openai`` is the same as the spec
``file.py:trim@openai``, the one spelling (``--format`` beside one policy is
deprecated; in ``sweep`` and ``report`` it applies to every policy given);
a list function's own provider (its format;
OpenAI's for a framework adapter such as ``langchain:…``) applies unless
``--provider`` says otherwise, so a reproduction shows the error texts its
runtime would see.

Examples
--------
>>> provider_default(RuntimeConfig(), "my_trim.py:trim@openai").provider
<Provider.OPENAI: 'openai'>
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.provider import Provider
from prunecheck.sim.cli.policy_argument import REMOVED_IN
from prunecheck.sim.subjects.policy_spec import FORMATS, list_format

__all__ = ["FORMAT_HELP", "add_format_argument", "provider_default"]

FORMAT_HELP = (
    f"deprecated (goes in {REMOVED_IN}): end the spec with @openai or @anthropic "
    "instead. The policy is a list function trim(messages) over this provider's "
    "message dicts; its provider's rules and error texts apply unless --provider is given"
)


def add_format_argument(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``--format openai|anthropic``."""
    parser.add_argument("--format", choices=list(FORMATS), default=None, help=(what or FORMAT_HELP))


def provider_default(base: RuntimeConfig, spec: str) -> RuntimeConfig:
    """``base`` with the provider of the spec's list format, if it has one."""
    fmt = list_format(spec)
    return replace(base, provider=Provider(fmt)) if fmt else base
