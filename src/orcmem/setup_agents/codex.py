"""Codex: orcmem's MCP server in ~/.codex/config.toml (formatting and comments kept) and its hooks in hooks.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orcmem.models.data_shapes import JsonObject
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.entries import (
    CODEX_PRE_TOOL_MATCHER,
    CODEX_SESSION_END_TIMEOUT_SECONDS,
    MCP_STARTUP_TIMEOUT_SECONDS,
    PROMPT_STATUS,
    SERVER_NAME,
    START_STATUS,
    HookSpec,
    command_handler,
    is_orcmem_hook,
    is_orcmem_server,
    merge_hooks,
    remove_hooks,
    server_item,
    shell_command,
    wired_command,
)
from orcmem.setup_agents.files import FileEdit, Outcome, Transform, apply_edits, json_transform
from orcmem.setup_agents.report import ItemChange, SetupOptions, SetupReport

TRUST_NOTE = "Codex runs new or changed hooks only once they are trusted: open /hooks in Codex and trust orcmem's hooks"


def codex_hook_specs(command: list[str], *, session_end: bool = True) -> list[HookSpec]:
    """orcmem's Codex hooks: SessionStart, UserPromptSubmit, PreToolUse (memory about a shell command or a patch's
    files), Stop and (newer builds; older ones skip it) SessionEnd."""
    specs = [
        HookSpec("SessionStart", command_handler(command, "SessionStart", START_STATUS)),
        HookSpec("UserPromptSubmit", command_handler(command, "UserPromptSubmit", PROMPT_STATUS)),
        HookSpec("PreToolUse", command_handler(command, "PreToolUse"), matcher=CODEX_PRE_TOOL_MATCHER),
        HookSpec("Stop", command_handler(command, "Stop")),
    ]
    if session_end:
        handler = command_handler(command, "SessionEnd", timeout=CODEX_SESSION_END_TIMEOUT_SECONDS)
        specs.append(HookSpec("SessionEnd", handler))
    return specs


def _hooks_transform(path: Path, specs: list[HookSpec] | None) -> Transform:
    if specs is None:
        return json_transform(path, lambda doc: remove_hooks(doc, path), removing=True)
    return json_transform(path, lambda doc: merge_hooks(doc, specs, path), removing=False)


def _trailing_newlines(text: str) -> int:
    return len(text) - len(text.rstrip("\n"))


def _tidy_end(new: str, old: str | None) -> str:
    """tomlkit leaves a blank line where a table was added or taken out at the end; keep the file's own ending."""
    allowed = max(1, _trailing_newlines(old or ""))
    if _trailing_newlines(new) > allowed:
        new = new.rstrip("\n") + "\n" * allowed
    return new


def _server_values(command: list[str]) -> JsonObject:
    return {"command": command[0], "args": [*command[1:], "mcp"], "startup_timeout_sec": MCP_STARTUP_TIMEOUT_SECONDS}


def _config_notes(doc: Any, path: Path) -> list[str]:
    notes = []
    features = doc.get("features")
    if isinstance(features, dict) and (features.get("hooks") is False or features.get("codex_hooks") is False):
        notes.append(f"Hooks are turned off in {path} ([features] hooks = false); orcmem's hooks will not run")
    hooks = doc.get("hooks")
    if isinstance(hooks, dict) and any(
        is_orcmem_hook(handler)
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
    ):
        notes.append(f"{path} also defines orcmem hooks under [hooks]; remove those so each hook runs once")
    return notes


def _profile_env(entry: Any, profile_home: Path | None) -> bool:
    """Carry the profile into the server's environment (Codex starts MCP servers with a minimal one, so without it
    the server opens the default profile while the hooks use $ORCMEM_HOME); True when that changed the entry."""
    if profile_home is None:
        return False
    import tomlkit

    env = entry.get("env")
    if not isinstance(env, dict):
        env = tomlkit.inline_table()
        entry["env"] = env
    if env.get(HOME_ENV_VAR) == str(profile_home):
        return False
    env[HOME_ENV_VAR] = str(profile_home)
    return True


