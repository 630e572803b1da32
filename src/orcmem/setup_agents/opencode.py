"""OpenCode: orcmem's plugin (`plugin/orcmem.js`, which runs `orcmem hook ...`) and its MCP server in opencode.json,
in the user's config folder (~/.config/opencode) or the project's (opencode.json, .opencode/plugin/)."""

from __future__ import annotations

import json
from pathlib import Path

from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.setup_agents.entries import (
    SERVER_NAME,
    hook_line,
    is_orcmem_server,
    remove_json_server,
    server_item,
    servers_table,
    shell_command,
    wired_command,
)
from orcmem.setup_agents.files import FileEdit, Outcome, Transform, apply_edits, json_transform, load_json_object
from orcmem.setup_agents.report import ItemChange, Scope, SetupOptions, SetupReport

CONFIG_NAME = "opencode.json"
PLUGIN_NAME = "orcmem.js"
PLUGIN_ITEM = "plugin orcmem.js"
PLUGIN_MARK = "// orcmem for OpenCode: written by `orcmem setup opencode`"  # the first line: the file is orcmem's
_TEMPLATE = Path(__file__).with_name("opencode_plugin.js")


def opencode_paths(scope: Scope, *, config_dir: Path, project_dir: Path) -> tuple[Path, Path]:
    """(opencode.json, the plugin file) of a scope."""
    if scope == "user":
        return config_dir / CONFIG_NAME, config_dir / "plugin" / PLUGIN_NAME
    if scope == "project":
        return project_dir / CONFIG_NAME, project_dir / ".opencode" / "plugin" / PLUGIN_NAME
    raise ValidationError(f"scope must be 'user' or 'project', not {scope!r}")


def plugin_text(command: list[str], profile_home: Path | None = None) -> str:
    """The plugin's source: the template with orcmem's command (and $ORCMEM_HOME when set) written in."""
    environment = {HOME_ENV_VAR: str(profile_home)} if profile_home is not None else {}
    text = _TEMPLATE.read_text(encoding="utf-8")
    return text.replace("__ORCMEM_COMMAND__", json.dumps(command)).replace(
        "__ORCMEM_ENVIRONMENT__", json.dumps(environment)
    )


def is_orcmem_plugin(text: str | None) -> bool:
    """True for a plugin file orcmem wrote."""
    return text is not None and text.startswith(PLUGIN_MARK)


def opencode_server(command: list[str], profile_home: Path | None = None) -> JsonObject:
    """The `mcp` entry: a local server running `orcmem mcp` (with $ORCMEM_HOME when set)."""
    entry: JsonObject = {"type": "local", "command": [*command, "mcp"]}
    if profile_home is not None:
        entry["environment"] = {HOME_ENV_VAR: str(profile_home)}
    return entry


def runs_orcmem_mcp(entry: JsonValue) -> bool:
    """True for an `mcp` entry whose command list is `<orcmem> mcp`."""
    if not isinstance(entry, dict):
        return False
    words = entry.get("command")
    if not isinstance(words, list) or not words or not all(isinstance(word, str) for word in words):
        return False
    return is_orcmem_server({"command": words[0], "args": words[1:]})


def merge_server(doc: JsonObject, desired: JsonObject, path: Path) -> ItemChange:
    """Register orcmem under `mcp`, keeping fields and variables the user gave its entry."""
    servers = servers_table(doc, path, "mcp")
    detail = shell_command(desired["command"])
    if servers is None:
        doc["mcp"] = {SERVER_NAME: desired}
        return ItemChange(server_item(), "added", detail)
    entry = servers.get(SERVER_NAME)
    if not isinstance(entry, dict) or not runs_orcmem_mcp(entry):
        servers[SERVER_NAME] = desired
        return ItemChange(server_item(), "added" if entry is None else "updated", detail)
    given = entry.get("environment")
    environment = {**(given if isinstance(given, dict) else {}), **desired.get("environment", {})}
    merged = {**entry, **desired, **({"environment": environment} if environment else {})}
    if merged.get("enabled") is False:
        merged["enabled"] = True  # setup asks for it to run
    if merged == entry:
        return ItemChange(server_item(), "unchanged")
    servers[SERVER_NAME] = merged
    return ItemChange(server_item(), "updated", detail)


