"""The command line, as a user types it: spellings, JSON output, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from orcmem.cli.commands import cli

ID = re.compile(r"^mem_[0-9a-f]{32}$")
DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def test_a_new_users_session(run, project_dir: Path) -> None:
    off = run("add", "--type", "lesson", "--title", "t", "--body", "b", ok=False)
    assert off.exit_code == 1 and "memory is off" in off.stderr and "orcmem memory on" in off.stderr
    status = json.loads(run("memory", "status", "--json").stdout)
    assert (status["enabled"], status["provider"], status["models"]) == (False, "auto", {})
    assert "paused" in status["extraction"]
    run("memory", "on")
    added = run(
        "add",
        "--type",
        "command",
        "--title",
        "Run tests with forks",
        "--body",
        "pytest -p xdist",
        "--topic",
        "test",
        "--file",
        "tests/conftest.py",
        "--confidence",
        "0.8",
    ).stdout.strip()
    assert ID.match(added)
    listed = json.loads(run("list", "--json").stdout)
    assert [m["id"] for m in listed] == [added] and listed[0]["source"] == "user"
    assert listed[0]["files"] == ["tests/conftest.py"]
    assert "Run tests with forks" in run("list").stdout
    hits = json.loads(run("search", "forks", "--json").stdout)
    assert hits[0]["id"] == added and hits[0]["explain"]["word_rank"] == 1
    assert "score" in run("search", "forks", "--explain").stdout
    assert json.loads(run("show", added, "--json").stdout)["confidence"] == 0.8
    assert "0.90" in run("feedback", added, "helpful").stdout
    run("edit", added, "--title", "Run tests in parallel")
    assert json.loads(run("show", added, "--json").stdout)["title"] == "Run tests in parallel"
    assert "added to" in run("export", added, "--to", "CLAUDE.md").stdout
    assert "- Run tests in parallel: pytest -p xdist" in (project_dir / "CLAUDE.md").read_text()
    assert "already in" in run("export", added, "--to", "CLAUDE.md").stdout
    projects = json.loads(run("projects", "--json").stdout)
    assert projects[0]["memories"] == 1 and projects[0]["root_path"] == str(project_dir.resolve())
    run("forget", added)
    assert json.loads(run("list", "--json").stdout) == []
    missing = run("show", added, ok=False)
    assert missing.exit_code == 1 and "No memory" in missing.stderr


def test_merge_is_reported_and_ids_stay(run) -> None:
    run("memory", "on")
    first = run("add", "--type", "decision", "--title", "A", "--body", "a", "--topic", "k").stdout.strip()
    second = run("add", "--type", "decision", "--title", "B", "--body", "b", "--topic", "k")
    assert second.stdout.strip() == first and "merged" in second.stderr


def test_global_scope_and_filters(run) -> None:
    run("memory", "on")
    run("add", "--type", "preference", "--title", "Tabs", "--body", "always", "--scope", "global")
    run("add", "--type", "lesson", "--title", "Local", "--body", "here")
    assert [m["title"] for m in json.loads(run("list", "--scope", "global", "--json").stdout)] == ["Tabs"]
    assert [m["title"] for m in json.loads(run("list", "--type", "lesson", "--json").stdout)] == ["Local"]
    assert json.loads(run("list", "--source", "agent", "--json").stdout) == []
    assert len(json.loads(run("list", "--limit", "1", "--offset", "1", "--json").stdout)) == 1


def test_provider_setting(run) -> None:
    out = run("memory", "provider", "codex", "--model", "gpt-5-mini").stdout
    assert "extraction provider: codex" in out and "gpt-5-mini" in out
    assert json.loads(run("memory", "status", "--json").stdout)["models"] == {"codex": "gpt-5-mini"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "12"], "not a memory id"),
        (["feedback", "mem_" + "0" * 32, "meh"], "Invalid value"),
        (["list", "--limit", "0"], "Invalid value for '--limit'"),
        (["add", "--type", "lesson", "--title", "", "--body", "b"], "title is empty"),
        (["nosuchcommand"], "No such command"),
    ],
)
def test_errors_are_one_line_without_traceback(run, args: list[str], message: str) -> None:
    run("memory", "on")
    result = run(*args, ok=False)
    assert result.exit_code != 0
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_project_option_must_be_a_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--project", str(tmp_path / "missing"), "list"])
    assert result.exit_code == 2 and "is not a folder" in result.stderr


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
    return found


@pytest.mark.parametrize(("name", "command"), _commands(cli))
def test_every_command_has_help_and_is_documented(name: str, command: click.Command) -> None:
    assert command.help and command.help.strip()
    result = CliRunner().invoke(cli, [*name.split(), "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    assert f"orcmem {name}" in DOCS.read_text(), f"`orcmem {name}` is missing from docs/cli.md"


def test_console_script_runs_as_a_program(project_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", "--project", str(project_dir), "memory", "status", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["enabled"] is False


def test_grants_are_listed_and_revoked_from_the_command_line(run, project_dir: Path, orcmem_home: Path) -> None:
    from orcmem.host.workspace import locate
    from orcmem.service.agent_tools import AgentTools
    from orcmem.service.memory_service import MemoryService

    assert "No grants" in run("grants").stdout
    run("memory", "on")
    service = MemoryService.open(orcmem_home)
    project = service.project(locate(project_dir))
    tools = AgentTools(service, project, mode="review", headless=False, auto_approve=False, session_id="s")
    tools.asking(lambda _question: "workspace").record("lesson", "A lesson", "details")
    service.close()
    listed = run("grants").stdout
    assert listed.startswith("1  workspace  memory_write  ") and str(project_dir.resolve()) in listed
    assert json.loads(run("grants", "--json").stdout)[0]["scope"] == "workspace"
    assert run("grants", "revoke", "1").stdout == "revoked grant 1 (workspace)\n"
    missing = run("grants", "revoke", "1", ok=False)
    assert missing.exit_code == 1 and "No grant 1" in missing.stderr


def test_stored_escape_codes_are_shown_never_sent_to_the_terminal(run, project_dir: Path) -> None:
    run("memory", "on")
    added = run("add", "--type", "lesson", "--title", "Clear\x1b[2J\x1b]0;pwned\x07 title", "--body", "a\u202eb").stdout
    memory_id = added.strip()
    for command in (("show", memory_id), ("list",), ("search", "clear title")):
        shown = run(*command).stdout
        assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown, command
        assert "Clear^[[2J^[]0;pwned^G title" in shown, command
    assert "a<U+202E>b" in run("show", memory_id).stdout
    listed = run("list", "--json").stdout
    assert "\\u001b" in listed and "\x1b" not in listed  # JSON escapes them


def test_provenance_is_shown_and_filtered(run, project_dir: Path, orcmem_home: Path) -> None:
    from orcmem.host.workspace import locate
    from orcmem.models.types import NewMemory, Source
    from orcmem.service.memory_service import MemoryService

    run("memory", "on")
    mine = run("add", "--type", "lesson", "--title", "Deploy with blue", "--body", "the blue deploy script").stdout
    service = MemoryService.open(orcmem_home)
    project = service.project(locate(project_dir))
    distilled = NewMemory(  # a lesson goes straight in; a convention from tool text would wait for review
        type="lesson", title="Deploy via curl", body="curl x | sh to deploy", source=Source.EXTRACTION, confidence=0.7
    )
    tool = service.record(project, distilled).memory.id  # a distilled memory that names no provenance: tool text
    service.close()
    listed = run("list").stdout
    assert "from you, written by a person," in listed and "from a run summary, from tool output," in listed
    assert [m["id"] for m in json.loads(run("list", "--provenance", "tool_text", "--json").stdout)] == [tool]
    assert [m["provenance"] for m in json.loads(run("list", "--json").stdout)] == ["tool_text", "person"]
    assert "provenance: tool_text (from tool output)" in run("show", tool).stdout
    assert "provenance: person (written by a person)" in run("show", mine.strip()).stdout
    hits = json.loads(run("search", "deploy", "--provenance", "person", "--json").stdout)
    assert [hit["id"] for hit in hits] == [mine.strip()]
    assert "from tool output" in run("search", "deploy", "--provenance", "tool_text").stdout
    bad = run("list", "--provenance", "gossip", ok=False)
    assert bad.exit_code == 2 and "gossip" in bad.output + bad.stderr
    run("export", tool, "--to", "AGENTS.md")
    assert "- Deploy via curl: curl x | sh to deploy (from tool output)" in (project_dir / "AGENTS.md").read_text()


def test_memory_on_if_unset_never_overrules_a_choice(run) -> None:
    """The plugin's first install turns a new profile on, but not one the user turned off."""
    assert run("memory", "on", "--if-unset").stdout == "memory: on\n"
    run("memory", "off")
    assert "it was turned off before" in run("memory", "on", "--if-unset").stdout
    assert run("memory", "status").stdout.startswith("memory: off\n")
    run("memory", "on")
    assert run("memory", "on", "--if-unset").stdout == "memory: on\n"
