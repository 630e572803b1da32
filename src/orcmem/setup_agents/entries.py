"""orcmem's entries in agent configs: how they look, how they are recognised, merged in and taken out.

An entry is orcmem's when it runs orcmem: a command handler whose command line ends in `<orcmem> hook <name>`
(where `<orcmem>` is a program named `orcmem`, or `python -m orcmem`), an `mcp_tool` handler on the `orcmem`
server (earlier versions wrote one for recall; setup replaces it with the command), or an MCP server whose
command line ends in `<orcmem> mcp`. So a moved orcmem (new path) replaces its old entries instead of adding a
second set, and hand-written `orcmem hook stop` entries are taken over, not doubled.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.models.vocabulary import HookName
from orcmem.setup_agents.report import ItemChange, SetupOptions

SERVER_NAME = "orcmem"
# The tools memory speaks before (files read or edited, commands run); anchored, so `Read` is not `ReadMcpResource`.
CLAUDE_ACTING_TOOLS = "Read|Edit|Write|MultiEdit|NotebookEdit|Bash"
CODEX_ACTING_TOOLS = "Bash|apply_patch"  # Codex's shell and patch tools (its matcher aliases Edit|Write to the patch)


def pre_tool_matcher(own_tools: str = f"mcp__{SERVER_NAME}__.*", acting: str = CLAUDE_ACTING_TOOLS) -> str:
    """The PreToolUse matcher: orcmem's own MCP tools (their permission check) and the file and shell tools."""
    return f"^({own_tools}|{acting})$"


PRE_TOOL_MATCHER = pre_tool_matcher()
CODEX_PRE_TOOL_MATCHER = f"^({CODEX_ACTING_TOOLS})$"
TOOL_STATUS = "orcmem: project memory about this"
PROMPT_STATUS = "orcmem: recalling project memory"
START_STATUS = "orcmem: loading project memory"
HOOK_TIMEOUT_SECONDS = 10  # SessionEnd: also lifts Claude Code's 1.5 s budget for session-end hooks
CODEX_SESSION_END_TIMEOUT_SECONDS = 3  # Codex cuts a longer SessionEnd timeout to this, with a warning
MCP_STARTUP_TIMEOUT_SECONDS = 20

# Events orcmem manages and the `orcmem hook` name each runs.
HOOK_NAMES = {  # the agent's hook event -> `orcmem hook NAME`
    "SessionStart": HookName.SESSION_START,
    "UserPromptSubmit": HookName.PROMPT,
    "PreToolUse": HookName.PRE_TOOL_USE,
    "Stop": HookName.STOP,
    "SessionEnd": HookName.SESSION_END,
}
GEMINI_HOOK_NAMES = {  # Gemini CLI's events: the brief, recall before each prompt, the turn's end, the session's end
    "SessionStart": HookName.SESSION_START,
    "BeforeAgent": HookName.PROMPT,
    "AfterAgent": HookName.STOP,
    "SessionEnd": HookName.SESSION_END,
}
MANAGED_EVENTS = tuple(dict.fromkeys([*HOOK_NAMES, *GEMINI_HOOK_NAMES]))

_PROGRAM_NAMES = {"orcmem", "orcmem.exe"}
# Parts of the path of a program run from a tool's cache: uv's (uvx, `uv run --with`; wherever UV_CACHE_DIR puts it,
# its environments sit in versioned `archive-vN`, `builds-vN` or `environments-vN` folders) and `pipx run`'s.
_EPHEMERAL_PATH = re.compile(r"/(?:archive|builds|environments)-v\d+/|/\.cache/uv/|/pipx/\.cache/|/\.cache/pipx/")


@dataclass(frozen=True)
class HookSpec:
    """One of orcmem's hook handlers and where it goes: the event and, for tool events, the matcher."""

    event: str
    handler: JsonObject
    matcher: str | None = None

    def group(self) -> JsonObject:
        """The matcher group orcmem adds: its own, holding only this handler."""
        group: JsonObject = {"matcher": self.matcher} if self.matcher is not None else {}
        group["hooks"] = [dict(self.handler)]
        return group


