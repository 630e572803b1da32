"""GitHub Copilot CLI: orcmem's hooks in a hooks file of its own and its MCP server in Copilot's MCP config.

User scope: `~/.copilot/hooks/orcmem.json` and `~/.copilot/mcp-config.json` (`$COPILOT_HOME` instead of
`~/.copilot` when set). Project scope: `.github/hooks/orcmem.json` and `.github/mcp.json`. Copilot CLI's hook file
is `{"version": 1, "hooks": {event: [handler, ...]}}`, each handler `{"type": "command", "bash": ..., "timeoutSec":
...}`, with no matcher groups: it reaches the model only through a top-level `additionalContext` on stdout.
"""

from __future__ import annotations

from pathlib import Path

from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.models.vocabulary import HookName
from orcmem.setup_agents.entries import (
    HOOK_TIMEOUT_SECONDS,
    SERVER_NAME,
    hook_line,
    is_orcmem_hook,
    is_orcmem_server,
    merge_json_server,
    place_ours,
    remove_json_server,
    wired_command,
)
from orcmem.setup_agents.files import FileEdit, Transform, apply_edits, json_transform, load_json_object
from orcmem.setup_agents.report import ItemChange, Scope, SetupOptions, SetupReport

HOOKS_FILENAME = "orcmem.json"  # a file of orcmem's own among the hooks files Copilot CLI reads
HOOKS_VERSION = 1
# Copilot CLI's events -> `orcmem hook NAME`: the brief, recall before each prompt, memory before a tool call, the
# turn's end (its payload names the transcript), the session's end.
COPILOT_HOOK_NAMES = {
    "sessionStart": HookName.SESSION_START,
    "userPromptSubmitted": HookName.PROMPT,
    "preToolUse": HookName.PRE_TOOL_USE,
    "agentStop": HookName.STOP,
    "sessionEnd": HookName.SESSION_END,
}


def copilot_state_dir(environ_value: str | None, home: Path) -> Path:
    """Where Copilot CLI keeps its configuration and state: $COPILOT_HOME when set, else ~/.copilot."""
    return Path(environ_value).expanduser() if environ_value else home / ".copilot"


def copilot_paths(scope: Scope, *, state_dir: Path, project_dir: Path) -> tuple[Path, Path]:
    """(hooks file, MCP config) of a scope."""
    if scope == "user":
        return state_dir / "hooks" / HOOKS_FILENAME, state_dir / "mcp-config.json"
    if scope == "project":
        return project_dir / ".github" / "hooks" / HOOKS_FILENAME, project_dir / ".github" / "mcp.json"
    raise ValidationError(f"scope must be 'user' or 'project', not {scope!r}")


def copilot_handler(command: list[str], name: str) -> JsonObject:
    """One of orcmem's hook handlers in Copilot CLI's shape (its timeout in seconds)."""
    return {"type": "command", "bash": hook_line(command, name), "timeoutSec": HOOK_TIMEOUT_SECONDS}


def copilot_server(command: list[str], profile_home: Path | None = None) -> JsonObject:
    """The `mcpServers` entry: a local server with every tool offered (orcmem's own approvals govern its writes)."""
    entry: JsonObject = {"type": "local", "command": command[0], "args": [*command[1:], "mcp"], "tools": ["*"]}
    if profile_home is not None:
        entry["env"] = {HOME_ENV_VAR: str(profile_home)}
    return entry


def _is_ours(handler: JsonValue) -> bool:
    return isinstance(handler, dict) and is_orcmem_hook({"type": "command", "command": handler.get("bash")})


def _hooks(doc: JsonObject, path: Path) -> JsonObject:
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        raise OrcmemError(f'{path}: "hooks" is not an object; fix it, then run again (nothing was changed)')
    for event in COPILOT_HOOK_NAMES:
        if not isinstance(hooks.get(event, []), list):
            raise OrcmemError(f"{path}: hooks.{event} is not a list; fix it, then run again (nothing was changed)")
    return hooks


def merge_copilot_hooks(doc: JsonObject, command: list[str], path: Path) -> list[ItemChange]:
    """Put orcmem's handler in each event's list once (in the place an older one had), the user's kept."""
    hooks = _hooks(doc, path)
    changes = []
    for event, name in COPILOT_HOOK_NAMES.items():
        handlers, desired = list(hooks.get(event, [])), copilot_handler(command, name)
        placed = place_ours(handlers, desired, _is_ours)
        if placed is None:
            changes.append(ItemChange(f"hook {event}", "unchanged"))
            continue
        hooks[event], how = placed
        changes.append(ItemChange(f"hook {event}", how, str(desired["bash"])))
    doc.setdefault("version", HOOKS_VERSION)
    doc["hooks"] = hooks
    return changes


