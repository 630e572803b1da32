"""Cursor: orcmem's sessionStart hook in hooks.json and its MCP server in mcp.json (~/.cursor/ or the project's).

Written from Cursor's documented formats only (cursor.com/docs/agent/hooks, cursor.com/docs/context/mcp): Cursor
ships no npm package the tests could run, so nothing here was seen running in Cursor itself. Of its hook events only
`sessionStart` can add context (`additional_context`): `beforeSubmitPrompt` answers only whether the prompt goes on,
`beforeReadFile`, `beforeShellExecution` and `preToolUse` only allow or deny, `afterFileEdit` and `stop` take no
answer. So Cursor gets the brief and the MCP tools; recall before a prompt or a tool call has no way in.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.models.vocabulary import HookName
from orcmem.setup_agents import entries
from orcmem.setup_agents.files import FileEdit, Transform, apply_edits, json_transform, load_json_object
from orcmem.setup_agents.report import ItemChange, Scope, SetupOptions, SetupReport

CURSOR_HOOK_NAMES = {"sessionStart": HookName.SESSION_START}  # the one event whose answer reaches the model
HOOKS_VERSION = 1  # hooks.json's documented `version`
CURSOR_COMMANDS = ("cursor", "cursor-agent")  # the editor's launcher and its command-line agent


def cursor_paths(scope: Scope, *, home: Path, project_dir: Path) -> tuple[Path, Path]:
    """(hooks.json, mcp.json) of a scope: ~/.cursor/ for the user, the project's .cursor/ for a project."""
    if scope == "user":
        folder = home / ".cursor"
    elif scope == "project":
        folder = project_dir / ".cursor"
    else:
        raise ValidationError(f"scope must be 'user' or 'project', not {scope!r}")
    return folder / "hooks.json", folder / "mcp.json"


def cursor_installed(environ: Mapping[str, str], home: Path) -> bool:
    """Whether Cursor is here: its config folder exists, or `cursor` / `cursor-agent` is on PATH."""
    path = environ.get("PATH", os.defpath)
    return (home / ".cursor").is_dir() or any(shutil.which(name, path=path) for name in CURSOR_COMMANDS)


def cursor_server(command: list[str], profile_home: Path | None = None) -> JsonObject:
    """The `mcpServers` entry of mcp.json (a stdio server: command, args, env)."""
    entry: JsonObject = {"command": command[0], "args": [*command[1:], "mcp"]}
    if profile_home is not None:
        entry["env"] = {HOME_ENV_VAR: str(profile_home)}
    return entry


def _merge_hooks(doc: JsonObject, command: list[str], path: Path) -> list[ItemChange]:
    """Put orcmem's entry (Cursor's flat `{"command": ...}`) in each event, once, where an earlier one of ours was."""
    hooks = entries.hooks_table(doc, path)
    changes = []
    for event, name in CURSOR_HOOK_NAMES.items():
        desired: JsonObject = {"command": entries.hook_line(command, name)}
        listed = (entries.event_groups(hooks, event, path) if hooks is not None else None) or []
        placed = entries.place_ours(listed, desired, entries.is_orcmem_hook)
        if placed is None:
            changes.append(ItemChange(f"hook {event}", "unchanged"))
            continue
        if hooks is None:
            doc.setdefault("version", HOOKS_VERSION)
            hooks = doc["hooks"] = {}
        hooks[event], how = placed
        changes.append(ItemChange(f"hook {event}", how, desired["command"]))
    return changes


def _remove_hooks(doc: JsonObject, path: Path) -> list[ItemChange]:
    """Take orcmem's entries out; emptied lists go, and a file left as `{"version": 1}` goes (orcmem wrote it)."""
    hooks = entries.hooks_table(doc, path)
    if not hooks:
        return []
    changes = []
    for event in CURSOR_HOOK_NAMES:
        listed = entries.event_groups(hooks, event, path) or []
        kept = [entry for entry in listed if not entries.is_orcmem_hook(entry)]
        if len(kept) == len(listed):
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
        changes.append(ItemChange(f"hook {event}", "removed"))
    if changes and not hooks:
        del doc["hooks"]
        if doc == {"version": HOOKS_VERSION}:
            del doc["version"]
    return changes


