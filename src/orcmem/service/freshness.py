"""The freshness check: fingerprint what memories cite, then judge each citation against the code as it is now
(docs/freshness.md). Incremental: a cited file is read again only when its size or time changed, and a memory is
judged again only when a file it cites did (or it cites a program, a cheap lookup)."""

from __future__ import annotations

import difflib
import os
import shutil
import stat
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from orcmem.host import code_state
from orcmem.models.types import Project
from orcmem.rules.freshness import (
    Judgement,
    State,
    blob_id,
    command_program,
    defined_where,
    is_citable,
    is_script_path,
    judge_file,
    judge_program,
    member_here,
    names_to_find,
    watch_list,
)
from orcmem.store.citations import Citation, SeenFile
from orcmem.store.facade import Store

MAX_FILE_BYTES = 4 * 1024 * 1024  # a larger cited file is not read: its citation is never judged stale
TOO_LARGE = b"\x00orcmem: too large to check\x00"  # what such a file reads as (its "blob" is this marker's)
PROJECT_BINS = ("node_modules/.bin", ".venv/bin", "venv/bin", "bin")
GONE = SeenFile(-1, -1, None)  # a cited file not on disk when last looked at


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What one check did and found."""

    judged: int  # memories judged (the rest were unchanged since the last check)
    files_read: int  # cited files read again
    renamed: int  # citations that followed a renamed file
    stale: list[tuple[str, str, str, int]]  # the possibly stale memories: id, title, reason, since


def code_root(project: Project) -> Path:
    """The folder a project's cited paths are relative to: the main working tree of its repository (its canonical
    root is the repository's .git folder), else the folder itself."""
    canonical = Path(project.canonical_root)
    if canonical.name == ".git":
        return canonical.parent
    if canonical.is_dir() and not (canonical / "HEAD").is_file():
        return canonical
    return Path(project.root_path)  # a bare or unusual repository: the working tree it was first seen in


def _relative(root: Path, entry: str) -> str | None:
    """A memory's file entry as a path under the project root; None when it points outside it (`..`, another
    absolute path): the check reads nothing outside the project."""
    raw = entry.strip()
    path = Path(raw)
    if path.is_absolute():
        try:
            path = path.relative_to(root)
        except ValueError:
            return None
    normal = os.path.normpath(str(path))
    if normal.startswith("..") or os.path.isabs(normal) or normal in (".", ""):
        return None
    return normal


def _read(path: Path) -> bytes | None:
    """A regular file's content (None: gone, or not a regular file), without following a final symbolic link and
    without blocking on a pipe; a file over MAX_FILE_BYTES reads as TOO_LARGE."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size > MAX_FILE_BYTES:
            return TOO_LARGE
        chunks, left = [], info.st_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)[:MAX_FILE_BYTES]
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        found = path.lstat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size) if stat.S_ISREG(found.st_mode) else None


def program_found(root: Path, program: str) -> bool:
    """Whether a command's program is there: a script of the project, or a program on PATH or in its local bins."""
    if is_script_path(program):
        return (root / program).is_file()
    if shutil.which(program):
        return True
    return any((root / folder / program).is_file() for folder in PROJECT_BINS)


