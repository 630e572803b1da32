"""Find which project a folder belongs to, without running git or importing pathlib (hooks must stay fast)."""

from __future__ import annotations

import os


class Location:
    """Where a folder sits: its project's identity and the working tree it is in.

    A plain class rather than a dataclass: the prompt hook imports this module, and dataclasses cost it time.
    """

    __slots__ = ("canonical_root", "worktree_root", "name")

    def __init__(self, canonical_root: str, worktree_root: str, name: str) -> None:
        """canonical_root: the git common dir (shared by every worktree) or the resolved folder; worktree_root:
        the top of the working tree holding the folder (CLAUDE.md lives there); name: for people."""
        self.canonical_root = canonical_root
        self.worktree_root = worktree_root
        self.name = name

    def __eq__(self, other: object) -> bool:
        """Equal when every field is."""
        if not isinstance(other, Location):
            return NotImplemented
        return (self.canonical_root, self.worktree_root, self.name) == (
            other.canonical_root,
            other.worktree_root,
            other.name,
        )

    def __hash__(self) -> int:
        """Hash of the fields."""
        return hash((self.canonical_root, self.worktree_root, self.name))

    def __repr__(self) -> str:
        """Location(canonical_root=..., worktree_root=..., name=...)."""
        return f"Location({self.canonical_root!r}, {self.worktree_root!r}, {self.name!r})"


GIT_FILE_MAX_BYTES = 65536  # a .git file, HEAD, a ref or a git dir's config: far more than any real one


def read_git_file(path: str, limit: int = GIT_FILE_MAX_BYTES) -> str | None:
    """The start of a small file git keeps, or None when it is missing or not a regular file: a FIFO (which would
    block every hook) or a link to /dev/zero (which never ends) is never read."""
    import stat

    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return None
        return os.read(descriptor, min(limit, info.st_size)).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(descriptor)


def _read_first_line(path: str) -> str | None:
    text = read_git_file(path)
    return None if text is None else text.split("\n", 1)[0].strip()


def _core_worktree(git_dir: str) -> str | None:
    """The `worktree` set under `[core]` in a git dir's config (resolved), or None when it sets none."""
    import re

    config = read_git_file(os.path.join(git_dir, "config"))
    if config is None:
        return None
    section = ""
    for line in config.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip().lower()
            continue
        found = re.match(r"worktree\s*=\s*(.+)$", stripped, re.IGNORECASE)
        if section == "core" and found:
            return os.path.realpath(os.path.join(git_dir, found.group(1).strip().strip('"')))
    return None


def _git_common_dir(dot_git: str) -> str | None:
    """The common git dir behind a `.git` folder or a worktree's `.git` file, when git itself would accept this
    folder as that repository's working tree; else None.

    A `.git` file or link can name any repository on the machine: it is accepted only when that repository says
    this folder is one of its working trees (a linked worktree's `gitdir` record, a submodule's `core.worktree`),
    so a folder cannot borrow another project's memory by pointing at its git dir.
    """
    worktree = os.path.dirname(dot_git)
    if os.path.isdir(dot_git):
        real = os.path.realpath(dot_git)
        if not os.path.islink(dot_git):
            return real
        claimed = _core_worktree(real) or os.path.dirname(real)
        return real if claimed == os.path.realpath(worktree) else None
    first_line = _read_first_line(dot_git)
    if not first_line or not first_line.startswith("gitdir:"):
        return None
    git_dir = os.path.realpath(os.path.join(worktree, first_line.removeprefix("gitdir:").strip()))
    common = _read_first_line(os.path.join(git_dir, "commondir"))
    if common is None:  # a submodule or a separate git dir: it must not be another working tree's own .git
        owner = _core_worktree(git_dir)
        if owner is None and os.path.basename(git_dir) == ".git":
            owner = os.path.dirname(git_dir)
        return git_dir if owner in (None, os.path.realpath(worktree)) else None
    record = _read_first_line(os.path.join(git_dir, "gitdir"))  # a linked worktree's way back to its .git file
    if record is None or os.path.realpath(os.path.join(git_dir, record)) != os.path.realpath(dot_git):
        return None
    return os.path.realpath(os.path.join(git_dir, common))


def locate(folder: str | os.PathLike[str]) -> Location:
    """The project location of `folder`: the nearest enclosing git repository, else the folder itself."""
    start = os.path.realpath(os.path.expanduser(os.fspath(folder)))
    candidate = start
    while True:
        dot_git = os.path.join(candidate, ".git")
        if os.path.lexists(dot_git):
            common = _git_common_dir(dot_git)
            if common is None:
                break  # a .git git itself would refuse: this folder is a project of its own
            main_tree = os.path.dirname(common) if os.path.basename(common) == ".git" else candidate
            return Location(common, candidate, os.path.basename(main_tree) or main_tree)
        parent = os.path.dirname(candidate)
        if parent == candidate:
            break
        candidate = parent
    return Location(start, start, os.path.basename(start) or start)
