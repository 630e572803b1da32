"""What git knows about a project's files: the current commit, renames since a commit, when a file was deleted,
and an old blob's content. Each call is one `git` process with a time limit; outside git each answers None."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 10.0


def _git(root: Path, *args: str) -> bytes | None:
    try:
        found = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found.stdout if found.returncode == 0 else None


def head_commit(root: Path) -> str | None:
    """The commit checked out in `root`, or None outside git (or before the first commit). Read from the files
    under .git, not by running git: every memory written with files asks for it."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: ".git" names the real folder
            git = (root / git.read_text().split("gitdir:", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text().strip()).resolve()
        for folder in (git, common):
            if (folder / ref).is_file():
                return (folder / ref).read_text().strip() or None
        for line in (common / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return None


def renames_since(root: Path, commit: str) -> dict[str, str]:
    """Files renamed between `commit` and the working tree (git's rename detection, staged moves included):
    old path -> new path, relative to the repository's top."""
    out = _git(root, "diff", "--find-renames", "--name-status", "-z", commit)
    if out is None:
        return {}
    fields = out.decode("utf-8", errors="surrogateescape").split("\x00")
    renames: dict[str, str] = {}
    index = 0
    while index < len(fields) - 1:
        status = fields[index]
        if status.startswith(("R", "C")) and index + 2 < len(fields):
            if status.startswith("R"):
                renames[fields[index + 1]] = fields[index + 2]
            index += 3
        else:
            index += 2
    return renames


def deletion_date(root: Path, path: str) -> str | None:
    """The date (YYYY-MM-DD) of the commit that deleted `path`, or None when no commit did (yet)."""
    out = _git(root, "log", "-1", "--format=%cs", "--diff-filter=D", "--", path)
    text = out.decode().strip() if out else ""
    return text or None


def blob_content(root: Path, blob: str) -> bytes | None:
    """The content of a blob in the repository's object store, or None when it is not there."""
    return _git(root, "cat-file", "blob", blob)


def top_level(root: Path) -> Path | None:
    """The repository's top folder, or None outside git."""
    out = _git(root, "rev-parse", "--show-toplevel")
    return Path(out.decode().strip()) if out else None
