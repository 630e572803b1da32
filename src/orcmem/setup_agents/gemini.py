"""Gemini CLI: orcmem's hooks and MCP server in one settings.json (~/.gemini/ or the project's .gemini/)."""

from __future__ import annotations

from pathlib import Path

from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.setup_agents import entries
from orcmem.setup_agents.entries import (
    GEMINI_HOOK_NAMES,
    HOOK_TIMEOUT_SECONDS,
    SERVER_NAME,
    HookSpec,
    hook_line,
    is_orcmem_hook,
    is_orcmem_server,
    wired_command,
)
from orcmem.setup_agents.files import FileEdit, Transform, apply_edits, json_transform, load_json_object
from orcmem.setup_agents.report import ItemChange, Scope, SetupOptions, SetupReport

HOME_ENV = (
    "GEMINI_CLI_HOME"  # Gemini CLI's stand-in for the user's home: its settings are under $GEMINI_CLI_HOME/.gemini
)


def gemini_hook_specs(command: list[str]) -> list[HookSpec]:
    """orcmem's Gemini CLI hooks (its timeouts are in milliseconds)."""
    return [
        HookSpec(
            event,
            {
                "name": f"orcmem-{name}",
                "type": "command",
                "command": hook_line(command, name),
                "timeout": HOOK_TIMEOUT_SECONDS * 1000,
            },
        )
        for event, name in GEMINI_HOOK_NAMES.items()
    ]


def gemini_server(command: list[str], profile_home: Path | None = None) -> JsonObject:
    """The `mcpServers` entry: trusted, since `gemini -p` silently leaves an untrusted server's tools out (orcmem's
    own approvals still govern its writes)."""
    entry: JsonObject = {"command": command[0], "args": [*command[1:], "mcp"], "trust": True}
    if profile_home is not None:
        entry["env"] = {HOME_ENV_VAR: str(profile_home)}
    return entry


def gemini_settings_path(scope: Scope, *, home: Path, project_dir: Path) -> Path:
    """The settings.json of a scope (`home` is the user's home, or $GEMINI_CLI_HOME)."""
    if scope == "user":
        return home / ".gemini" / "settings.json"
    if scope == "project":
        return project_dir / ".gemini" / "settings.json"
    raise ValidationError(f"scope must be 'user' or 'project', not {scope!r}")


def _transform(path: Path, command: list[str] | None, profile_home: Path | None) -> Transform:
    if command is None:

        def take_out(doc: JsonObject) -> list[ItemChange]:
            return [*entries.remove_hooks(doc, path), *entries.remove_json_server(doc, path)]

        return json_transform(path, take_out, removing=True)
    specs = gemini_hook_specs(command)

    def put_in(doc: JsonObject) -> list[ItemChange]:
        hooks = entries.merge_hooks(doc, specs, path)
        server = entries.merge_json_server(doc, command, path, server=lambda c: gemini_server(c, profile_home))
        return [*hooks, server]

    return json_transform(path, put_in, removing=False, notes=lambda doc: _notes(doc, path))


def _notes(doc: JsonObject, path: Path) -> list[str]:
    hooks_config = doc.get("hooksConfig")
    if isinstance(hooks_config, dict) and hooks_config.get("enabled") is False:
        return [f"Hooks are turned off in {path} (hooksConfig.enabled: false); orcmem's hooks will not run"]
    return []


def setup_gemini(scope: Scope, *, home: Path, options: SetupOptions) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's Gemini CLI hooks and MCP server for a user or project
    scope; `home` is where Gemini CLI keeps .gemini ($GEMINI_CLI_HOME or the user's)."""
    project_dir, remove = options.project_dir, options.remove
    settings = gemini_settings_path(scope, home=home, project_dir=project_dir)
    command = wired_command(options)
    inside = project_dir if scope == "project" else None  # a repository's files never lead outside it
    edit = FileEdit(settings, _transform(settings, command, options.profile_home), inside=inside)
    files, notes = apply_edits([edit], dry_run=options.dry_run, backup_dir=options.backup_dir)
    if not remove and any(f.changed for f in files):
        notes.append(f"Start a new Gemini CLI session for the hooks and the '{SERVER_NAME}' MCP server to load")
        if scope == "project":
            notes.append("Gemini CLI warns once about a project's hooks before it runs them")
    return SetupReport("gemini", scope, remove, options.dry_run, tuple(files), tuple(notes))


def gemini_wiring(path: Path) -> tuple[bool, str]:
    """(wired, what is there) for a Gemini CLI settings.json: orcmem's four hooks, its server, hooks not turned off."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return False, f"{path} does not exist"
    except (OSError, UnicodeDecodeError) as exc:
        return False, f"{path} cannot be read: {exc}"
    try:
        doc = load_json_object(text, path)
    except OrcmemError as exc:
        return False, str(exc)
    hooks = doc.get("hooks")
    missing = [event for event in GEMINI_HOOK_NAMES if not _has_our_hook(hooks, event)]
    servers = doc.get("mcpServers")
    server = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    problems = [f"no orcmem hook for {', '.join(missing)}"] if missing else []
    if not is_orcmem_server(server):
        problems.append("no orcmem MCP server")
    problems.extend(_notes(doc, path))
    if problems:
        return False, f"{path}: {'; '.join(problems)}"
    return True, f"hooks and MCP server in {path}"


def _has_our_hook(hooks: JsonValue, event: str) -> bool:
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return isinstance(groups, list) and any(
        is_orcmem_hook(handler)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
    )