class FreshnessCheck:
    """Fingerprints and checks one profile's memories against their projects' code."""

    def __init__(self, store: Store, clock: Callable[[], int]) -> None:
        """Work on `store`, with `clock` for the times it records."""
        self.store = store
        self.clock = clock

    def fingerprint(
        self, project: Project, memory_ids: Sequence[str] | None = None, worktree: Path | None = None
    ) -> int:
        """Fingerprint what the project's memories cite (those given, or every one without a fingerprint yet) in
        `worktree` (default: `code_root`); how many were fingerprinted."""
        root = worktree or code_root(project)
        memories = self.store.citations.uncited(project.id, memory_ids)
        commit = code_state.head_commit(root) if any(m.files for m in memories) else None
        now = self.clock()
        for memory in memories:
            cites: list[tuple[str, str, str | None, list[str], str | None]] = []
            for entry in memory.files:
                if not is_citable(entry):
                    continue
                path = _relative(root, entry)
                if path is None:
                    continue
                content = _read(root / path)
                held = watch_list(memory.title, memory.body, memory.files, content) if content else []
                cites.append(("file", path, blob_id(content) if content is not None else None, held, commit))
            program = command_program(memory.title, memory.body) if memory.type == "command" else None
            if program:
                cites.append(("program", program, "found" if program_found(root, program) else None, [], None))
            self.store.citations.replace(memory.pk, cites or [("none", "", None, [], None)], now)
        return len(memories)

    def renew(self, project: Project, memory_ids: Sequence[str], worktree: Path | None = None) -> None:
        """The person confirmed these memories (or their text changed): fingerprint them again, as the code is now."""
        self.store.citations.forget(memory_ids)
        self.fingerprint(project, memory_ids, worktree)

    def check(self, project: Project, *, everything: bool = False, worktree: Path | None = None) -> CheckReport:
        """Judge the project's memories against its code in `worktree` (default: `code_root`); `everything` judges
        even those whose files did not move."""
        root = worktree or code_root(project)
        self.fingerprint(project, worktree=root)
        seen = self.store.citations.seen_files(str(root))
        dirty, now_seen, read = self._look(root, self.store.citations.cited_paths(project.id), seen)
        citations = self.store.citations.to_judge(project.id, sorted(dirty), everything=everything)
        by_memory: dict[int, list[Citation]] = defaultdict(list)
        for citation in citations:
            by_memory[citation.memory_pk].append(citation)
        blobs = {path: state.blob for path, state in {**seen, **now_seen}.items()}
        facts = _GitFacts(root, [c for c in citations if c.kind == "file"], blobs)
        first = {
            pk: [(c, self._judge(root, c, facts)) for c in cites if c.kind != "none"] for pk, cites in by_memory.items()
        }
        # a file gone or a name vanished: look once, across the tree, for where the names it defined are defined now
        # (in files of the cited file's kind: a Python function moves to a Python file, not into a docs example)
        wanted: dict[str, set[str]] = defaultdict(set)
        members: set[str] = set()
        for judged in first.values():
            for citation, judgement in judged:
                if judgement.state == State.STALE and citation.kind == "file":
                    wanted[_kind_of(citation.target)].update(names_to_find(citation.symbols))
                    members.update(name for name in names_to_find(citation.symbols, members=True) if "." in name)
        if any(wanted.values()):
            lines = [
                line
                for kind, names in wanted.items()
                if names
                for line in code_state.definition_lines(root, names, [f"*{kind}"] if kind else [])
            ]
            facts.elsewhere = defined_where(set().union(*wanted.values()), lines)
            if members:
                _find_members(root, members, facts, set().union(*wanted.values()))
        outcomes: dict[int, tuple[str, str]] = {}
        renamed = 0
        for pk, judged_first in first.items():
            judged = [
                (
                    c,
                    self._judge(root, c, facts)
                    if facts.elsewhere is not None and j.state == State.STALE and c.kind == "file"
                    else j,
                )
                for c, j in judged_first
            ]
            for citation, judgement in judged:
                if judgement.renamed_to is not None:
                    self.store.citations.rename(pk, citation.target, judgement.renamed_to)
                    renamed += 1
            outcomes[pk] = _outcome([judgement for _citation, judgement in judged])
        with self.store.db.transaction():  # the files seen and the outcomes they led to, or neither
            self.store.citations.see_files(str(root), now_seen)
            self.store.citations.set_freshness(outcomes, self.clock())
        return CheckReport(len(outcomes), read, renamed, self.store.citations.stale(project.id))

    def _look(
        self, root: Path, paths: set[str], seen: dict[str, SeenFile]
    ) -> tuple[set[str], dict[str, SeenFile], int]:
        """Which cited files changed since they were last seen (read again only when their size or time did)."""
        dirty: set[str] = set()
        now_seen: dict[str, SeenFile] = {}
        read = 0
        for path in paths:
            found, before = _stat(root / path), seen.get(path)
            if found is None:
                if before is None or before.blob is not None:  # newly gone (a gone file is kept as seen gone)
                    dirty.add(path)
                    now_seen[path] = GONE
                continue
            if before is not None and (before.mtime_ns, before.size) == found:
                continue
            content = _read(root / path)
            read += 1
            blob = blob_id(content) if content is not None else None
            if before is None or before.blob != blob:
                dirty.add(path)
            now_seen[path] = SeenFile(found[0], found[1], blob)
        return dirty, now_seen, read

    def _judge(self, root: Path, citation: Citation, facts: _GitFacts) -> Judgement:
        if citation.kind == "program":
            return judge_program(
                citation.target,
                citation.blob == "found",
                program_found(root, citation.target),
                is_script_path(citation.target),
            )
        seen_blob = facts.blobs.get(citation.target)
        if seen_blob is not None and seen_blob == citation.blob:  # as this check saw it: no need to read it
            return Judgement(State.FRESH, f"{citation.target} is unchanged")
        current = facts.read(citation.target)
        if current is TOO_LARGE or (current is not None and blob_id(current) == citation.blob):
            return Judgement(State.FRESH, f"{citation.target} is unchanged (or too large to check)")
        renamed_to = renamed_content = deleted_on = None
        if current is None:
            renamed_to = facts.renamed(citation)
            if renamed_to is not None:
                renamed_content = _read(root / renamed_to)
                if renamed_content is None:
                    renamed_to = None
            if renamed_to is None:
                deleted_on = facts.deleted_on(citation.target)
        changed = facts.changed_lines(citation, current) if current is not None else None
        return judge_file(
            citation.target,
            citation.blob,
            citation.symbols,
            current,
            renamed_to,
            renamed_content,
            changed,
            deleted_on,
            facts.elsewhere,
        )


MEMBER_SEARCHES = 3  # rounds of `git grep` for the bases of a `Class.method`'s class (a base of a base...)


