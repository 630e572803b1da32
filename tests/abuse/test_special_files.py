"""Transcripts are read only from regular files: a FIFO (which would block a reader forever), a socket or a device
is refused at once, with one clear line from `orcmem ingest`, and silently by the hooks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.ingest.transcript import parse_transcript
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService

LIMIT_S = 20.0  # far more than a refusal takes; a read blocked on a FIFO never ends


def within(limit: float, action) -> BaseException | None:
    """Run `action` in a thread; the exception it raised (None if none); fails when it is still running."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            action()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    assert not thread.is_alive(), f"still blocked after {limit} s"
    return outcome[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    os.mkfifo(path)
    return path


def test_orcmem_ingest_of_a_fifo_is_refused_at_once(fifo: Path, project_dir: Path) -> None:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", "--project", str(project_dir), "ingest", str(fifo)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S * 3,
    )
    assert time.monotonic() - started < LIMIT_S
    assert result.returncode != 0
    [line] = result.stderr.strip().splitlines()
    assert "not a regular file" in line and str(fifo) in line


def test_every_transcript_read_refuses_a_fifo_a_socket_and_a_device(
    fifo: Path, tmp_path: Path, orcmem_home: Path, project_dir: Path
) -> None:
    listener = socket.socket(socket.AF_UNIX)
    sock = Path("/tmp") / f"om-sock-{os.getpid()}"
    listener.bind(str(sock))
    try:
        for special in (fifo, sock, Path("/dev/zero")):
            error = within(LIMIT_S, lambda special=special: parse_transcript(special))
            assert isinstance(error, NotFoundError) and "not a regular file" in str(error), special
        service = MemoryService.open(orcmem_home)
        try:
            error = within(LIMIT_S, lambda: Learning(service).ingest(locate(project_dir), fifo))
            assert isinstance(error, ValidationError) and "not a regular file" in str(error)
            assert service.project(locate(project_dir), create=False) is None  # nothing registered
        finally:
            service.close()
    finally:
        listener.close()
        sock.unlink()


@pytest.mark.parametrize("name", ["stop", "session-end"])
def test_a_hook_given_a_fifo_as_its_transcript_stays_silent(
    fifo: Path, tmp_path: Path, project_dir: Path, orcmem_home: Path, name: str
) -> None:
    """A payload's transcript_path naming a FIFO (or a link to one): the hook exits 0 at once and says nothing (the
    Stop hook's usual empty object aside)."""
    link = tmp_path / "link.jsonl"
    link.symlink_to(fifo)
    for path in (fifo, link):
        payload = {"session_id": "s", "cwd": str(project_dir), "transcript_path": str(path)}
        result = subprocess.run(
            [sys.executable, "-m", "orcmem", "hook", name],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=LIMIT_S * 3,
        )
        assert (result.returncode, result.stdout.strip() in ("", "{}"), result.stderr) == (0, True, "")


def test_a_fifo_or_endless_file_in_a_git_folder_blocks_nothing(tmp_path: Path, project_dir: Path) -> None:
    """`.git/HEAD` a FIFO, `.git` a FIFO, a ref a link to /dev/zero: finding the project and its commit answer at
    once (the folder is then not git's, or its commit unknown)."""
    from orcmem.host.code_state import head_commit

    repo = tmp_path / "repo"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    os.mkfifo(repo / ".git" / "HEAD")
    assert within(LIMIT_S, lambda: head_commit(repo)) is None
    assert head_commit(repo) is None
    (repo / ".git" / "HEAD").unlink()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".git" / "refs" / "heads" / "main").symlink_to("/dev/zero")
    assert within(LIMIT_S, lambda: head_commit(repo)) is None
    assert head_commit(repo) is None
    os.mkfifo(project_dir / ".git")
    found: list[object] = []
    assert within(LIMIT_S, lambda: found.append(locate(project_dir))) is None
    assert found == [locate(project_dir)] and found[0].canonical_root == str(project_dir.resolve())  # type: ignore[attr-defined]
