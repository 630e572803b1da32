"""Project identity: the git common dir, so every worktree of a repository shares one pool."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orcmem.host.workspace import locate

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_plain_folder_is_its_own_project(tmp_path: Path) -> None:
    location = locate(tmp_path)
    assert location.canonical_root == str(tmp_path.resolve()) == location.worktree_root


@needs_git
def test_subfolders_and_worktrees_share_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src" / "deep").mkdir(parents=True)
    git("init", "-q", cwd=repo)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    main = locate(repo)
    assert main.canonical_root == str((repo / ".git").resolve())
    assert main.name == "repo"
    assert locate(repo / "src" / "deep").canonical_root == main.canonical_root
    worktree = locate(tmp_path / "wt")
    assert worktree.canonical_root == main.canonical_root
    assert worktree.worktree_root == str((tmp_path / "wt").resolve())
    assert worktree.name == "repo"


def test_a_broken_dot_git_file_falls_back_to_the_folder(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("nonsense")
    assert locate(tmp_path).canonical_root == str(tmp_path.resolve())


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A real repository with one commit and a linked worktree."""
    repo = tmp_path / "victim"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "victim-wt"), cwd=repo)
    return repo


@needs_git
@pytest.mark.parametrize("how", ["gitdir file", "symlink", "copied worktree file", "worktree gitdir"])
def test_a_fake_dot_git_never_joins_another_project(tmp_path: Path, victim: Path, how: str) -> None:
    intruder = tmp_path / "intruder"
    intruder.mkdir()
    if how == "gitdir file":
        (intruder / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    elif how == "symlink":
        (intruder / ".git").symlink_to(victim / ".git")
    elif how == "copied worktree file":  # the real worktree's own .git file, copied
        shutil.copy(tmp_path / "victim-wt" / ".git", intruder / ".git")
    else:
        (intruder / ".git").write_text(f"gitdir: {victim / '.git' / 'worktrees' / 'victim-wt'}\n")
    assert locate(intruder).canonical_root == str(intruder.resolve())  # a project of its own
    assert locate(tmp_path / "victim-wt").canonical_root == str((victim / ".git").resolve())  # the real one joins


@needs_git
def test_a_real_submodule_is_its_own_repository(tmp_path: Path, victim: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir()
    git("init", "-q", cwd=outer)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(victim), "sub", cwd=outer)
    location = locate(outer / "sub")
    assert location.canonical_root == str((outer / ".git" / "modules" / "sub").resolve())
    assert location.worktree_root == str((outer / "sub").resolve())
