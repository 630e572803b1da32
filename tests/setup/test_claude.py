"""setup_claude: merged into the user's settings, idempotent, removable, refusing broken files."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.setup_agents.claude import setup_claude
from orcmem.setup_agents.entries import (
    HOOK_NAMES,
    SERVER_NAME,
    checked_command,
    default_orcmem_command,
    is_orcmem_hook,
)
from orcmem.setup_agents.report import SetupOptions
from tests.setup.support import CLAUDE_JSON, CLAUDE_SETTINGS, ORCMEM_BACKUPS, backups, snapshot_tree


def settings_of(home: Path) -> dict[str, Any]:
    return json.loads((home / ".claude" / "settings.json").read_text())


def ours(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for g in doc["hooks"].get(event, []) for h in g["hooks"] if is_orcmem_hook(h)]


def run(home: Path, project: Path, command: list[str] | None, **kwargs: Any):
    scope = kwargs.pop("scope", "user")
    return setup_claude(scope, home=home, options=SetupOptions(project, home / ORCMEM_BACKUPS, command, **kwargs))


def test_user_scope_merges_hooks_and_server_without_touching_the_rest(home: Path, project: Path, orcmem_bin: Path):
    report = run(home, project, [str(orcmem_bin)])

    doc = settings_of(home)
    original = json.loads(CLAUDE_SETTINGS)
    for key in ("$schema", "permissions", "env", "someFutureKey", "model"):
        assert doc[key] == original[key]
    assert list(doc)[: len(original)] == list(original)  # key order kept
    # the user's own hooks stay, first, exactly as they were
    for event, groups in original["hooks"].items():
        assert doc["hooks"][event][: len(groups)] == groups
    assert doc["hooks"]["Notification"] == original["hooks"]["Notification"]
    for event, name in HOOK_NAMES.items():
        (handler,) = ours(doc, event)
        words = shlex.split(handler["command"])
        assert words == [str(orcmem_bin), "hook", name]
        assert Path(words[0]).is_absolute()
        assert handler["type"] == "command" and handler["timeout"] >= 5
    assert ours(doc, "SessionEnd")[0]["timeout"] >= 10  # lifts Claude Code's 1.5 s SessionEnd budget
    (group,) = [g for g in doc["hooks"]["PreToolUse"] if any(is_orcmem_hook(h) for h in g["hooks"])]
    # orcmem's own tools (the permission check) and the file and shell tools (memory about what they touch)
    assert re.fullmatch(group["matcher"], "mcp__orcmem__memory_record") and re.fullmatch(group["matcher"], "Read")
    assert not re.search(group["matcher"], "ReadMcpResourceTool") and not re.search(group["matcher"], "Glob")

    claude = json.loads((home / ".claude.json").read_text())
    expected = json.loads(CLAUDE_JSON)
    assert claude["mcpServers"]["github"] == expected["mcpServers"]["github"]
    assert claude["mcpServers"][SERVER_NAME] == {
        "type": "stdio",
        "command": str(orcmem_bin),
        "args": ["mcp"],
        "env": {"ORCMEM_MCP_MODE": "accept-edits"},
    }
    assert {k: v for k, v in claude.items() if k != "mcpServers"} == {
        k: v for k, v in expected.items() if k != "mcpServers"
    }

    assert report.changed and [f.action for f in report.files] == ["updated", "updated"]
    assert {i.item: i.action for i in report.files[0].items} == {f"hook {e}": "added" for e in HOOK_NAMES}
    assert report.files[1].items[0].action == "added"
    assert any(str(orcmem_bin) in line for line in report.lines())


def test_untouched_text_keeps_its_bytes(home: Path, project: Path, orcmem_bin: Path):
    run(home, project, [str(orcmem_bin)])
    settings = (home / ".claude" / "settings.json").read_text()
    for kept in (
        '"permissions": {"allow": ["Bash(git status)"], "deny": []},',
        '"Notification": [{"hooks": [{"type": "command", "command": "say hi"}]}]',
        '"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash"}]}',
        '"someFutureKey": {"nested": [1, 2.5, null, true]},\n  "model": "opus"\n}\n',
        '{"type": "command", "command": "notify-send \'done\'", "timeout": 5}',
    ):
        assert kept in settings
    claude = (home / ".claude.json").read_text()
    assert claude.startswith('{\n  "numStartups": 42,\n  "theme": "dark",\n  "mcpServers": {\n    "github": {')
    assert claude.endswith('  "userID": "abc123"\n}\n')


def test_second_run_changes_nothing_and_makes_no_backup(home: Path, project: Path, orcmem_bin: Path):
    run(home, project, [str(orcmem_bin)])
    before = snapshot_tree(home)
    report = run(home, project, [str(orcmem_bin)])
    assert not report.changed
    assert all(i.action == "unchanged" for f in report.files for i in f.items)
    assert snapshot_tree(home) == before
    assert len(backups(home)) == 2  # one per file, from the first run


def test_backup_holds_the_original_bytes_and_permissions(home: Path, project: Path, orcmem_bin: Path):
    settings = home / ".claude" / "settings.json"
    settings.chmod(0o600)
    report = run(home, project, [str(orcmem_bin)])
    backup = report.files[0].backup
    assert backup is not None and backup.parent == home / ORCMEM_BACKUPS / settings.parent.relative_to("/")
    assert backup.read_text() == CLAUDE_SETTINGS
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600  # the rewritten file keeps its mode
    assert not [p for p in settings.parent.iterdir() if p.name.endswith(".tmp")]


def test_remove_restores_the_files_exactly(home: Path, project: Path, orcmem_bin: Path):
    run(home, project, [str(orcmem_bin)])
    report = run(home, project, None, remove=True)
    assert (home / ".claude" / "settings.json").read_text() == CLAUDE_SETTINGS
    assert (home / ".claude.json").read_text() == CLAUDE_JSON
    assert {i.action for f in report.files for i in f.items} == {"removed"}
    again = run(home, project, None, remove=True)
    assert not again.changed


def test_files_orcmem_created_are_deleted_on_remove(tmp_path: Path, project: Path, orcmem_bin: Path):
    empty_home = tmp_path / "fresh"
    empty_home.mkdir()
    report = run(empty_home, project, [str(orcmem_bin)])
    assert [f.action for f in report.files] == ["created", "created"]
    assert (empty_home / ".claude" / "settings.json").is_file()  # the missing folder was made
    assert stat.S_IMODE((empty_home / ".claude.json").stat().st_mode) == 0o600
    assert backups(empty_home) == []  # nothing existed to back up
    report = run(empty_home, project, None, remove=True)
    assert [f.action for f in report.files] == ["deleted", "deleted"]
    assert not (empty_home / ".claude" / "settings.json").exists()
    assert not (empty_home / ".claude.json").exists()
    assert backups(empty_home) == []  # they held only orcmem's entries


def test_project_scope_writes_the_project_files(home: Path, project: Path, orcmem_bin: Path):
    before_home = snapshot_tree(home)
    report = run(home, project, [str(orcmem_bin)], scope="project")
    assert snapshot_tree(home) == before_home
    assert [f.path for f in report.files] == [project / ".claude" / "settings.json", project / ".mcp.json"]
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp == {
        "mcpServers": {
            "orcmem": {
                "type": "stdio",
                "command": str(orcmem_bin),
                "args": ["mcp"],
                "env": {"ORCMEM_MCP_MODE": "accept-edits"},
            }
        }
    }
    assert set(json.loads((project / ".claude" / "settings.json").read_text())["hooks"]) == set(HOOK_NAMES)
    run(home, project, None, scope="project", remove=True)
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude" / "settings.json").exists()


def test_a_new_orcmem_path_replaces_the_old_entries(home: Path, project: Path, orcmem_bin: Path, tmp_path: Path):
    run(home, project, ["/old/place/bin/orcmem"])
    report = run(home, project, [str(orcmem_bin)])
    doc = settings_of(home)
    for event in HOOK_NAMES:
        (handler,) = ours(doc, event)
        assert shlex.split(handler["command"])[0] == str(orcmem_bin)
    assert {i.action for i in report.files[0].items} == {"updated"}
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["orcmem"]["command"] == str(orcmem_bin)
    assert report.files[1].items[0].action == "updated"


def test_hand_written_orcmem_hooks_are_taken_over_not_doubled(home: Path, project: Path, orcmem_bin: Path):
    settings = home / ".claude" / "settings.json"
    doc = json.loads(CLAUDE_SETTINGS)
    doc["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "orcmem hook stop", "timeout": 10})
    doc["hooks"]["SessionEnd"] = [{"hooks": [{"type": "command", "command": "orcmem hook session-end"}]}]
    settings.write_text(json.dumps(doc, indent=2))
    run(home, project, [str(orcmem_bin)])
    merged = settings_of(home)
    assert len(ours(merged, "Stop")) == 1 and len(ours(merged, "SessionEnd")) == 1
    assert merged["hooks"]["Stop"][0]["hooks"] == [{"type": "command", "command": "notify-send 'done'", "timeout": 5}]
    assert merged["hooks"]["SessionEnd"][0]["hooks"][0]["command"] == f"{shlex.quote(str(orcmem_bin))} hook session-end"


def test_an_earlier_mcp_tool_prompt_hook_is_replaced_by_the_command(home: Path, project: Path, orcmem_bin: Path):
    """Earlier versions could write an `mcp_tool` recall hook; setup now puts the command hook in its place."""
    run(home, project, [str(orcmem_bin)])
    doc = settings_of(home)
    old = {"type": "mcp_tool", "server": SERVER_NAME, "tool": "memory_recall", "input": {"prompt": "${prompt}"}}
    doc["hooks"]["UserPromptSubmit"][-1]["hooks"] = [old]
    (home / ".claude" / "settings.json").write_text(json.dumps(doc, indent=2))
    report = run(home, project, [str(orcmem_bin)])
    assert any(item.action == "updated" for item in report.files[0].items)
    (handler,) = ours(settings_of(home), "UserPromptSubmit")
    assert handler["type"] == "command" and handler["command"].endswith("hook prompt")
    run(home, project, None, remove=True)
    assert json.loads((home / ".claude" / "settings.json").read_text()) == json.loads(CLAUDE_SETTINGS)


def test_dry_run_reports_but_writes_nothing(home: Path, project: Path, orcmem_bin: Path):
    before = snapshot_tree(home)
    report = run(home, project, [str(orcmem_bin)], dry_run=True)
    assert report.changed and report.dry_run
    assert report.files[0].items[0].action == "added"
    assert snapshot_tree(home) == before
    assert report.lines()[0].startswith("Dry run")
    assert "would be updated" in report.lines()[1]


@pytest.mark.parametrize("broken", ["settings", "claude_json"])
def test_invalid_json_is_refused_and_nothing_is_written(home: Path, project: Path, orcmem_bin: Path, broken: str):
    path = home / ".claude" / "settings.json" if broken == "settings" else home / ".claude.json"
    path.write_text('{"hooks": {,}')
    before = snapshot_tree(home)
    with pytest.raises(OrcmemError, match=str(path).replace(".", r"\.")):
        run(home, project, [str(orcmem_bin)])
    assert snapshot_tree(home) == before


def test_a_hooks_value_of_the_wrong_shape_is_refused(home: Path, project: Path, orcmem_bin: Path):
    (home / ".claude" / "settings.json").write_text('{"hooks": ["not", "an", "object"]}\n')
    before = snapshot_tree(home)
    with pytest.raises(OrcmemError, match="hooks"):
        run(home, project, [str(orcmem_bin)])
    assert snapshot_tree(home) == before


def test_the_command_must_be_absolute_and_orcmem(home: Path, project: Path):
    with pytest.raises(ValidationError, match="absolute"):
        run(home, project, ["orcmem"])
    with pytest.raises(ValidationError, match="orcmem"):
        run(home, project, ["/usr/bin/python3"])
    with pytest.raises(ValidationError):
        run(home, project, [str(Path("/usr/bin/orcmem"))], scope="global")


def test_remove_leaves_someone_elses_orcmem_server(home: Path, project: Path):
    doc = json.loads(CLAUDE_JSON)
    doc["mcpServers"]["orcmem"] = {"type": "http", "url": "https://example.invalid/mcp"}
    (home / ".claude.json").write_text(json.dumps(doc, indent=2) + "\n")
    report = run(home, project, None, remove=True)
    assert json.loads((home / ".claude.json").read_text()) == doc
    assert report.files[1].items[0].action == "unchanged"


def test_a_symlinked_settings_file_is_edited_where_it_lives(home: Path, project: Path, orcmem_bin: Path, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    link = home / ".claude" / "settings.json"
    real.write_text(link.read_text())
    link.unlink()
    link.symlink_to(real)
    run(home, project, [str(orcmem_bin)])
    assert link.is_symlink()
    assert ours(json.loads(real.read_text()), "Stop")


def test_the_hook_commands_run_orcmem_without_path(home: Path, project: Path, orcmem_bin: Path, tmp_path: Path):
    run(home, project, [str(orcmem_bin)])
    (handler,) = ours(settings_of(home), "Stop")
    env = {"ORCMEM_HOME": str(tmp_path / "orcmem-home"), "HOME": str(home), "PATH": "/nonexistent"}
    result = subprocess.run(
        handler["command"], shell=True, input="", capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "{}"  # orcmem's stop hook answered
    assert os.access(shlex.split(handler["command"])[0], os.X_OK)


def test_every_hook_named_exists_in_orcmem():
    from orcmem.hooks.handlers import HOOKS

    assert set(HOOK_NAMES.values()) <= set(HOOKS)


def test_the_default_command_is_this_orcmem_by_absolute_path():
    command = default_orcmem_command()
    assert Path(command[0]).is_absolute()
    assert checked_command(command) == command


@pytest.mark.parametrize(
    "program",
    [
        "/home/dev/.cache/uv/archive-v0/kP3xL0dQ/bin/orcmem",  # uvx orcmem ...
        "/srv/uv-cache/uv/archive-v0/kP3xL0dQ/bin/orcmem",  # uvx with UV_CACHE_DIR elsewhere
        "/tmp/px/uvcache/archive-v0/lXMMiUUhdbawPBfD/bin/orcmem",  # the same, as seen with UV_CACHE_DIR=/tmp/px/uvcache
        "/home/dev/.local/share/pipx/.cache/2f9a0c1e/bin/orcmem",  # pipx run orcmem ...
    ],
)
def test_a_command_in_a_tools_run_cache_is_refused_unless_allowed(tmp_path: Path, program: str) -> None:
    with pytest.raises(ValidationError, match="run cache.*scripts/install.*--allow-ephemeral"):
        setup_claude("user", home=tmp_path, options=SetupOptions(tmp_path, tmp_path / "b", [program]))
    assert list(tmp_path.iterdir()) == []  # nothing was written
    options = SetupOptions(tmp_path, tmp_path / "b", [program], allow_ephemeral=True)
    report = setup_claude("user", home=tmp_path, options=options)
    assert program in (tmp_path / ".claude" / "settings.json").read_text() and report.files


def test_an_installed_tool_or_a_venv_is_a_lasting_command(tmp_path: Path) -> None:
    for program in (
        "/home/dev/.local/bin/orcmem",  # pipx's or uv's shim
        "/home/dev/.local/share/uv/tools/orcmem/bin/orcmem",  # uv tool install
        "/home/dev/project/.venv/bin/orcmem",
        "/opt/orcmem/bin/orcmem",
    ):
        assert checked_command([program]) == [program]


def test_project_scope_leaves_the_repository_as_it_was(home: Path, project: Path, orcmem_bin: Path) -> None:
    (project / ".mcp.json").write_text('{\n  "mcpServers": {\n    "docs": {"command": "docs-mcp"}\n  }\n}\n')
    before = snapshot_tree(project)
    run(home, project, [str(orcmem_bin)], scope="project")
    assert (project / ".claude" / "settings.json").is_file()
    assert backups(project) == [] and len(backups(home / ORCMEM_BACKUPS)) == 1  # .mcp.json's, outside the repo
    run(home, project, None, scope="project", remove=True)
    assert snapshot_tree(project) == before  # byte for byte
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]  # no empty .claude folder left behind
