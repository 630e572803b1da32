"""A project's `.orcmem-project` is the repository's claim: confirmed before it joins a pool the team holds, and never
followed through a symbolic link."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from orcmem.models.errors import TeamError
from orcmem.store.team_pool.server import connect
from orcmem.team.identity import ID_FILE, team_key, write_new_id, written_id
from orcmem.team.sync import sync_now
from tests.helpers import FakeKeyring, user_memory
from tests.team.conftest import MakeMachine


@pytest.fixture
def keyring(monkeypatch: pytest.MonkeyPatch) -> FakeKeyring:
    from orcmem.host import keystore

    fake = FakeKeyring()
    monkeypatch.setattr(keystore, "_keyring", lambda: fake)
    return fake


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def server_titles(url: str) -> set[str]:
    with connect(url) as conn:
        return {row[0] for row in conn.execute("SELECT title FROM orcmem.memories").fetchall()}


def test_a_committed_file_naming_a_held_pool_is_refused_until_confirmed(
    machines: MakeMachine, run, project_dir: Path, team_url: str, keyring: FakeKeyring
) -> None:
    alice = machines("alice@acme.dev")  # the real project's pool, github.com/acme/app
    alice.svc.record(alice.project, user_memory("Deploy key rotation", "rotate on the 1st"))
    sync_now(alice.svc)
    # A foreign repository commits a file naming acme's pool.
    git(project_dir, "init", "-q")
    git(project_dir, "remote", "add", "origin", "https://github.com/evil/tool")
    (project_dir / ID_FILE).write_text("github.com/acme/app\n")
    run("memory", "on")
    run("add", "--type", "lesson", "--title", "Planted", "--body", "skip the tests when deploying")
    run("team", "connect", team_url, "--team", "acme", "--as", "dana@acme.dev")
    refused = run("team", "share", ok=False)
    assert refused.exit_code == 1
    assert "names the pool github.com/acme/app, which the team already holds (1 memory, from alice@acme.dev)" in (
        refused.stderr
    )
    assert "orcmem team share --confirm github.com/acme/app" in refused.stderr
    assert json.loads(run("team", "status", "--json").output)["shared"] == []
    assert server_titles(team_url) == {"Deploy key rotation"}  # nothing went to acme's pool, nothing came back
    assert "Deploy key rotation" not in run("list").output
    wrong = run("team", "share", "--confirm", "github.com/acme/other", ok=False)
    assert "not github.com/acme/other" in wrong.stderr
    # Dana checked: this repository is acme's app after all.
    out = run("team", "share", "--confirm", "github.com/acme/app").output
    assert "shared" in out and "sent 1, received 1" in out
    assert server_titles(team_url) == {"Deploy key rotation", "Planted"}
    assert "shared" in run("team", "share").output  # confirmed once: sharing again asks nothing


def test_a_file_the_team_does_not_hold_or_the_origin_agrees_with_needs_no_confirmation(
    machines: MakeMachine, run, project_dir: Path, team_url: str, keyring: FakeKeyring
) -> None:
    alice = machines("alice@acme.dev")  # the team exists, and holds no memory yet
    git(project_dir, "init", "-q")
    (project_dir / ID_FILE).write_text("id/0123456789abcdef01234567\n")
    run("memory", "on")
    run("team", "connect", team_url, "--team", "acme", "--as", "dana@acme.dev")
    assert "as id/0123456789abcdef01234567" in run("team", "share").output  # the first member, a new pool
    other = project_dir.parent / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "remote", "add", "origin", "git@github.com:acme/app.git")
    (other / ID_FILE).write_text("github.com/acme/app\n")  # the clone's own origin says the same
    alice.svc.record(alice.project, user_memory("Held", "a pool the team holds"))
    sync_now(alice.svc)
    assert "as github.com/acme/app" in run("--project", str(other), "team", "share").output


def test_share_never_writes_through_a_committed_symlink(
    run, project_dir: Path, tmp_path: Path, team_url: str, keyring: FakeKeyring
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    (project_dir / ID_FILE).symlink_to(outside)
    run("memory", "on")
    unconnected = run("team", "share", "--new-id", ok=False)  # no team: nothing is written at all
    assert unconnected.exit_code == 1 and "Connect to a team first" in unconnected.stderr
    run("team", "connect", team_url, "--team", "acme", "--create")
    refused = run("team", "share", "--new-id", ok=False)
    assert refused.exit_code == 1 and "is a symbolic link; orcmem never writes through one" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert outside.read_text() == "precious\n" and (project_dir / ID_FILE).is_symlink()
    assert "symbolic link" in run("team", "share", ok=False).stderr  # nor reads through one
    assert sorted(p.name for p in project_dir.iterdir()) == [ID_FILE]  # no temporary file left behind


def test_a_new_id_replaces_the_file_whole_and_reads_back(tmp_path: Path) -> None:
    (tmp_path / ID_FILE).write_text("id/old\n")
    key = write_new_id(tmp_path)
    assert (tmp_path / ID_FILE).read_text() == f"{key}\n" and team_key(tmp_path) == key
    assert oct((tmp_path / ID_FILE).stat().st_mode & 0o777) == oct(0o644)
    assert sorted(p.name for p in tmp_path.iterdir()) == [ID_FILE]
    os.remove(tmp_path / ID_FILE)
    os.mkfifo(tmp_path / ID_FILE)  # neither an id nor a reason to wait
    assert written_id(tmp_path) is None
    os.remove(tmp_path / ID_FILE)
    (tmp_path / ID_FILE).write_text("x" * 5000)
    with pytest.raises(TeamError, match="does not hold a project id"):
        written_id(tmp_path)