def _transforms(
    hooks_path: Path, mcp_path: Path, command: list[str] | None, profile_home: Path | None
) -> tuple[Transform, Transform]:
    if command is None:
        return (
            json_transform(hooks_path, lambda doc: _remove_hooks(doc, hooks_path), removing=True),
            json_transform(mcp_path, lambda doc: entries.remove_json_server(doc, mcp_path), removing=True),
        )

    def server(doc: JsonObject) -> list[ItemChange]:
        return [entries.merge_json_server(doc, command, mcp_path, server=lambda c: cursor_server(c, profile_home))]

    return (
        json_transform(hooks_path, lambda doc: _merge_hooks(doc, command, hooks_path), removing=False),
        json_transform(mcp_path, server, removing=False),
    )


def setup_cursor(scope: Scope, *, home: Path, options: SetupOptions) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's Cursor hook and MCP server for a user or project scope;
    `home` is the user's (Cursor keeps ~/.cursor there)."""
    project_dir, remove = options.project_dir, options.remove
    hooks_path, mcp_path = cursor_paths(scope, home=home, project_dir=project_dir)
    command = entries.wired_command(options)
    inside = project_dir if scope == "project" else None  # a repository's files never lead outside it
    hooks_edit, mcp_edit = _transforms(hooks_path, mcp_path, command, options.profile_home)
    edits = [FileEdit(hooks_path, hooks_edit, inside=inside), FileEdit(mcp_path, mcp_edit, inside=inside)]
    files, notes = apply_edits(edits, dry_run=options.dry_run, backup_dir=options.backup_dir)
    if not remove and any(f.changed for f in files):
        notes.append(
            f"Start a new Cursor agent session for the hook and the '{entries.SERVER_NAME}' MCP server to load"
        )
        notes.append("Cursor gets the brief at session start and the MCP tools; its hooks cannot add recall")
        if scope == "project":
            notes.append("Cursor runs a project's hooks only in a trusted workspace")
    return SetupReport("cursor", scope, remove, options.dry_run, tuple(files), tuple(notes))


def cursor_wiring(hooks_path: Path, mcp_path: Path) -> tuple[bool, str]:
    """(wired, what is there) for a Cursor scope: orcmem's sessionStart hook and its MCP server."""
    problems = []
    for path, holds in ((hooks_path, _has_our_hooks), (mcp_path, _has_our_server)):
        try:
            doc = load_json_object(path.read_text(encoding="utf-8"), path)
        except FileNotFoundError:
            problems.append(f"{path} does not exist")
            continue
        except (OSError, UnicodeDecodeError, OrcmemError) as exc:
            problems.append(f"{path} cannot be read: {exc}")
            continue
        problem = holds(doc)
        if problem:
            problems.append(f"{path}: {problem}")
    if problems:
        return False, "; ".join(problems)
    return True, f"hook in {hooks_path}, MCP server in {mcp_path}"


def _has_our_hooks(doc: JsonObject) -> str:
    hooks = doc.get("hooks")
    missing = [
        event
        for event in CURSOR_HOOK_NAMES
        if not (
            isinstance(hooks, dict)
            and isinstance(hooks.get(event), list)
            and any(entries.is_orcmem_hook(e) for e in hooks[event])
        )
    ]
    return f"no orcmem hook for {', '.join(missing)}" if missing else ""


def _has_our_server(doc: JsonObject) -> str:
    servers = doc.get("mcpServers")
    return (
        ""
        if entries.is_orcmem_server(servers.get(entries.SERVER_NAME) if isinstance(servers, dict) else None)
        else "no orcmem MCP server"
    )