def _config_transform(path: Path, command: list[str] | None, profile_home: Path | None) -> Transform:
    if command is None:
        return json_transform(
            path, lambda doc: remove_json_server(doc, path, key="mcp", is_ours=runs_orcmem_mcp), removing=True
        )
    desired = opencode_server(command, profile_home)
    return json_transform(path, lambda doc: [merge_server(doc, desired, path)], removing=False)


def _plugin_transform(path: Path, command: list[str] | None, profile_home: Path | None) -> Transform:
    def transform(text: str | None) -> Outcome:
        if text is not None and not is_orcmem_plugin(text):
            if command is None:
                return Outcome(text, [ItemChange(PLUGIN_ITEM, "unchanged", "not orcmem's, so it was left as it is")])
            raise OrcmemError(f"{path} is not orcmem's plugin; move it away, then run again (nothing was changed)")
        if command is None:
            return Outcome(None, [ItemChange(PLUGIN_ITEM, "removed")] if text is not None else [])
        wanted = plugin_text(command, profile_home)
        if text == wanted:
            return Outcome(text, [ItemChange(PLUGIN_ITEM, "unchanged")])
        change = ItemChange(PLUGIN_ITEM, "added" if text is None else "updated", hook_line(command, "..."))
        return Outcome(wanted, [change])

    return transform


def setup_opencode(scope: Scope, *, config_dir: Path, options: SetupOptions) -> SetupReport:
    """Add (or with `options.remove` take out) orcmem's OpenCode plugin and MCP server for a user or project scope;
    `config_dir` is OpenCode's config folder (~/.config/opencode or $XDG_CONFIG_HOME/opencode)."""
    config, plugin = opencode_paths(scope, config_dir=config_dir, project_dir=options.project_dir)
    remove, profile_home = options.remove, options.profile_home
    command = wired_command(options)
    inside = options.project_dir if scope == "project" else None  # a repository's files never lead outside it
    edits = [  # the plugin first: its folder, emptied, goes before the config folder is looked at
        FileEdit(plugin, _plugin_transform(plugin, command, profile_home), inside=inside),
        FileEdit(config, _config_transform(config, command, profile_home), inside=inside),
    ]
    files, notes = apply_edits(edits, dry_run=options.dry_run, backup_dir=options.backup_dir)
    if not remove and any(f.changed for f in files):
        notes.append(f"Start a new OpenCode session for the plugin and the '{SERVER_NAME}' MCP server to load")
    return SetupReport("opencode", scope, remove, options.dry_run, tuple(files), tuple(notes))


def opencode_wiring(config: Path, plugin: Path) -> tuple[bool, str]:
    """(wired, what is there) for one OpenCode scope: orcmem's plugin file and its MCP server, not turned off."""
    try:
        source = plugin.read_text(encoding="utf-8")
        text = config.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        return False, f"{exc.filename} does not exist"
    except (OSError, UnicodeDecodeError) as exc:
        return False, f"cannot read the OpenCode config: {exc}"
    problems = [] if is_orcmem_plugin(source) else [f"{plugin} is not orcmem's plugin"]
    try:
        doc = load_json_object(text, config)
    except OrcmemError as exc:
        return False, str(exc)
    servers = doc.get("mcp")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if not runs_orcmem_mcp(entry):
        problems.append(f"no orcmem MCP server in {config}")
    elif isinstance(entry, dict) and entry.get("enabled") is False:
        problems.append(f"the orcmem MCP server is turned off in {config} (enabled: false)")
    if problems:
        return False, "; ".join(problems)
    return True, f"plugin {plugin} and MCP server in {config}"


def opencode_wired(config_dir: Path, project_dir: Path) -> tuple[bool, str]:
    """(wired, what is there): the user's scope, else this project's (wired for the project alone is wired)."""
    wired, detail = opencode_wiring(*opencode_paths("user", config_dir=config_dir, project_dir=project_dir))
    if wired:
        return wired, detail
    project_wired, project_detail = opencode_wiring(
        *opencode_paths("project", config_dir=config_dir, project_dir=project_dir)
    )
    return (True, project_detail) if project_wired else (False, detail)