def remove_copilot_hooks(doc: JsonObject, path: Path) -> list[ItemChange]:
    """Take orcmem's handlers out; an emptied event, `hooks` and the version with nothing left go too."""
    if "hooks" not in doc:
        return []
    hooks = _hooks(doc, path)
    changes = []
    for event in COPILOT_HOOK_NAMES:
        handlers = hooks.get(event, [])
        kept = [handler for handler in handlers if not _is_ours(handler)]
        if len(kept) == len(handlers):
            continue
        changes.append(ItemChange(f"hook {event}", "removed"))
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if changes and not hooks:
        del doc["hooks"]
        if doc.get("version") == HOOKS_VERSION and len(doc) == 1:
            del doc["version"]  # a file holding only orcmem's hooks goes whole
    return changes


def _hooks_transform(path: Path, command: list[str] | None) -> Transform:
    if command is None:
        return json_transform(path, lambda doc: remove_copilot_hooks(doc, path), removing=True)
    return json_transform(path, lambda doc: merge_copilot_hooks(doc, command, path), removing=False)


def _servers_transform(path: Path, command: list[str] | None, profile_home: Path | None) -> Transform:
    if command is None:
        return json_transform(path, lambda doc: remove_json_server(doc, path), removing=True)
    build = lambda given: copilot_server(given, profile_home)  # noqa: E731 - one line, read at once
    return json_transform(path, lambda doc: [merge_json_server(doc, command, path, server=build)], removing=False)


def setup_copilot(scope: Scope, *, state_dir: Path, options: SetupOptions) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's Copilot CLI hooks and MCP server for a user or project
    scope; `state_dir` is Copilot CLI's folder (~/.copilot or $COPILOT_HOME)."""
    project_dir, remove = options.project_dir, options.remove
    hooks_path, servers_path = copilot_paths(scope, state_dir=state_dir, project_dir=project_dir)
    command = wired_command(options)
    inside = project_dir if scope == "project" else None  # a repository's files never lead outside it
    edits = [
        FileEdit(hooks_path, _hooks_transform(hooks_path, command), inside=inside),
        FileEdit(servers_path, _servers_transform(servers_path, command, options.profile_home), inside=inside),
    ]
    files, notes = apply_edits(edits, dry_run=options.dry_run, backup_dir=options.backup_dir)
    if not remove and any(f.changed for f in files):
        notes.append(f"Start a new Copilot CLI session for the hooks and the '{SERVER_NAME}' MCP server to load")
        if scope == "project":
            notes.append("Copilot CLI runs a project's hooks only in a folder you trusted (`copilot --trust-folder`)")
    return SetupReport("copilot", scope, remove, options.dry_run, tuple(files), tuple(notes))


def copilot_wiring(hooks_path: Path, servers_path: Path) -> tuple[bool, str]:
    """(wired, what is there) for Copilot CLI: orcmem's five hooks in its hooks file, its server in the MCP config."""
    problems = []
    docs = []
    for path in (hooks_path, servers_path):
        try:
            docs.append(load_json_object(path.read_text(encoding="utf-8"), path))
        except FileNotFoundError:
            problems.append(f"{path} does not exist")
            docs.append({})
        except (OSError, UnicodeDecodeError, OrcmemError) as exc:
            problems.append(f"{path} cannot be read: {exc}")
            docs.append({})
    hooks = docs[0].get("hooks")
    events = hooks if isinstance(hooks, dict) else {}
    missing = [e for e in COPILOT_HOOK_NAMES if not any(_is_ours(h) for h in _as_list(events.get(e)))]
    if missing and hooks_path.exists():
        problems.append(f"no orcmem hook for {', '.join(missing)} in {hooks_path}")
    servers = docs[1].get("mcpServers")
    if servers_path.exists() and not is_orcmem_server(servers.get(SERVER_NAME) if isinstance(servers, dict) else None):
        problems.append(f"no orcmem MCP server in {servers_path}")
    if problems:
        return False, "; ".join(problems)
    return True, f"hooks in {hooks_path}, MCP server in {servers_path}"


def _as_list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []
