"""A repository cannot make orcmem run its programs: real git repositories whose `.git/config` names a script (that
leaves a marker file) for every setting that runs one, through the freshness check (the service, `orcmem check`,
the MCP server's background watch), team identity, the person id and the repository's top folder."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

import orcmem
from orcmem.host import code_state
from orcmem.host.git_process import run_git
from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Project, Source
from orcmem.rules.freshness import blob_id
from orcmem.service.memory_service import MemoryService
from orcmem.team.identity import team_key
from tests.helpers import run_watch

APP = "def load_config(path):\n    return read(path)\n"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args], check=True, capture_output=True
    )


def plain_repo(tmp_path: Path) -> Path:
    """A repository with three committed files."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "old.py").write_text("def helper():\n    return 1\n" * 20)
    (root / "gone.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def turn_hostile(root: Path, tmp_path: Path) -> Path:
    """Delete, rename and change a file each, then name `evil.sh` for every program setting of the repository's
    config (and route every file through its filter and diff drivers); the marker file the script writes."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction", "fsmonitor-watchman"):
        (hooks / hook).symlink_to(script)
    git(root, "rm", "-q", "gone.py")
    git(root, "commit", "-q", "-m", "drop gone.py")
    git(root, "mv", "old.py", "new.py")  # staged: git's rename detection reads the working tree's file
    (root / "app.py").write_text(APP.replace("load_config", "read_settings"))
    (root / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")
    settings = {
        "core.fsmonitor": str(script),
        "core.hooksPath": str(hooks),
        "core.pager": str(script),
        "core.sshCommand": str(script),
        "core.askPass": str(script),
        "core.editor": str(script),
        "credential.helper": f"!{script}",
        "diff.external": str(script),
        "diff.evil.command": str(script),
        "diff.evil.textconv": str(script),
        "filter.evil.clean": str(script),
        "filter.evil.smudge": str(script),
        "filter.evil.process": str(script),
        "merge.evil.driver": str(script),
        "log.showSignature": "true",
        "gpg.program": str(script),
        "remote.origin.url": "git@github.com:Acme/App.git",
        "user.email": "repo-person@example.com",
    }
    for key, value in settings.items():
        git(root, "config", key, value)
    marker.unlink(missing_ok=True)
    return marker


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    root = plain_repo(tmp_path)
    return root, turn_hostile(root, tmp_path)


@pytest.fixture
def svc(orcmem_home: Path):
    service = MemoryService.open(orcmem_home)
    service.settings.set_enabled(True)
    yield service
    service.close()


def hostile_project(svc: MemoryService, tmp_path: Path) -> tuple[Path, Path, Project]:
    """Memories citing a file that then changes, one renamed and one deleted; the repository then turns hostile."""
    root = plain_repo(tmp_path)
    project = svc.project(locate(root))
    assert project is not None
    for title, body, cited in (
        ("Config", "`load_config` reads the env first", "app.py"),
        ("Helper", "`helper` returns one", "old.py"),
        ("Gone", "`x` is one", "gone.py"),
    ):
        svc.record(project, NewMemory(type="lesson", title=title, body=body, source=Source.USER, files=(cited,)))
    return root, turn_hostile(root, tmp_path), project


def test_the_freshness_check_runs_none_of_the_repositorys_programs(svc: MemoryService, tmp_path: Path) -> None:
    root, marker, project = hostile_project(svc, tmp_path)
    report = svc.check_freshness(project, everything=True)
    assert not marker.exists(), marker.read_text()
    reasons = " | ".join(reason for _id, _title, reason, _since in report.stale)
    assert "`load_config` no longer in app.py" in reasons  # the check still works: git answered
    assert code_state.renames_since(root, "HEAD") == {"old.py": "new.py"}
    assert code_state.deletion_dates(root, ["gone.py"]).keys() == {"gone.py"}
    assert ("new.py", "def helper():") in code_state.definition_lines(root, {"helper"})  # git grep, filters off
    assert code_state.tracked_files(root)["app.py"] == blob_id(APP.encode())
    assert not marker.exists(), marker.read_text()


def test_orcmem_check_and_the_mcp_servers_watch_run_none_of_them(
    svc: MemoryService, tmp_path: Path, orcmem_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orcmem.cli.commands import cli

    root, marker, _project = hostile_project(svc, tmp_path)
    out = CliRunner().invoke(cli, ["--project", str(root), "check", "--all"], catch_exceptions=False).output
    assert "possibly stale" in out
    assert not marker.exists(), marker.read_text()
    run_watch(orcmem_home, root, monkeypatch, lambda watch: watch.checks > 0, "the background check")
    assert not marker.exists(), marker.read_text()


def test_team_identity_the_person_and_the_top_folder_run_none_of_them(
    hostile: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from orcmem.host.person import PERSON_ENV, person_from_environment

    root, marker = hostile
    assert team_key(root) == "github.com/acme/app"
    assert run_git(root, "rev-parse", "--show-toplevel") == f"{root.resolve()}\n".encode()
    monkeypatch.delenv(PERSON_ENV, raising=False)
    monkeypatch.chdir(root)
    assert person_from_environment() == "repo-person@example.com"
    assert not marker.exists(), marker.read_text()


def test_an_inherited_git_dir_does_not_point_git_at_another_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """orcmem started from inside a git hook inherits GIT_DIR; it must still ask the project it names."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    for root, url in ((mine, "https://github.com/acme/mine"), (other, "https://github.com/acme/other")):
        root.mkdir()
        git(root, "init", "-q")
        git(root, "remote", "add", "origin", url)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "nothing-here"))
    assert team_key(mine) == "github.com/acme/mine"
    assert run_git(mine, "rev-parse", "--show-toplevel") == f"{mine.resolve()}\n".encode()


