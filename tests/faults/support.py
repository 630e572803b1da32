"""Helpers for the fault tests: the real CLI as a subprocess, mounts (as root), database checks, a model server."""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from orcmem.embed.model_files import ArchiveSource
from orcmem.embed.pypi_source import MINILM_INT8_PINS

DB_NAME = "orcmem.db"


def orcmem(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run `orcmem --project <project> <args>` as its own process (so a traceback would really be printed)."""
    return subprocess.run(
        [sys.executable, "-m", "orcmem", "--project", str(project), *args],
        capture_output=True,
        text=True,
        env=env if env is not None else dict(os.environ),
        timeout=timeout,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """The command failed with exit code 1 and exactly one `orcmem: ...` line on stderr holding every word."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("orcmem: "), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def integrity(path: Path) -> list[str]:
    """`PRAGMA integrity_check` of the database at `path` (['ok'] when it is sound)."""
    conn = apsw.Connection(str(path))
    try:
        return [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
    finally:
        conn.close()


def root_page(path: Path, table: str) -> int:
    """The page number of a table's b-tree root in the database at `path`."""
    conn = apsw.Connection(str(path))
    try:
        return int(conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchall()[0][0])
    finally:
        conn.close()


def write_lock_held(path: Path) -> bool:
    """True when another connection holds the database's write lock (BEGIN IMMEDIATE fails at once)."""
    conn = apsw.Connection(str(path))
    try:
        conn.setbusytimeout(0)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError:
            return True
        conn.execute("ROLLBACK")
        return False
    finally:
        conn.close()


# --- mounts (root only) ----------------------------------------------------------------------------------------


def _run_quiet(*cmd: str) -> bool:
    return subprocess.run(list(cmd), capture_output=True).returncode == 0


@functools.cache
def can_mount() -> bool:
    """Whether this process may mount a tmpfs (root with CAP_SYS_ADMIN, no seccomp filter in the way)."""
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory() as probe:
        if not _run_quiet("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe):
            return False
        _run_quiet("umount", probe)
    return True


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of `size` (e.g. '4m') on `folder` for the duration of the block; always unmounted."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        _unmount(folder)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """Bind-mount `folder` read-only onto itself: even root cannot write there until the block ends."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder), str(folder)], check=True)
        yield folder
    finally:
        _unmount(folder)


def _unmount(folder: Path) -> None:
    if not _run_quiet("umount", str(folder)):
        _run_quiet("umount", "-l", str(folder))  # something still had a file open there: detach it anyway


def fill(folder: Path) -> Path:
    """Write a file in `folder` until its file system has not one byte left; returns the file."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        chunk = 1 << 20
        while chunk:
            try:
                if os.write(fd, b"\0" * chunk) == 0:
                    chunk //= 2
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk //= 2  # the last few pages: smaller writes until even one byte does not fit
    finally:
        os.close(fd)
    return filler


# --- a model server -------------------------------------------------------------------------------------------

ARCHIVE_PATH = "/minilm-int8.tar.gz"


@dataclass
class Served:
    """One file the server answers with; `stall_at` bytes go out, then it waits for `ArchiveServer.release`."""

    body: bytes
    stall_at: int | None = None


@dataclass
class ArchiveServer:
    """A loopback HTTP server whose routes tests set; it records requests and how many bytes each one got."""

    base: str
    routes: dict[str, Served] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def source(self, archive: bytes, *, stall_at: int | None = None) -> ArchiveSource:
        """Serve `archive` and return the int8 model's ArchiveSource pinned to exactly those bytes."""
        self.routes[ARCHIVE_PATH] = Served(archive, stall_at)
        return ArchiveSource(
            pins=MINILM_INT8_PINS,
            url=self.base + ARCHIVE_PATH,
            size=len(archive),
            sha256=hashlib.sha256(archive).hexdigest(),
        )
