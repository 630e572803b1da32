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


def _read_first_line(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError:
        return None


def _git_common_dir(dot_git: str) -> str | None:
    """The common git dir behind a `.git` folder or a worktree's `.git` file, or None if unreadable."""
    if os.path.isdir(dot_git):
        return os.path.realpath(dot_git)
    first_line = _read_first_line(dot_git)
    if not first_line or not first_line.startswith("gitdir:"):
        return None
    git_dir = os.path.realpath(os.path.join(os.path.dirname(dot_git), first_line.removeprefix("gitdir:").strip()))
    common = _read_first_line(os.path.join(git_dir, "commondir"))
    if common is None:
        return git_dir  # a submodule or a plain gitdir link: the linked dir is the repository
    return os.path.realpath(os.path.join(git_dir, common))


def locate(folder: str | os.PathLike[str]) -> Location:
    """The project location of `folder`: the nearest enclosing git repository, else the folder itself."""
    start = os.path.realpath(os.path.expanduser(os.fspath(folder)))
    candidate = start
    while True:
        dot_git = os.path.join(candidate, ".git")
        if os.path.lexists(dot_git):
            common = _git_common_dir(dot_git)
            if common is not None:
                main_tree = os.path.dirname(common) if os.path.basename(common) == ".git" else candidate
                return Location(common, candidate, os.path.basename(main_tree) or main_tree)
        parent = os.path.dirname(candidate)
        if parent == candidate:
            break
        candidate = parent
    return Location(start, start, os.path.basename(start) or start)
