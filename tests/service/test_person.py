"""The author id follows git's user.email for the project (unless a team binding fixes it), and what the person
wrote under an earlier id (root@host, before the repository set an email) stays their own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from orcmem.cli.commands import cli
from orcmem.host.person import PERSON_ENV, machine_person
from orcmem.host.workspace import locate
from orcmem.models.errors import OwnershipError
from orcmem.models.types import NewMemory, Source
from orcmem.rules.permissions import require_may_change
from orcmem.service.memory_service import MemoryService

EMAIL = "alice@example.com"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository on a machine where git knows no email yet (an empty HOME, no system config)."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv(PERSON_ENV, raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    return root


def note(title: str) -> NewMemory:
    return NewMemory("lesson", title, f"{title}, in a few words.", Source.USER)


def test_the_author_follows_the_projects_email_and_the_old_id_stays_yours(repo: Path, orcmem_home: Path) -> None:
    # Day one: `orcmem init` runs before the repository sets an email; the person is root@host.
    first = MemoryService.open(orcmem_home)
    first.settings.set_enabled(True)
    project = first.project(locate(repo))
    assert project is not None
    old = first.record(project, note("Before the email")).memory
    assert old.author == machine_person()
    first.close()

    git(repo, "config", "user.email", EMAIL)
    later = MemoryService.open(orcmem_home)  # the next command: a new process asks git again
    project = later.project(locate(repo))
    assert project is not None
    new = later.record(project, note("After the email")).memory
    assert new.author == EMAIL
    assert later.settings.person_and_why(project.root_path) == (EMAIL, f"git's user.email for {project.root_path}")
    assert later.settings.own_ids() == {machine_person(), EMAIL}
    # The memory written as root@host is still the person's own: they edit and delete it, nobody else is named.
    edited = later.edit(project, old.id, body="Still mine to change.")
    assert edited.author == machine_person() and edited.body == "Still mine to change."
    listed = CliRunner().invoke(cli, ["--project", str(repo), "list"], catch_exceptions=False).output
    assert listed.count("from you") == 2 and machine_person() not in listed
    later.forget(project, old.id)
    later.close()


def test_another_persons_memory_stays_theirs(repo: Path) -> None:
    own = {machine_person(), EMAIL}
    require_may_change(Source.USER, Source.USER, "no", author=machine_person(), own=own)
    with pytest.raises(OwnershipError, match="mallory@example.com wrote this memory"):
        require_may_change(Source.USER, Source.USER, "no", author="mallory@example.com", own=own)


def test_a_team_binding_fixes_the_id(repo: Path, orcmem_home: Path) -> None:
    git(repo, "config", "user.email", EMAIL)
    service = MemoryService.open(orcmem_home)
    service.settings.set_enabled(True)
    service.settings.set_person("alice@team.example")
    project = service.project(locate(repo))
    assert project is not None
    assert service.record(project, note("On the team")).memory.author == "alice@team.example"
    person, why = service.settings.person_and_why(project.root_path)
    assert person == "alice@team.example" and "team" in why
    service.close()


def test_without_an_email_the_first_id_is_kept_and_orcmem_person_wins(
    repo: Path, orcmem_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = MemoryService.open(orcmem_home)
    assert service.settings.person_and_why(str(repo)) == (
        machine_person(),
        "user@host: git has no user.email for this project",
    )
    monkeypatch.setenv(PERSON_ENV, "ci-bot")
    fresh = MemoryService.open(orcmem_home)
    assert fresh.settings.person_and_why(str(repo)) == ("ci-bot", f"{PERSON_ENV} is set")
    service.close()
    fresh.close()


def test_doctor_says_who_and_why(repo: Path, orcmem_home: Path) -> None:
    first = MemoryService.open(orcmem_home)
    first.settings.person(str(repo))  # root@host, found when orcmem first ran
    first.close()
    git(repo, "config", "user.email", EMAIL)
    out = CliRunner().invoke(cli, ["--project", str(repo), "doctor"]).output
    (line,) = [line for line in out.splitlines() if line.startswith("ok person: ")]
    assert line.startswith(f"ok person: {EMAIL}, git's user.email for ")
    assert f"also yours, written earlier as: {machine_person()}" in line
