"""Put a model folder in place atomically: build it in a hidden sibling, then rename it, one installer at a time."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def staging_prefix(name: str) -> str:
    """The prefix of the hidden folders in which the model `name` is assembled."""
    return f".{name}.partial-"


def _trash_prefix(name: str) -> str:
    return f".{name}.trash-"


@contextmanager
def install_lock(models_dir: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock for installing the model `name`, so two processes never build it at once."""
    models_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    models_dir.chmod(0o700)  # private: an older orcmem (or a wide umask) may have made it readable by others
    # The lock file stays (it is empty): deleting a lock file while others wait on it would break the lock.
    with open(models_dir / f".{name}.lock", "a+b") as handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)


@contextmanager
def staging_dir(models_dir: Path, name: str) -> Iterator[Path]:
    """A fresh hidden folder next to the model folder (same file system, so a rename is atomic); always removed."""
    models_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    models_dir.chmod(0o700)  # private: an older orcmem (or a wide umask) may have made it readable by others
    work = Path(tempfile.mkdtemp(prefix=staging_prefix(name), dir=models_dir))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def remove_leftovers(models_dir: Path, name: str) -> None:
    """Delete what a killed installer of `name` left: staging and trash folders, a partial download."""
    if not models_dir.is_dir():
        return
    for entry in models_dir.iterdir():
        if entry.name.startswith((staging_prefix(name), _trash_prefix(name))):
            _remove(entry)
    (models_dir / f"{name}.tar.gz.part").unlink(missing_ok=True)


def discard_dir(folder: Path) -> None:
    """Remove `folder` so that no half-deleted copy is ever visible under its name."""
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink() or not folder.is_dir():
        folder.unlink()
        return
    # Renaming first is atomic; a crash during rmtree then leaves only a hidden trash folder.
    trash = Path(tempfile.mkdtemp(prefix=_trash_prefix(folder.name), dir=folder.parent))
    os.rename(folder, trash / folder.name)
    shutil.rmtree(trash, ignore_errors=True)


def commit_dir(ready: Path, final: Path) -> None:
    """Replace whatever is at `final` with the verified folder `ready` (a sibling on the same file system)."""
    discard_dir(final)
    os.rename(ready, final)


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def _lock(handle: IO[bytes]) -> None:
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)


def _unlock(handle: IO[bytes]) -> None:
    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
