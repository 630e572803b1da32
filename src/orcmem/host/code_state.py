"""What git knows about a project's files: the current commit, renames since a commit, when a file was deleted,
and an old blob's content. Each call is one `git` process with a time limit (git_process.run_git: no program the
repository names runs); outside git each answers None."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orcmem.host.git_process import run_git
from orcmem.host.workspace import GIT_FILE_MAX_BYTES, read_git_file

GIT_TIMEOUT_S = 10.0
PACKED_REFS_MAX_BYTES = 64 << 20  # a repository with very many tags still finds its branch


def _git(root: Path, *args: str) -> bytes | None:
    return run_git(root, *args, timeout=GIT_TIMEOUT_S)


def head_commit(root: Path) -> str | None:
    """The commit checked out in `root`, or None outside git (or before the first commit). Read from the files
    under .git, not by running git: every memory written with files asks for it. Only regular files are read (a
    FIFO or device planted there would block or never end)."""

    def read(path: Path) -> str:
        text = read_git_file(str(path), PACKED_REFS_MAX_BYTES if path.name == "packed-refs" else GIT_FILE_MAX_BYTES)
        if text is None:
            raise OSError(f"{path} is missing or not a regular file")
        return text

    git = root / ".git"
    try:
        if git.is_file():  # a worktree: ".git" names the real folder
            git = (root / read(git).split("gitdir:", 1)[1].strip()).resolve()
        head = read(git / "HEAD").strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        common = git
        if (git / "commondir").is_file():
            common = (git / read(git / "commondir").strip()).resolve()
        for folder in (git, common):
            if (folder / ref).is_file():
                return read(folder / ref).strip() or None
        for line in read(common / "packed-refs").splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except (OSError, IndexError):
        return None
    return None


def renames_since(root: Path, commit: str) -> dict[str, str]:
    """Files renamed between `commit` and the working tree (git's rename detection, staged moves included):
    old path -> new path, relative to the repository's top."""
    out = _git(root, "diff", "--find-renames", "--name-status", "--ignore-submodules=all", "-z", commit)
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


def deletion_dates(root: Path, paths: list[str]) -> dict[str, str]:
    """For each of `paths` a commit deleted, that commit's date (YYYY-MM-DD), from one `git log`."""
    if not paths:
        return {}
    out = _git(root, "log", "--diff-filter=D", "--format=%x01%cs", "--name-only", "--", *paths)
    dates: dict[str, str] = {}
    for entry in (out or b"").decode("utf-8", errors="surrogateescape").split("\x01")[1:]:
        date, *names = entry.strip("\n").split("\n")
        for name in names:
            if name and name in paths:
                dates.setdefault(name, date)  # newest first: the latest deletion wins
    return dates


def blob_contents(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """The content of each of `blobs` the repository's object store holds, from one `git cat-file --batch`."""
    if not blobs:
        return {}
    # --batch without --filters: the stored bytes, no filter driver run on them
    out = run_git(
        root, "cat-file", "--batch", stdin="".join(f"{blob}\n" for blob in blobs).encode(), timeout=GIT_TIMEOUT_S
    )
    if out is None:
        return {}
    contents, at = {}, 0
    for blob in blobs:
        end = out.find(b"\n", at)
        if end < 0:
            break
        header = out[at:end].split()
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            contents[blob] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        else:  # "<blob> missing"
            at = end + 1
    return contents


def tracked_files(root: Path) -> dict[str, str]:
    """Every tracked path with the blob id of its staged content (one `git ls-files --stage`); outside git, none."""
    out = _git(root, "ls-files", "--stage", "-z")
    found: dict[str, str] = {}
    for entry in (out or b"").decode("utf-8", errors="surrogateescape").split("\x00"):
        info, _, path = entry.partition("\t")
        fields = info.split()
        if len(fields) == 3 and path:
            found[path] = fields[1]
    return found


NAMES_PER_SEARCH = 200  # names per `git grep` (one pattern holds them all; kept well below argument limits)


def definition_lines(root: Path, names: set[str], pathspecs: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Lines of the working tree's files (tracked, or untracked and not ignored; those matching `pathspecs` when
    given, e.g. `*.py`) shaped like a definition of one of `names` (def, class, function, assignment): (path, line),
    from `git grep`, a coarse filter the caller checks line by line. No binary file is searched and no textconv
    program runs; outside git, none."""
    lines: list[tuple[str, str]] = []
    ordered = sorted(names)
    for start in range(0, len(ordered), NAMES_PER_SEARCH):
        alternation = "(" + "|".join(ordered[start : start + NAMES_PER_SEARCH]) + ")"
        keyword = (
            r"^[[:space:]]*((async|export|pub|public|private|protected|static|default|abstract|final|override)"
            r"[[:space:]]+)*(def|class|function|fn|func|struct|interface|type|enum|trait|const|let|var|module)"
            rf"[[:space:]]+{alternation}([^A-Za-z0-9_]|$)"
        )
        assignment = rf"^[[:space:]]*(self\.|this\.)?{alternation}[[:space:]]*(:[^=]*)?=([^=]|$)"
        out = _git(
            root,
            "grep",
            "--no-textconv",
            "--untracked",
            "-I",
            "-z",
            "-E",
            "-e",
            keyword,
            "-e",
            assignment,
            "--",
            *pathspecs,
        )
        for line in (out or b"").decode("utf-8", errors="surrogateescape").split("\n"):
            path, _, text = line.partition("\x00")
            if path and text:
                lines.append((path, text))
    return lines
