"""Syncs that die: `kill -9` mid-push, and the server stopped mid-sync and started again. Nothing is lost or doubled."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from orcmem.models.errors import TeamError
from orcmem.store.team_pool.server import connect
from orcmem.team.sync import sync_now
from tests.helpers import user_memory, wait_for
from tests.team.conftest import Machine, MakeMachine, start_postgres

pytestmark = pytest.mark.long


def fill(machine: Machine, count: int) -> None:
    with machine.svc.store.db.transaction():
        for i in range(count):
            machine.svc.record(machine.project, user_memory(f"Lesson {i}", f"what run {i} taught"))


def server_count(url: str) -> tuple[int, int]:
    with connect(url) as conn:
        row = conn.execute("SELECT count(*), count(DISTINCT id) FROM orcmem.memories").fetchone()
    return int(row[0]), int(row[1])


def test_kill_9_mid_push_loses_and_doubles_nothing(machines: MakeMachine, team_url: str) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    fill(alice, 3000)
    home = alice.svc.home
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    sync = subprocess.Popen([sys.executable, "-m", "orcmem", "team", "sync"], env=env, stdout=subprocess.PIPE)
    wait_for(lambda: server_count(team_url)[0] >= 200)
    sync.send_signal(signal.SIGKILL)
    sync.wait(10)
    sent, _ = server_count(team_url)
    assert 0 < sent < 3000, "the push should have been cut part way"
    assert alice.svc.team.pending() >= 3000 - sent  # what the server did not commit still waits
    sync_now(alice.svc)
    sync_now(bob.svc)
    assert server_count(team_url) == (3000, 3000)
    assert alice.svc.team.pending() == 0
    assert bob.svc.count(bob.project) == 3000


def test_the_server_stopped_mid_sync_and_started_again(machines: MakeMachine) -> None:
    # A folder of its own, as for the session's server (tests/team/conftest.py): as root, pgserver runs PostgreSQL as
    # its own user, which cannot reach inside pytest's tmp_path.
    folder = Path(tempfile.mkdtemp(prefix="orcmem-pg-own-"))
    try:
        _stop_mid_sync_and_start_again(machines, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _stop_mid_sync_and_start_again(machines: MakeMachine, folder: Path) -> None:
    """Stop the team's own server while alice pushes, then start it again in the same folder."""
    server = start_postgres(folder)
    url = str(server.get_uri())
    with connect(url) as admin:
        admin.execute("CREATE DATABASE team")
    team_url = url.replace("/postgres?", "/team?")
    alice = machines("alice@acme.dev", url=team_url)
    bob = machines("bob@acme.dev", url=team_url)
    fill(alice, 4000)
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            sync_now(alice.svc)
            outcome.append(None)
        except BaseException as exc:  # the failure is what the test expects
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: server_count(team_url)[0] >= 200)
    server.cleanup()  # stops PostgreSQL (fast shutdown: open transactions roll back)
    thread.join(60)
    assert outcome and isinstance(outcome[0], TeamError), outcome
    with pytest.raises(TeamError):
        sync_now(bob.svc)
    server = start_postgres(folder)
    try:
        sync_now(alice.svc)
        sync_now(bob.svc)
        assert server_count(team_url) == (4000, 4000)
        assert alice.svc.team.pending() == 0 and bob.svc.count(bob.project) == 4000
    finally:
        server.cleanup()
