"""prunecheck.model: the functional core.

Plain data and free functions: contexts and their unit index, policies,
gates, the runtime step, provider rules, incidents and traces.  No SimPy,
no files, no clock; randomness only through a ``random.Random`` passed in.

Submodules load on first use (PEP 562), so that ``import prunecheck.model.gates``
(what the runtime-side guard needs) does not pull in the runtime, traces and
provider rules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .actions import Clear, Evict, Proposal, Summarize
    from .boundary import Violation, ViolationReason, check_prune, is_commit_boundary
    from .context import Context, Message, Role
    from .errors import (
        ConfigError,
        PolicyError,
        PolicyTimeout,
        PrunecheckError,
        TraceError,
        TranscriptError,
    )
    from .events import (
        AssistantChunk,
        BudgetCheck,
        CallSpec,
        Effect,
        Event,
        ExternalWrite,
        FailureReason,
        Invoke,
        IssueBatch,
        NewSession,
        ResultChunk,
        Retry,
        SystemPrompt,
        ToolFailure,
        UserMessage,
    )
    from .gates import Gate
    from .incidents import Incident, IncidentKind
    from .policies import BUILTINS, ContextView, Policy, as_policy, builtin_policy
    from .provider import Provider
    from .runtime import (
        CheckAt,
        Repair,
        RetryMode,
        RuntimeConfig,
        RuntimeState,
        StepResult,
        StreamLoss,
        apply,
        initial_state,
        step,
    )
    from .trace import Trace, replay

__all__ = [
    "BUILTINS",
    "AssistantChunk",
    "BudgetCheck",
    "CallSpec",
    "CheckAt",
    "Clear",
    "ConfigError",
    "Context",
    "ContextView",
    "Effect",
    "Event",
    "Evict",
    "ExternalWrite",
    "FailureReason",
    "Gate",
    "Incident",
    "IncidentKind",
    "Invoke",
    "IssueBatch",
    "Message",
    "NewSession",
    "Policy",
    "PolicyError",
    "PolicyTimeout",
    "Proposal",
    "Provider",
    "PrunecheckError",
    "Repair",
    "ResultChunk",
    "Retry",
    "RetryMode",
    "Role",
    "RuntimeConfig",
    "RuntimeState",
    "StepResult",
    "StreamLoss",
    "Summarize",
    "SystemPrompt",
    "ToolFailure",
    "Trace",
    "TraceError",
    "TranscriptError",
    "UserMessage",
    "Violation",
    "ViolationReason",
    "apply",
    "as_policy",
    "builtin_policy",
    "check_prune",
    "initial_state",
    "is_commit_boundary",
    "replay",
    "step",
]

_LAZY: dict[str, str] = {
    "AssistantChunk": "events",
    "BUILTINS": "policies",
    "BudgetCheck": "events",
    "CallSpec": "events",
    "CheckAt": "runtime",
    "Clear": "actions",
    "ConfigError": "errors",
    "Context": "context",
    "ContextView": "policies",
    "Effect": "events",
    "Event": "events",
    "Evict": "actions",
    "ExternalWrite": "events",
    "FailureReason": "events",
    "Gate": "gates",
    "Incident": "incidents",
    "IncidentKind": "incidents",
    "Invoke": "events",
    "IssueBatch": "events",
    "Message": "context",
    "NewSession": "events",
    "Policy": "policies",
    "PolicyError": "errors",
    "PolicyTimeout": "errors",
    "Proposal": "actions",
    "Provider": "provider",
    "PrunecheckError": "errors",
    "Repair": "runtime",
    "ResultChunk": "events",
    "Retry": "events",
    "RetryMode": "runtime",
    "Role": "context",
    "RuntimeConfig": "runtime",
    "RuntimeState": "runtime",
    "StepResult": "runtime",
    "StreamLoss": "runtime",
    "Summarize": "actions",
    "SystemPrompt": "events",
    "ToolFailure": "events",
    "Trace": "trace",
    "TraceError": "errors",
    "TranscriptError": "errors",
    "UserMessage": "events",
    "Violation": "boundary",
    "ViolationReason": "boundary",
    "apply": "runtime",
    "as_policy": "policies",
    "builtin_policy": "policies",
    "check_prune": "boundary",
    "initial_state": "runtime",
    "is_commit_boundary": "boundary",
    "replay": "trace",
    "step": "runtime",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'prunecheck.model' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
