"""Reading, backing up and atomically rewriting configuration files (JSON members rewritten by json_text.py).

Every edit is a pure function of the file's text (`Transform`), so all files are planned (and checked) before any
is written, and a file that changed on disk since it was read is simply planned again before it is replaced.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.json_text import render_json
from orcmem.setup_agents.report import FileAction, FileReport, ItemChange

BACKUP_INFIX = ".orcmem-backup-"
_ATTEMPTS = 3


@dataclass
class Outcome:
    """What a transform made of a file: its new text (None: delete it), the entries touched, notes for the user."""

    text: str | None
    items: list[ItemChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Transform = Callable[[str | None], Outcome]


@dataclass(frozen=True)
class FileEdit:
    """A file and how to change it; `new_mode` is the permission of the file if it has to be created; `inside`
    the project folder a project-scope file must stay in (a symbolic link leading out of it is refused)."""

    path: Path
    transform: Transform
    new_mode: int | None = None
    inside: Path | None = None


@dataclass
class _Plan:
    edit: FileEdit
    target: Path
    raw: bytes | None
    outcome: Outcome


def _target(edit: FileEdit) -> Path:
    """The file to write. A config in the user's home that is a symbolic link (dotfiles) is edited where it lives,
    the link stays: the user made it. A project's file, its folder, or a link on the way, comes with the repository
    (a clone can plant them), so one that leads outside the project folder is refused; inside it, it is followed.

    Raises:
        OrcmemError: a project file (or a folder on its way) leads outside the project.
    """
    path = edit.path
    if edit.inside is not None:
        real, root = os.path.realpath(path), os.path.realpath(edit.inside)
        if os.path.commonpath([real, root]) != root:
            raise OrcmemError(
                f"{path} leads outside the project (a symbolic link to {real}); orcmem writes only inside it, "
                "so nothing was changed"
            )
        return Path(real)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _read(path: Path) -> bytes | None:
    """The file's bytes (None: there is none); a FIFO, device or folder is refused at once, never read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO with no writer opens at once
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OrcmemError(f"cannot read {path}: {exc.strerror or exc}; nothing was changed") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OrcmemError(f"{path} is not a regular file; move it away, then run again (nothing was changed)")
        os.set_blocking(fd, True)
        try:
            return handle.read()
        except OSError as exc:
            raise OrcmemError(f"cannot read {path}: {exc.strerror or exc}; nothing was changed") from exc


def _decode(raw: bytes | None, path: Path) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OrcmemError(f"{path} is not UTF-8 text; fix or move it, then run again (nothing was changed)") from exc


def _action(before: str | None, after: str | None) -> FileAction:
    if before == after:
        return "unchanged"
    if before is None:
        return "created"
    return "deleted" if after is None else "updated"


def _backup(path: Path, raw: bytes, mode: int, backup_dir: Path) -> Path:
    """Copy the file's current bytes, with its permissions, into orcmem's backup folder (mirroring the file's own
    folders, so a repository never gets a stray file); never overwrites an earlier backup."""
    folder = backup_dir / path.parent.relative_to(path.anchor)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # configs can hold tokens: the folders stay private
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        candidate = folder / (f"{path.name}{BACKUP_INFIX}{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(raw)
        return candidate
    raise OrcmemError(f"cannot find a free backup name for {path}")


def _remove_if_empty(folder: Path) -> None:
    """A config folder (.claude, .codex) left empty by taking orcmem's last file out goes too."""
    with contextlib.suppress(OSError):  # not empty, or not ours to remove: it stays
        folder.rmdir()


def _write_atomic(path: Path, text: str, mode: int | None) -> None:
    """Write a temporary file in the same folder, then rename it over the target (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.orcmem-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)  # the umask may have narrowed it
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def apply_edits(edits: list[FileEdit], *, dry_run: bool, backup_dir: Path) -> tuple[list[FileReport], list[str]]:
    """Plan every edit first (any error: nothing is written), then back up (into `backup_dir`) and write each
    changed file."""
    plans: list[_Plan] = []
    for edit in edits:
        target = _target(edit)
        raw = _read(target)
        plans.append(_Plan(edit, target, raw, edit.transform(_decode(raw, edit.path))))
    reports: list[FileReport] = []
    notes: list[str] = []
    for plan in plans:
        before = _decode(plan.raw, plan.edit.path)
        backup: Path | None = None
        if not dry_run and _action(before, plan.outcome.text) != "unchanged":
            before, backup = _commit(plan, backup_dir)
        notes.extend(note for note in plan.outcome.notes if note not in notes)
        action = _action(before, plan.outcome.text)
        reports.append(FileReport(plan.edit.path, action, tuple(plan.outcome.items), backup))
    return reports, notes


def _commit(plan: _Plan, backup_dir: Path) -> tuple[str | None, Path | None]:
    """Write one planned file; if someone changed it since it was read, plan it again on the new text first."""
    for _ in range(_ATTEMPTS):
        current = _read(plan.target)
        if current != plan.raw:
            plan.raw = current
            plan.outcome = plan.edit.transform(_decode(current, plan.edit.path))
        before = _decode(plan.raw, plan.edit.path)
        after = plan.outcome.text
        if before == after:
            return before, None
        try:
            backup = None
            mode = plan.edit.new_mode
            if plan.raw is not None:
                mode = stat.S_IMODE(plan.target.stat().st_mode)
                if after is not None:  # a file deleted held only orcmem's entries: nothing of the user's to keep
                    backup = _backup(plan.target, plan.raw, mode, backup_dir)
            if _read(plan.target) != plan.raw:  # changed while we were backing it up: start over
                if backup is not None:
                    backup.unlink(missing_ok=True)
                continue
            if after is None:
                plan.target.unlink()
                _remove_if_empty(plan.target.parent)
            else:
                _write_atomic(plan.target, after, mode)
        except OSError as exc:
            raise OrcmemError(f"cannot write {plan.edit.path}: {exc.strerror or exc}") from exc
        return before, backup
    raise OrcmemError(f"{plan.edit.path} kept changing while orcmem edited it; close the agent and run again")


# --- JSON -------------------------------------------------------------------------------------------------------


def load_json_object(text: str | None, path: Path) -> JsonObject:
    """The file's top-level object ({} for a missing or blank file); invalid JSON is an OrcmemError naming it."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OrcmemError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it, then run again (nothing was changed)"
        ) from exc
    if not isinstance(value, dict):
        raise OrcmemError(f"{path} does not hold a JSON object; fix it, then run again (nothing was changed)")
    return value


def snapshot(doc: JsonObject) -> JsonObject:
    """A deep copy to compare against after editing."""
    return copy.deepcopy(doc)


def json_transform(
    path: Path,
    edit: Callable[[JsonObject], list[ItemChange]],
    *,
    removing: bool,
    notes: Callable[[JsonObject], list[str]] | None = None,
) -> Transform:
    """A transform of a JSON file: `edit` changes its object in place; a file left empty by a removal goes."""

    def transform(text: str | None) -> Outcome:
        doc = load_json_object(text, path)
        before = snapshot(doc)
        items = edit(doc)
        extra = notes(doc) if notes is not None else []
        if doc == before:
            return Outcome(text, items, extra)  # nothing to do: not a byte changes
        if removing and not doc:
            return Outcome(None, items, extra)  # it held nothing but orcmem's entries: the file goes
        return Outcome(render_json(text, before, doc), items, extra)

    return transform