def test_a_driver_named_so_that_c_would_split_it_makes_git_answer_nothing(
    tmp_path: Path, hostile: tuple[Path, Path]
) -> None:
    """`-c filter.a=b.clean=` would set `filter.a` to `b.clean=`: such a driver cannot be switched off, so the
    command that would run it is not run at all (its caller falls back as outside git)."""
    root, marker = hostile
    script = tmp_path / "evil.sh"
    (root / ".gitattributes").write_text("* filter=a=b\n")
    git(root, "config", "filter.a=b.clean", str(script))
    git(root, "config", "filter.a=b.process", str(script))
    marker.unlink(missing_ok=True)
    git(root, "config", "--unset", "core.fsmonitor")
    assert code_state.renames_since(root, "HEAD") == {}
    assert not marker.exists(), marker.read_text()
    subprocess.run(
        ["git", "-C", str(root), "-c", "filter.evil.process=", "-c", "filter.evil.clean=", "diff", "HEAD"],
        capture_output=True,
        check=False,
    )
    assert marker.exists()  # the fixture: plain git does run this driver


def test_git_never_prompts_and_never_waits_for_stdin(tmp_path: Path) -> None:
    """A command that would read stdin gets /dev/null; one that would ask for a password fails at once."""
    assert run_git(tmp_path, "hash-object", "--stdin", timeout=5) == b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n"
    answer = run_git(tmp_path, "ls-remote", "https://127.0.0.1:9/none.git", timeout=5)
    assert answer is None  # protocol.allow=never: not even a loopback transport is started


def test_every_git_process_goes_through_git_process() -> None:
    """No module but orcmem.host.git_process spawns git itself (a string "git" as a command's first word)."""
    package = Path(orcmem.__file__).parent
    offenders = []
    for path in package.rglob("*.py"):
        if path.name == "git_process.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.List) and node.elts:
                first = node.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert offenders == []


def test_the_marker_script_does_run_when_git_is_run_plainly(hostile: tuple[Path, Path]) -> None:
    """The fixture is really hostile: a plain `git diff` in it runs the repository's fsmonitor and filter."""
    root, marker = hostile
    marker.unlink(missing_ok=True)
    subprocess.run(["git", "-C", str(root), "diff", "--name-status", "HEAD"], capture_output=True, check=False)
    assert marker.exists()
    assert os.stat(marker).st_mode & stat.S_IFREG
