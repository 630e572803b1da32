"""Claude Code: orcmem's hooks in settings.json and its MCP server in ~/.claude.json or the project's .mcp.json."""

from __future__ import annotations

from pathlib import Path

from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import ValidationError
from orcmem.setup_agents.entries import (
    PRE_TOOL_MATCHER,
    PROMPT_STATUS,
    SERVER_NAME,
    START_STATUS,
    HookSpec,
    command_handler,
    merge_hooks,
    merge_json_server,
    remove_hooks,
    remove_json_server,
    wired_command,
)
from orcmem.setup_agents.files import FileEdit, Transform, apply_edits, json_transform
from orcmem.setup_agents.report import Scope, SetupOptions, SetupReport


def claude_hook_specs(command: list[str]) -> list[HookSpec]:
    """orcmem's Claude Code hooks: SessionStart, UserPromptSubmit, PreToolUse (on its own tools, the permission
    check; on the file and shell tools, memory about what the call touches), Stop, SessionEnd."""
    return [
        HookSpec("SessionStart", command_handler(command, "SessionStart", START_STATUS)),
        HookSpec("UserPromptSubmit", command_handler(command, "UserPromptSubmit", PROMPT_STATUS)),
        HookSpec("PreToolUse", command_handler(command, "PreToolUse"), matcher=PRE_TOOL_MATCHER),
        HookSpec("Stop", command_handler(command, "Stop")),
        HookSpec("SessionEnd", command_handler(command, "SessionEnd")),
    ]


def claude_paths(scope: Scope, *, home: Path, project_dir: Path) -> tuple[Path, Path]:
    """(settings file for the hooks, file for the MCP server) of a scope."""
    if scope == "user":
        return home / ".claude" / "settings.json", home / ".claude.json"
    if scope == "project":
        return project_dir / ".claude" / "settings.json", project_dir / ".mcp.json"
    raise ValidationError(f"scope must be 'user' or 'project', not {scope!r}")


def _settings_transform(path: Path, specs: list[HookSpec] | None) -> Transform:
    if specs is None:
        return json_transform(path, lambda doc: remove_hooks(doc, path), removing=True)
    return json_transform(path, lambda doc: merge_hooks(doc, specs, path), removing=False)


def _servers_transform(path: Path, command: list[str] | None, *, user_scope: bool) -> Transform:
    notes = (lambda doc: _local_scope_notes(doc, path)) if user_scope else None
    if command is None:
        return json_transform(path, lambda doc: remove_json_server(doc, path), removing=True, notes=notes)
    return json_transform(path, lambda doc: [merge_json_server(doc, command, path)], removing=False, notes=notes)


def _local_scope_notes(doc: JsonObject, path: Path) -> list[str]:
    """A local-scope `orcmem` server (`claude mcp add` default) overrides the user-scope one in that project."""
    projects = doc.get("projects")
    if not isinstance(projects, dict):
        return []
    shadowed = sorted(
        name
        for name, project in projects.items()
        if isinstance(project, dict)
        and isinstance(project.get("mcpServers"), dict)
        and SERVER_NAME in project["mcpServers"]
    )
    if not shadowed:
        return []
    return [
        f"{path} also has a local-scope '{SERVER_NAME}' MCP server for {', '.join(shadowed)}; it takes precedence "
        f"there (remove it with `claude mcp remove {SERVER_NAME} --scope local` in that project)"
    ]


def setup_claude(scope: Scope, *, home: Path, options: SetupOptions) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's Claude Code hooks and MCP server for a user or project
    scope; `home` is the user's (Claude Code keeps ~/.claude and ~/.claude.json there)."""
    project_dir, remove = options.project_dir, options.remove
    settings, servers = claude_paths(scope, home=home, project_dir=project_dir)
    command = wired_command(options)
    specs = None if command is None else claude_hook_specs(command)
    inside = project_dir if scope == "project" else None  # a repository's files never lead outside it
    edits = [
        FileEdit(settings, _settings_transform(settings, specs), inside=inside),
        FileEdit(
            servers,
            _servers_transform(servers, command, user_scope=scope == "user"),
            new_mode=0o600 if scope == "user" else None,  # ~/.claude.json also holds the user's account state
            inside=inside,
        ),
    ]
    files, notes = apply_edits(edits, dry_run=options.dry_run, backup_dir=options.backup_dir)
    if not remove and any(f.changed for f in files):
        notes.append("Claude Code reads hook changes at once; start a new session for the MCP server to connect")
        if scope == "project":
            notes.append(
                f"{servers.name} and .claude/settings.json now hold this machine's path to orcmem; "
                "interactive sessions ask once before using a project MCP server"
            )
    return SetupReport("claude", scope, remove, options.dry_run, tuple(files), tuple(notes))
