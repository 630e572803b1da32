"""A project's team-wide key: the same on every machine, whatever folder the repository was cloned into.

The key is the repository's `origin` remote, normalised (`git@github.com:Org/App.git` and
`https://github.com/Org/App` are both `github.com/org/app`); or, for a repository without a remote, the id
written into `.orcmem-project` at its root (commit that file so every clone shares it). That file is the
repository's own claim, and may name any project's pool: `orcmem team share` has a person confirm it when the team
already holds that pool (docs/team.md, Sharing a project). orcmem never follows a symbolic link there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from orcmem.host.git_process import run_git
from orcmem.models.errors import TeamError

ID_FILE = ".orcmem-project"
GIT_TIMEOUT_S = 5.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(.+)$")  # git@host:owner/repo
_KEY = re.compile(r"^[a-z0-9][a-z0-9._/-]{0,199}$")
_ID_FILE_MAX_BYTES = 1024  # an id is at most 200 characters; a larger file is not one


def normalise_remote(url: str) -> str | None:
    """`host/path` of a git remote URL, lowercased, without credentials, port, `.git` or slashes at the ends."""
    text = url.strip()
    if not text:
        return None
    if "://" in text:
        parts = urlsplit(text)
        host, path = (parts.hostname or ""), parts.path
    else:
        match = _SCP_LIKE.match(text)
        if match is None:
            return None  # a local path: not the same on another machine
        host, path = match.group(1), match.group(2)
    path = path.strip("/")
    path = path.removesuffix(".git").strip("/")
    if not host or not path:
        return None
    key = f"{host}/{path}".lower()
    return key if _KEY.match(key) else None


def team_key(root: Path) -> str | None:
    """The project's key: `.orcmem-project`'s id, else its normalised origin remote, else None."""
    return written_id(root) or remote_key(root)


def remote_key(root: Path) -> str | None:
    """The repository's origin remote, normalised; None without one."""
    found = run_git(root, "remote", "get-url", "origin", timeout=GIT_TIMEOUT_S)
    return normalise_remote(found.decode("utf-8", errors="replace")) if found is not None else None


def write_new_id(root: Path) -> str:
    """Write a new random id into `.orcmem-project` (for a repository without a remote); the id.

    Written to a new file in the same folder, then renamed over the old one: a rename replaces a symbolic link
    itself, never the file it points to.

    Raises:
        TeamError: `.orcmem-project` is a symbolic link, or the folder cannot be written.
    """
    path = root / ID_FILE
    if path.is_symlink():
        raise TeamError(f"{path} is a symbolic link; orcmem never writes through one. Remove it and run this again.")
    key = f"id/{secrets.token_hex(12)}"
    try:
        fd, temp = tempfile.mkstemp(prefix=f"{ID_FILE}.", suffix=".tmp", dir=root)  # O_EXCL: never an existing file
        try:
            os.fchmod(fd, 0o644)  # committed and read by every clone, like any file of the repository
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(f"{key}\n")
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as exc:
        raise TeamError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    return key


def written_id(root: Path) -> str | None:
    """The id `.orcmem-project` holds; None when there is no such regular file.

    Raises:
        TeamError: it is a symbolic link, cannot be read, or holds no id.
    """
    path = root / ID_FILE
    try:
        # O_NONBLOCK: a FIFO in its place opens at once (and is then passed over) instead of waiting for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TeamError(f"{path} is a symbolic link; orcmem reads a project id only from a regular file.") from None
        raise TeamError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(_ID_FILE_MAX_BYTES + 1)
    text = data.decode("utf-8", errors="replace").strip().lower()
    if len(data) > _ID_FILE_MAX_BYTES or not _KEY.match(text):
        raise TeamError(f"{path} does not hold a project id (one line of letters, digits, '.', '_', '/' or '-').")
    return text