def default_orcmem_command() -> list[str]:
    """How to run the orcmem that is running now, by absolute path: its console script, else `python -m orcmem`."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in _PROGRAM_NAMES and argv0.is_file():
        return [str(argv0.absolute())]
    script = Path(sys.executable).parent / "orcmem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "orcmem"]


def ephemeral_reason(program: str) -> str | None:
    """Why a program's path will not last (a tool's run cache), or None when it will."""
    if _EPHEMERAL_PATH.search(program):
        return f"{program} lives in a tool's run cache (uvx, uv run --with, pipx run), which is cleaned without notice"
    return None


def checked_command(orcmem_command: Sequence[str] | None, *, allow_ephemeral: bool = False) -> list[str]:
    """The command as a list, refused unless its program is an absolute path (hooks run with the agent's PATH)
    that will still be there tomorrow (unless `allow_ephemeral`)."""
    command = default_orcmem_command() if orcmem_command is None else list(orcmem_command)
    if not command or not all(isinstance(part, str) and part for part in command):
        raise ValidationError("the orcmem command must be a non-empty list of non-empty strings")
    if not Path(command[0]).is_absolute():
        raise ValidationError(f"the orcmem command must start with an absolute path, not {command[0]!r}")
    reason = ephemeral_reason(command[0])
    if reason is not None and not allow_ephemeral:
        raise ValidationError(
            f"{reason}: the agent's hooks would break when it goes. Install orcmem to stay "
            "(`scripts/install` from a checkout, or `uv tool install .` there) and run this again from there, "
            "or pass --allow-ephemeral to write it anyway."
        )
    if not _runs_orcmem(command):
        raise ValidationError(
            f"{shlex.join(command)!r} does not look like orcmem (a program named orcmem or -m orcmem)"
        )
    return command


def wired_command(options: SetupOptions) -> list[str] | None:
    """The checked orcmem command a setup writes into the agent's files; None when it takes orcmem out."""
    return None if options.remove else checked_command(options.orcmem_command, allow_ephemeral=options.allow_ephemeral)


def shell_command(command: list[str], *args: str) -> str:
    """A POSIX shell command line (both agents run hook commands through a shell), each word quoted as needed."""
    return shlex.join([*command, *args])


def hook_line(command: list[str], name: str) -> str:
    """The shell line an agent runs for `orcmem hook NAME` (the shape `is_orcmem_hook` recognises)."""
    return shell_command(command, "hook", name)


def _program_name(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def _runs_orcmem(words: list[str]) -> bool:
    """True when these words start orcmem: ... /path/orcmem, or ... python -m orcmem."""
    if words and _program_name(words[-1]) in _PROGRAM_NAMES:
        return True
    return len(words) >= 2 and words[-2:] == ["-m", "orcmem"]


def _words(command: JsonValue, args: JsonValue) -> list[str] | None:
    if not isinstance(command, str):
        return None
    if isinstance(args, list) and args and all(isinstance(a, str) for a in args):
        return [command, *args]  # exec form: `command` is the program itself
    try:
        return shlex.split(command)
    except ValueError:
        return None


def is_orcmem_hook(handler: JsonValue) -> bool:
    """True for a hook handler that runs `orcmem hook ...` or calls a tool on the orcmem MCP server."""
    if not isinstance(handler, dict):
        return False
    kind = handler.get("type", "command")
    if kind == "mcp_tool":
        return handler.get("server") == SERVER_NAME
    if kind != "command":
        return False
    words = _words(handler.get("command"), handler.get("args"))
    return words is not None and len(words) >= 3 and words[-2] == "hook" and _runs_orcmem(words[:-2])


def place_ours(
    listed: list[JsonValue], desired: JsonObject, is_ours: Callable[[JsonValue], bool]
) -> tuple[list[JsonValue], Literal["added", "updated"]] | None:
    """`listed` with orcmem's entry `desired` in it once, where an older one of ours was (the user's entries kept),
    and whether it was "added" or "updated"; None when it is there already, alone."""
    ours = [index for index, entry in enumerate(listed) if is_ours(entry)]
    if len(ours) == 1 and listed[ours[0]] == desired:
        return None
    kept = [entry for index, entry in enumerate(listed) if index not in ours[1:]]
    if ours:
        kept[ours[0]] = desired  # the later ones of ours were dropped, so the first keeps its place
    else:
        kept.append(desired)
    return kept, "updated" if ours else "added"


def is_orcmem_server(entry: JsonValue) -> bool:
    """True for an MCP server entry (JSON or TOML) whose command line is `<orcmem> mcp`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return False
    words = [entry["command"], *args]
    return len(words) >= 2 and words[-1] == "mcp" and _runs_orcmem(words[:-1])


def command_handler(
    command: list[str], event: str, status: str | None = None, *, timeout: int = HOOK_TIMEOUT_SECONDS
) -> JsonObject:
    """A command handler running `orcmem hook <name>` for the event, with orcmem's timeout."""
    handler: JsonObject = {
        "type": "command",
        "command": hook_line(command, HOOK_NAMES[event]),
        "timeout": timeout,
    }
    if status:
        handler["statusMessage"] = status
    return handler


# --- hooks in the Claude Code / Codex JSON shape -------------------------------------------------------------


def _handlers(group: JsonValue) -> list[JsonValue]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def event_groups(hooks: JsonObject, event: str, path: Path) -> list[JsonValue] | None:
    """An event's list in a hooks table (None: no entry); anything but a list is an OrcmemError naming it."""
    groups = hooks.get(event)
    if groups is not None and not isinstance(groups, list):
        raise OrcmemError(f"{path}: hooks.{event} is not a list; fix it, then run again (nothing was changed)")
    return groups


def hooks_table(doc: JsonObject, path: Path) -> JsonObject | None:
    """The document's `hooks` object (None: there is none); anything but an object is an OrcmemError naming it."""
    hooks = doc.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise OrcmemError(f'{path}: "hooks" is not an object; fix it, then run again (nothing was changed)')
    return hooks


def _strip_ours(groups: list[JsonValue], replace: tuple[int, JsonObject] | None = None) -> list[JsonValue]:
    """The groups without orcmem's handlers (or with one group replaced); a group left empty by that goes."""
    result = []
    for index, group in enumerate(groups):
        if replace is not None and index == replace[0]:
            result.append(replace[1])
            continue
        handlers = _handlers(group)
        if not any(is_orcmem_hook(h) for h in handlers):
            result.append(group)  # the user's, even an empty one
            continue
        kept = [h for h in handlers if not is_orcmem_hook(h)]
        if kept:
            result.append({**group, "hooks": kept})
    return result


def _describe(spec: HookSpec) -> str:
    handler = spec.handler
    if handler.get("type") == "mcp_tool":
        return f"mcp_tool {handler['server']}/{handler['tool']}"
    return str(handler.get("command", ""))


def _item(event: str) -> str:
    return f"hook {event}"


def merge_hooks(doc: JsonObject, specs: list[HookSpec], path: Path) -> list[ItemChange]:
    """Put each spec's handler in place (once per event) and take orcmem's handlers out of managed events it left."""
    hooks = hooks_table(doc, path)
    created = hooks is None
    hooks = {} if hooks is None else hooks
    wanted = {spec.event: spec for spec in specs}
    changes: list[ItemChange] = []
    for event in MANAGED_EVENTS:
        groups = event_groups(hooks, event, path)
        spec = wanted.get(event)
        if spec is None:
            if groups and any(is_orcmem_hook(h) for g in groups for h in _handlers(g)):
                _set_or_drop(hooks, event, _strip_ours(groups))
                changes.append(ItemChange(_item(event), "removed"))
            continue
        groups = [] if groups is None else groups
        desired = spec.group()
        ours = [i for i, g in enumerate(groups) if any(is_orcmem_hook(h) for h in _handlers(g))]
        if not ours:
            hooks[event] = [*groups, desired]
            changes.append(ItemChange(_item(event), "added", _describe(spec)))
            continue
        count = sum(1 for i in ours for h in _handlers(groups[i]) if is_orcmem_hook(h))
        if count == 1 and groups[ours[0]] == desired:
            changes.append(ItemChange(_item(event), "unchanged"))
            continue
        first = ours[0]
        if all(is_orcmem_hook(h) for h in _handlers(groups[first])):
            hooks[event] = _strip_ours(groups, replace=(first, desired))  # in the place it had
        else:
            hooks[event] = [*_strip_ours(groups), desired]
        changes.append(ItemChange(_item(event), "updated", _describe(spec)))
    if created and any(c.action != "unchanged" for c in changes):
        doc["hooks"] = hooks
    return changes


def _set_or_drop(hooks: JsonObject, event: str, groups: list[JsonValue]) -> None:
    if groups:
        hooks[event] = groups
    else:
        del hooks[event]


def remove_hooks(doc: JsonObject, path: Path) -> list[ItemChange]:
    """Take orcmem's handlers out of the events it manages; containers emptied by that go too."""
    hooks = hooks_table(doc, path)
    if not hooks:
        return []
    changes = []
    for event in MANAGED_EVENTS:
        groups = event_groups(hooks, event, path)
        if groups and any(is_orcmem_hook(h) for g in groups for h in _handlers(g)):
            _set_or_drop(hooks, event, _strip_ours(groups))
            changes.append(ItemChange(_item(event), "removed"))
    if changes and not hooks:
        del doc["hooks"]
    return changes


# --- MCP server in JSON (`mcpServers`) ---------------------------------------------------------------------------


def server_item() -> str:
    """The report's name for the MCP server entry."""
    return f"MCP server {SERVER_NAME}"


# In Claude Code the pre-tool-use hook applies the session's permission mode to orcmem's writes, so the server
# itself must not ask a second time; ownership rules still hold in this mode.
CLAUDE_SERVER_ENV = {"ORCMEM_MCP_MODE": "accept-edits"}


def json_server(command: list[str]) -> JsonObject:
    """Claude Code's stdio server entry for `orcmem mcp`."""
    return {"type": "stdio", "command": command[0], "args": [*command[1:], "mcp"], "env": dict(CLAUDE_SERVER_ENV)}


def servers_table(doc: JsonObject, path: Path, key: str = "mcpServers") -> JsonObject | None:
    """The agent's table of MCP servers (`mcpServers`; OpenCode's `mcp`), None when there is none."""
    servers = doc.get(key)
    if servers is not None and not isinstance(servers, dict):
        raise OrcmemError(f'{path}: "{key}" is not an object; fix it, then run again (nothing was changed)')
    return servers


def merge_json_server(
    doc: JsonObject,
    command: list[str],
    path: Path,
    *,
    server: Callable[[list[str]], JsonObject] = json_server,
) -> ItemChange:
    """Register orcmem under `mcpServers` (the entry `server` builds), keeping extra fields the user gave it (env)."""
    servers = servers_table(doc, path)
    desired = server(command)
    given_env = desired.get("env")
    wanted_env: JsonObject = given_env if isinstance(given_env, dict) else {}
    detail = shell_command([desired["command"], *desired["args"]])
    if servers is None:
        doc["mcpServers"] = {SERVER_NAME: desired}
        return ItemChange(server_item(), "added", detail)
    entry = servers.get(SERVER_NAME)
    if not isinstance(entry, dict):
        servers[SERVER_NAME] = desired
        return ItemChange(server_item(), "added" if entry is None else "updated", detail)
    env: JsonObject = entry["env"] if isinstance(entry.get("env"), dict) else {}
    same_env = all(env.get(k) == v for k, v in wanted_env.items())
    if same_env and all(entry.get(k) == v for k, v in desired.items() if k != "env"):
        return ItemChange(server_item(), "unchanged")
    kept = {k: v for k, v in entry.items() if k not in {"url", "headers"}}
    if env or wanted_env:
        desired["env"] = {**env, **wanted_env}  # the user's own variables stay
    servers[SERVER_NAME] = {**desired, **{k: v for k, v in kept.items() if k not in desired}}
    return ItemChange(server_item(), "updated", detail)


def remove_json_server(
    doc: JsonObject,
    path: Path,
    *,
    key: str = "mcpServers",
    is_ours: Callable[[JsonValue], bool] = is_orcmem_server,
) -> list[ItemChange]:
    """Take orcmem's server out of the `key` table (only if it runs orcmem); an emptied table goes too."""
    servers = servers_table(doc, path, key)
    if not servers or SERVER_NAME not in servers:
        return []
    if not is_ours(servers[SERVER_NAME]):
        return [ItemChange(server_item(), "unchanged", "it does not run orcmem, so it was left as it is")]
    del servers[SERVER_NAME]
    if not servers:
        del doc[key]
    return [ItemChange(server_item(), "removed")]