def _edit_config(doc: Any, command: list[str] | None, path: Path, profile_home: Path | None = None) -> list[ItemChange]:
    import tomlkit

    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise OrcmemError(f"{path}: mcp_servers is not a table; fix it, then run again (nothing was changed)")
    entry = None if servers is None else servers.get(SERVER_NAME)
    if command is None:
        if servers is None or entry is None:
            return []
        if not is_orcmem_server(entry):
            return [ItemChange(server_item(), "unchanged", "it does not run orcmem, so it was left as it is")]
        del servers[SERVER_NAME]
        if not servers and getattr(servers, "is_super_table", lambda: False)():
            del doc["mcp_servers"]  # an implicit [mcp_servers] that only held orcmem's; the user's own header stays
        return [ItemChange(server_item(), "removed")]
    values = _server_values(command)
    detail = shell_command([values["command"], *values["args"]])
    if isinstance(entry, dict):
        same = all(entry.get(k) == v for k, v in values.items())
        for key, value in values.items():
            entry[key] = value  # in place: the user's other keys, comments and [mcp_servers.orcmem.env] stay
        if not _profile_env(entry, profile_home) and same:
            return [ItemChange(server_item(), "unchanged")]
        return [ItemChange(server_item(), "updated", detail)]
    inline = isinstance(servers, tomlkit.items.InlineTable)
    table = tomlkit.inline_table() if inline else tomlkit.table()
    table.update(values)
    _profile_env(table, profile_home)
    if not inline:
        table.add(tomlkit.nl())  # a blank line before whatever table follows
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        servers[SERVER_NAME] = table
        doc["mcp_servers"] = servers
    else:
        servers[SERVER_NAME] = table
    return [ItemChange(server_item(), "updated" if entry is not None else "added", detail)]


def _config_transform(path: Path, command: list[str] | None, profile_home: Path | None = None) -> Transform:
    def transform(text: str | None) -> Outcome:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            doc = tomlkit.parse(text or "")
            items = _edit_config(doc, command, path, profile_home)
            notes = _config_notes(doc, path) if command is not None else []
            new = tomlkit.dumps(doc) if any(i.action != "unchanged" for i in items) else text
        except TOMLKitError as exc:
            raise OrcmemError(
                f"{path} is not valid TOML ({exc}); fix it, then run again (nothing was changed)"
            ) from exc
        if new is None or new == text:
            return Outcome(text, items, notes)
        if command is None and not new.strip():
            return Outcome(None, items, notes)  # it held nothing but orcmem's server: the file goes
        return Outcome(_tidy_end(new, text), items, notes)

    return transform


def setup_codex(
    *, home: Path, options: SetupOptions, codex_home: Path | None = None, session_end: bool = True
) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's MCP server in Codex's config.toml and its hooks in
    hooks.json, under `codex_home` ($CODEX_HOME) or else `home`/.codex (Codex has no project scope)."""
    folder = codex_home if codex_home is not None else home / ".codex"
    remove = options.remove
    command = wired_command(options)
    specs = None if command is None else codex_hook_specs(command, session_end=session_end)
    config, hooks = folder / "config.toml", folder / "hooks.json"
    edits = [
        FileEdit(config, _config_transform(config, command, options.profile_home)),
        FileEdit(hooks, _hooks_transform(hooks, specs)),
    ]
    files, notes = apply_edits(edits, dry_run=options.dry_run, backup_dir=options.backup_dir)
    hooks_report = files[1]
    if not remove and any(i.action in ("added", "updated") for i in hooks_report.items):
        notes.append(TRUST_NOTE)
    if not remove and any(f.changed for f in files):
        notes.append("Start a new Codex session for the MCP server to connect")
    return SetupReport("codex", "user", remove, options.dry_run, tuple(files), tuple(notes))
