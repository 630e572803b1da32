"""Find which project a folder belongs to, without running git (hooks must stay fast)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Location:
    """Where a folder sits: its project's identity and the working tree it is in."""

    canonical_root: str  # the git common dir (shared by every worktree), or the resolved folder
    worktree_root: str  # the top of the working tree holding the folder (CLAUDE.md lives here)
    name: str


def _git_common_dir(dot_git: Path) -> Path | None:
    """The common git dir behind a `.git` folder or a worktree's `.git` file, or None if unreadable."""
    if dot_git.is_dir():
        return dot_git.resolve()
    try:
        first_line = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first_line.startswith("gitdir:"):
        return None
    git_dir = (dot_git.parent / first_line.removeprefix("gitdir:").strip()).resolve()
    commondir = git_dir / "commondir"
    try:
        return (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return git_dir  # a submodule or a plain gitdir link: the linked dir is the repository


def locate(folder: Path) -> Location:
    """The project location of `folder`: the nearest enclosing git repository, else the folder itself."""
    start = folder.expanduser().resolve()
    for candidate in (start, *start.parents):
        dot_git = candidate / ".git"
        if dot_git.exists():
            common = _git_common_dir(dot_git)
            if common is not None:
                main_tree = common.parent if common.name == ".git" else candidate
                return Location(str(common), str(candidate), main_tree.name or str(main_tree))
    return Location(str(start), str(start), start.name or str(start))