def _find_members(root: Path, members: set[str], facts: _GitFacts, searched: set[str]) -> None:
    """For each `Class.method`, the files whose class of that name defines the method, itself or through its bases
    wherever the tree defines them (found by up to MEMBER_SEARCHES more searches), into `facts.elsewhere`."""
    elsewhere = facts.elsewhere if facts.elsewhere is not None else {}
    unknown: set[str] = set()

    def homes(cls: str, name: str, seen: frozenset[str]) -> list[str]:
        found = []
        for path in elsewhere.get(cls, []):
            content = facts.read(path)
            here = member_here(content.decode("utf-8", errors="replace"), f"{cls}.{name}") if content else False
            if isinstance(here, list):
                unknown.update(base for base in here if base not in searched)
                here = any(homes(base, name, seen | {cls}) for base in here if base in searched and base not in seen)
            if here:
                found.append(path)
        return found

    for _round in range(MEMBER_SEARCHES):
        unknown.clear()
        for member in members:
            owner, name = member.split(".", 1)
            homes(owner, name, frozenset())
        if not unknown:
            break
        searched |= unknown
        elsewhere.update(defined_where(unknown, code_state.definition_lines(root, unknown)))
    for member in members:
        owner, name = member.split(".", 1)
        elsewhere[member] = homes(owner, name, frozenset())
    facts.elsewhere = elsewhere


def _kind_of(path: str) -> str:
    """A cited file's extension (`.py`), where a name it defined is looked for; "" (everywhere) without one."""
    suffix = Path(path).suffix
    return suffix if suffix[1:].isalnum() else ""


def _changed_lines(old: bytes | None, current: bytes) -> int | None:
    """How many lines differ from the fingerprinted content, when git still has it."""
    if old is None:
        return None
    before = old.decode("utf-8", errors="replace").splitlines()
    after = current.decode("utf-8", errors="replace").splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


class _GitFacts:
    """What git says about the files one check judges, asked once each and in batches: renames since each
    fingerprint's commit, deletion dates, and the fingerprinted contents of files that changed."""

    def __init__(self, root: Path, citations: list[Citation], blobs: dict[str, str | None]) -> None:
        self.root = root
        self.blobs = blobs  # each cited file's blob as this check saw it (None: gone)
        self._renames: dict[str, dict[str, str]] = {}
        self.elsewhere: dict[str, list[str]] | None = None  # where the names gone files defined are defined now
        self._tracked: dict[str, str] | None = None  # tracked path -> staged blob, asked once
        self._by_blob: dict[str, list[str]] = {}
        self._changed: dict[tuple[str, str], int | None] = {}
        self._read: dict[str, bytes | None] = {}
        gone = {c.target for c in citations if blobs.get(c.target) is None}
        changed = {c.blob for c in citations if c.blob and c.target not in gone and blobs.get(c.target) != c.blob}
        self._contents = code_state.blob_contents(root, sorted(changed))
        self._dates = code_state.deletion_dates(root, sorted(gone))

    def read(self, path: str) -> bytes | None:
        """A cited file's content, read once per check."""
        if path not in self._read:
            self._read[path] = _read(self.root / path)
        return self._read[path]

    def renamed(self, citation: Citation) -> str | None:
        """Where a gone file went: git's rename detection since the fingerprint's commit, else a tracked file with
        the fingerprinted content (a citation that followed a rename, after switching back to the old commit)."""
        if citation.commit_id is not None:
            if citation.commit_id not in self._renames:
                self._renames[citation.commit_id] = code_state.renames_since(self.root, citation.commit_id)
            found = self._renames[citation.commit_id].get(citation.target)
            if found is not None:
                return found
        if self._tracked is None:
            self._tracked = code_state.tracked_files(self.root)
            for path, blob in self._tracked.items():
                self._by_blob.setdefault(blob, []).append(path)
        for path in self._by_blob.get(citation.blob or "", []):
            if path != citation.target:
                content = self.read(path)
                if content is not None and blob_id(content) == citation.blob:
                    return path
        # the same path under a new folder (a package moved under src/), when only one file fits
        under = [path for path in self._tracked if path.endswith("/" + citation.target)]
        return under[0] if len(under) == 1 and self.read(under[0]) is not None else None

    def changed_lines(self, citation: Citation, current: bytes) -> int | None:
        """How many lines of a cited file changed since its fingerprint, counted once per file and fingerprint
        (many memories cite the same file: the count is quadratic in its length)."""
        key = (citation.target, citation.blob or "")
        if key not in self._changed:
            self._changed[key] = _changed_lines(self.old_content(citation.blob), current)
        return self._changed[key]

    def deleted_on(self, path: str) -> str | None:
        return self._dates.get(path)

    def old_content(self, blob: str | None) -> bytes | None:
        return self._contents.get(blob) if blob else None


def _outcome(judgements: list[Judgement]) -> tuple[str, str]:
    """A memory's state from its citations': possibly stale when any is, with the first such reason."""
    stale = [j.reason for j in judgements if j.state == State.STALE]
    if stale:
        return State.STALE, stale[0] + (f" (and {len(stale) - 1} more)" if len(stale) > 1 else "")
    moved = [j.reason for j in judgements if j.renamed_to is not None or j.changed_lines]
    return State.FRESH, moved[0] if moved else "unchanged"
