"""prunecheck.model: the functional core.

Plain data and free functions: contexts and their unit index, policies,
gates, the runtime step, provider rules, incidents and traces.  No SimPy,
no files, no clock; randomness only through a ``random.Random`` passed in.
"""

from .actions import Clear, Evict, Proposal, Summarize
from .boundary import Violation, ViolationReason, check_prune, is_commit_boundary
from .context import Context, Message, Role
from .errors import ConfigError, PolicyError, PrunecheckError, TraceError, TranscriptError
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
