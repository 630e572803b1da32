"""A project's team-wide key: the same on every machine, whatever folder the repository was cloned into.

The key is the repository's `origin` remote, normalised (`git@github.com:Org/App.git` and
`https://github.com/Org/App` are both `github.com/org/app`); or, for a repository without a remote, the id
written into `.orcmem-project` at its root (commit that file so every clone shares it).
"""

from __future__ import annotations

import re
import secrets
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from orcmem.errors import TeamError

ID_FILE = ".orcmem-project"
GIT_TIMEOUT_S = 5.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(.+)$")  # git@host:owner/repo
_KEY = re.compile(r"^[a-z0-9][a-z0-9._/-]{0,199}$")


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
    written = _written_id(root)
    if written is not None:
        return written
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "remote", "get-url", "origin"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return normalise_remote(found.stdout) if found.returncode == 0 else None


def write_new_id(root: Path) -> str:
    """Write a new random id into `.orcmem-project` (for a repository without a remote); the id."""
    key = f"id/{secrets.token_hex(12)}"
    (root / ID_FILE).write_text(f"{key}\n", encoding="utf-8")
    return key


def _written_id(root: Path) -> str | None:
    path = root / ID_FILE
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace").strip().lower()
    if not _KEY.match(text):
        raise TeamError(f"{path} does not hold a project id (one line of letters, digits, '.', '_', '/' or '-').")
    return text
