"""The manifest of a black-box agent: how prunecheck runs it as a subprocess.

A black-box agent is named by ``loop:process:MANIFEST.toml``
(:mod:`prunecheck.sim.subjects.policy_spec`).  The manifest is a small TOML
file beside the agent; relative paths in it are relative to its folder,
which is also the agent's working directory::

    name = "notes-agent"                 # how reports name it
    framework = "openai (Python)"        # what the agent is built on (reports)
    command = ["{python}", "agent.py"]   # the agent's command line
    api = "chat"                         # chat | responses | messages
    input = "argv"                       # argv | stdin
    ready = "^> $"                       # stdin: the line that says "next message?"
    cancel = "sigint"                    # how a turn is cancelled (none by default)
    resume = ["--resume"]                # arguments that continue after a crash
    trims = true                         # the agent trims its own history

    [env]                                # how it is pointed at prunecheck
    OPENAI_BASE_URL = "{base_url}"
    OPENAI_API_KEY = "{api_key}"
    AGENT_HOME = "{store}"
    AGENT_TOOLS = "{tools_url}"

    [persistence]                        # what survives a crash (in {store})
    path = "history.json"
    format = "openai"                    # openai: a JSON list of chat messages; opaque

    [[tools]]                            # the tools the model may call
    name = "read_note"
    description = "Read a note."
    parameters = {type = "object", properties = {name = {type = "string"}}, required = ["name"]}

``{…}`` in ``command`` and ``env`` are filled in when the agent starts
(:data:`PLACEHOLDERS`).  **Input**: ``argv`` runs the command once per user
message, the message as its last argument (the turn ends when the process
exits); ``stdin`` runs it once and writes each message as a line on its
standard input (the turn ends when it prints a line matching ``ready``);
``http`` runs it once and answers its ``GET {input_url}`` with each message
(the turn ends when it asks for the next one: :mod:`.input_hook`).
A manifest that breaks a rule is a :class:`~prunecheck.model.errors.PolicyError`
naming the file, the key and a hint (exit status 2).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from prunecheck.model.errors import PolicyError

from ..loops.contract import Capability, ToolSpec
from .exchange import Api

__all__ = ["PLACEHOLDERS", "Input", "Manifest", "load_manifest"]

#: The placeholders of ``command`` and ``env`` and what each becomes.
PLACEHOLDERS: Mapping[str, str] = {
    "base_url": "the fake endpoint's base URL (http://127.0.0.1:PORT/v1)",
    "api_key": "a placeholder key the endpoint accepts",
    "store": "the folder that survives a crash (the agent's persistence)",
    "tools_url": "the harness's tool hook (POST a call, get its outcome)",
    "mcp_plan": "a plan file naming the tools, for prunecheck's MCP server over stdio "
    "(python -m prunecheck.sim.subjects.blackbox.mcp_server {mcp_plan} --hook {tools_url})",
    "mcp_url": "prunecheck's MCP server over streamable HTTP, its tools the harness's",
    "input_url": "(input = 'http') GET it for the next user message: "
    '{"text": ...}, or {"end": true} when the run ends',
    "python": "the Python running prunecheck",
    "manifest_dir": "the manifest's folder",
}


class Input(StrEnum):
    """How a user message reaches the agent."""

    ARGV = "argv"
    STDIN = "stdin"
    HTTP = "http"


_KEYS = {
    "name", "framework", "command", "api", "input", "ready", "cancel", "resume", "trims",
    "env", "persistence", "tools",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Manifest:
    """A loaded manifest (see the module's docs).

    Attributes
    ----------
    path : Path
        The manifest file (resolved).
    name, framework : str
        How reports name the agent and what it is built on.
    command : tuple[str, ...]
        The command line, placeholders unfilled.
    api : Api
        The model API it speaks.
    input : Input
        How user messages reach it.
    ready : str
        (stdin) The pattern of the line that ends a turn.
    cancel : str
        ``"sigint"`` or ``""`` (no cancel).
    resume : tuple[str, ...] or None
        Arguments that continue after a crash, or None (no resume).
    trims : bool
        Whether the agent trims its own history.
    env : Mapping[str, str]
        Environment variables, placeholders unfilled.
    persistence : str
        The file in the store that survives a crash ("" if none).
    history_format : str
        ``"openai"`` (a JSON list of chat messages: what the agent holds)
        or ``"opaque"``.
    tools : tuple[ToolSpec, ...]
        The tools the model may call.
    """

    path: Path
    name: str
    framework: str
    command: tuple[str, ...]
    api: Api = Api.CHAT
    input: Input = Input.ARGV
    ready: str = ""
    cancel: str = ""
    resume: tuple[str, ...] | None = None
    trims: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    persistence: str = ""
    history_format: str = "opaque"
    tools: tuple[ToolSpec, ...] = ()

    @property
    def folder(self) -> Path:
        """The manifest's folder: the agent's working directory."""
        return self.path.parent

    def capabilities(self) -> frozenset[Capability]:
        """The scenario classes the agent supports, from what the manifest declares."""
        caps: set[Capability] = set()
        if self.cancel:
            caps.add(Capability.CANCEL)
        if self.persistence:
            caps.add(Capability.CRASH_NEW_MESSAGE)
            if self.resume is not None:
                caps.add(Capability.CRASH_RESUME)
        if self.trims:
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)


def _bad(path: Path, rule: str, hint: str) -> PolicyError:
    return PolicyError(f"manifest {str(path)!r}", rule, hint)


def _strings(path: Path, key: str, value: object, *, empty: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(
            path,
            f"{key} must be a list of strings.",
            f'for example {key} = ["{{python}}", "agent.py"].',
        )
    if not value and not empty:
        raise _bad(path, f"{key} is empty.", "name the program and its arguments.")
    return tuple(value)


def _choice(
    path: Path, doc: Mapping[str, object], key: str, enum: type[StrEnum], default: str
) -> str:
    value = doc.get(key, default)
    allowed = [e.value for e in enum]
    if value not in allowed:
        raise _bad(path, f"{key} is {value!r}, not one of {', '.join(allowed)}.",
                   f"for example {key} = {allowed[0]!r}.")  # fmt: skip
    return str(value)


def _tools(path: Path, raw: object) -> tuple[ToolSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise _bad(path, "needs at least one [[tools]] table (name, description, parameters).",
                   "name each tool the agent offers the model, with its JSON schema.")  # fmt: skip
    tools = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"]:
            raise _bad(path, f"tools[{i}] has no name.", 'give it name = "..."')
        params = t.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict):
            raise _bad(
                path,
                f"tools[{i}] ({t['name']}): parameters must be a table (a JSON schema).",
                'for example parameters = {type = "object", properties = {}}.',
            )
        tools.append(ToolSpec(t["name"], str(t.get("description", "")), params))
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise _bad(
            path, f"tools repeat a name ({', '.join(names)}).", "give each tool its own name."
        )
    return tuple(tools)


def _placeholders(path: Path, key: str, values: tuple[str, ...]) -> None:
    for value in values:
        for name in re.findall(r"{(\w*)}", value):
            if name not in PLACEHOLDERS:
                raise _bad(
                    path,
                    f"{key} uses the placeholder {{{name}}}, which is unknown.",
                    f"use one of: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}.",
                )


def load_manifest(where: str | Path) -> Manifest:
    """Read and check a manifest.

    Raises
    ------
    PolicyError
        If the file is missing, not TOML, or breaks a rule (naming the key).
    """
    path = Path(where).resolve()
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _bad(path, f"cannot be read ({exc.strerror or exc}).",
                   "give the path of the agent's manifest (a .toml file).") from None  # fmt: skip
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _bad(
            path, f"is not TOML ({exc}).", "see docs/how-to/black-box.md for its keys."
        ) from None
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise _bad(
            path,
            f"has unknown key(s) {', '.join(unknown)}.",
            f"the keys are: {', '.join(sorted(_KEYS))}.",
        )
    command = _strings(path, "command", doc.get("command"))
    env_raw = doc.get("env", {})
    if not isinstance(env_raw, dict) or not all(isinstance(v, str) for v in env_raw.values()):
        raise _bad(
            path, "[env] must map names to strings.", 'for example OPENAI_BASE_URL = "{base_url}".'
        )
    env = {str(k): str(v) for k, v in env_raw.items()}
    _placeholders(path, "command", command)
    _placeholders(path, "env", tuple(env.values()))
    mode = Input(_choice(path, doc, "input", Input, "argv"))
    ready = doc.get("ready", "")
    if not isinstance(ready, str) or (mode is Input.STDIN and not ready):
        raise _bad(
            path,
            "input = 'stdin' needs ready, the pattern of the line the agent prints "
            "when it waits for the next message.",
            'for example ready = "^> $" (flush it: PYTHONUNBUFFERED=1 is set).',
        )
    if mode is Input.HTTP and "{input_url}" not in " ".join([*command, *env.values()]):
        raise _bad(
            path,
            "input = 'http' needs the placeholder {input_url} in command or [env]: "
            "the agent asks it for each user message.",
            'for example [env] INPUT_URL = "{input_url}" (GET it: {"text": ...} or {"end": true}).',
        )
    try:
        re.compile(ready)
    except re.error as exc:
        raise _bad(path, f"ready is not a regular expression ({exc}).", "escape it.") from None
    cancel = doc.get("cancel", "")
    if cancel not in ("", "sigint", "none"):
        raise _bad(
            path,
            f"cancel is {cancel!r}, not 'sigint' or 'none'.",
            "cancel = 'sigint' cancels a turn with Ctrl-C.",
        )
    resume = doc.get("resume")
    persistence = doc.get("persistence", {})
    if not isinstance(persistence, dict) or not isinstance(persistence.get("path", ""), str):
        raise _bad(
            path,
            "[persistence] must hold path (a file in {store}).",
            'for example path = "history.json".',
        )
    fmt = persistence.get("format", "opaque")
    if fmt not in ("openai", "opaque"):
        raise _bad(path, f"[persistence] format is {fmt!r}, not 'openai' or 'opaque'.",
                   "openai: the file is a JSON list of chat messages.")  # fmt: skip
    trims = doc.get("trims", False)
    if not isinstance(trims, bool):
        raise _bad(
            path, "trims must be true or false.", "trims = true if the agent trims its history."
        )
    name = doc.get("name", path.parent.name)
    framework = doc.get("framework", "process")
    return Manifest(
        path=path,
        name=str(name),
        framework=str(framework),
        command=command,
        api=Api(_choice(path, doc, "api", Api, "chat")),
        input=mode,
        ready=ready,
        cancel="" if cancel == "none" else str(cancel),
        resume=None if resume is None else _strings(path, "resume", resume, empty=True),
        trims=trims,
        env=env,
        persistence=str(persistence.get("path", "")),
        history_format=str(fmt),
        tools=_tools(path, doc.get("tools")),
    )
