"""Reading, backing up and atomically rewriting configuration files; JSON edited in place, member by member.

Every edit is a pure function of the file's text (`Transform`), so all files are planned (and checked) before any
is written, and a file that changed on disk since it was read is simply planned again before it is replaced.
"""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orcmem.errors import OrcmemError
from orcmem.setup_agents.report import FileAction, FileReport, ItemChange

BACKUP_INFIX = ".orcmem-backup-"
_WS = re.compile(r"[ \t\n\r]*")
_ATTEMPTS = 3
_Edits = list[tuple[int, int, str]]  # (start, end, replacement) in the original JSON text


@dataclass
class Outcome:
    """What a transform made of a file: its new text (None: delete it), the entries touched, notes for the user."""

    text: str | None
    items: list[ItemChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Transform = Callable[[str | None], Outcome]


@dataclass(frozen=True)
class FileEdit:
    """A file and how to change it; `new_mode` is the permission of the file if it has to be created."""

    path: Path
    transform: Transform
    new_mode: int | None = None


@dataclass
class _Plan:
    edit: FileEdit
    target: Path
    raw: bytes | None
    outcome: Outcome


def _target(path: Path) -> Path:
    """The file to write: a symlinked config (dotfiles) is edited where it lives, the link stays."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
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


def _backup(path: Path, raw: bytes, mode: int) -> Path:
    """Copy the file's current bytes next to it, with its permissions; never overwrites an earlier backup."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1000):
        candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}" + (f"-{n}" if n else ""))
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(raw)
        return candidate
    raise OrcmemError(f"cannot find a free backup name for {path}")


def _write_atomic(path: Path, text: str, mode: int | None) -> None:
    """Write a temporary file in the same folder, then rename it over the target (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.orcmem-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
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


def apply_edits(edits: list[FileEdit], *, dry_run: bool) -> tuple[list[FileReport], list[str]]:
    """Plan every edit first (any error: nothing is written), then back up and write each changed file."""
    plans: list[_Plan] = []
    for edit in edits:
        target = _target(edit.path)
        raw = _read(target)
        plans.append(_Plan(edit, target, raw, edit.transform(_decode(raw, edit.path))))
    reports: list[FileReport] = []
    notes: list[str] = []
    for plan in plans:
        before = _decode(plan.raw, plan.edit.path)
        backup: Path | None = None
        if not dry_run and _action(before, plan.outcome.text) != "unchanged":
            before, backup = _commit(plan)
        notes.extend(note for note in plan.outcome.notes if note not in notes)
        action = _action(before, plan.outcome.text)
        reports.append(FileReport(plan.edit.path, action, tuple(plan.outcome.items), backup))
    return reports, notes


def _commit(plan: _Plan) -> tuple[str | None, Path | None]:
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
                    backup = _backup(plan.target, plan.raw, mode)
            if _read(plan.target) != plan.raw:  # changed while we were backing it up: start over
                if backup is not None:
                    backup.unlink(missing_ok=True)
                continue
            if after is None:
                plan.target.unlink()
            else:
                _write_atomic(plan.target, after, mode)
        except OSError as exc:
            raise OrcmemError(f"cannot write {plan.edit.path}: {exc.strerror or exc}") from exc
        return before, backup
    raise OrcmemError(f"{plan.edit.path} kept changing while orcmem edited it; close the agent and run again")


# --- JSON -------------------------------------------------------------------------------------------------------


def load_json_object(text: str | None, path: Path) -> dict[str, Any]:
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


def snapshot(doc: dict[str, Any]) -> dict[str, Any]:
    """A deep copy to compare against after editing."""
    return copy.deepcopy(doc)


def json_transform(
    path: Path,
    edit: Callable[[dict[str, Any]], list[ItemChange]],
    *,
    removing: bool,
    notes: Callable[[dict[str, Any]], list[str]] | None = None,
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


def render_json(original: str | None, before: dict[str, Any], after: dict[str, Any]) -> str:
    """The new text of a JSON file: only what changed is rewritten, in the file's indentation; other bytes stay."""
    if original is None or not original.strip():
        return json.dumps(after, indent=2, ensure_ascii=False) + "\n"
    style = _Style.of(original)
    edits: _Edits = []
    _diff(original, _parse(original, _skip(original, 0)), before, after, 0, style, edits)
    text = original
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


@dataclass(frozen=True)
class _Style:
    """How the file is laid out: its indentation unit (None: all on one line) and line ending."""

    indent: str | None
    newline: str

    @classmethod
    def of(cls, text: str) -> _Style:
        newline = "\r\n" if "\r\n" in text else "\n"
        if "\n" not in text.strip():
            return cls(None, newline)
        match = re.search(r"^([ \t]+)\S", text, re.MULTILINE)
        return cls(match.group(1) if match else "  ", newline)

    def dump(self, value: Any, depth: int, *, inline: bool = False) -> str:
        """A value as it would be written at this depth."""
        if self.indent is None or inline:
            return json.dumps(value, ensure_ascii=False)
        text = json.dumps(value, indent=self.indent, ensure_ascii=False)
        return text.replace("\n", self.newline + self.indent * depth)

    def line(self, depth: int) -> str:
        """The break before an item at this depth (nothing for a one-line file)."""
        return "" if self.indent is None else self.newline + self.indent * depth


@dataclass
class _Node:
    """Where a JSON value sits in the text; for containers, where each member or item sits."""

    start: int
    end: int
    members: list[tuple[str, int, _Node]] | None = None  # object: (key, where the member starts, its value)
    items: list[_Node] | None = None  # array


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


_DECODER = json.JSONDecoder()


def _parse(text: str, i: int) -> _Node:
    """Spans of the (valid) JSON value starting at i."""
    if text[i] == "{":
        members: list[tuple[str, int, _Node]] = []
        j = _skip(text, i + 1)
        while text[j] != "}":
            key, k = json.decoder.scanstring(text, j + 1)  # type: ignore[attr-defined]
            value = _parse(text, _skip(text, _skip(text, k) + 1))
            members.append((key, j, value))
            j = _skip(text, value.end)
            if text[j] == ",":
                j = _skip(text, j + 1)
        return _Node(i, j + 1, members=members)
    if text[i] == "[":
        items: list[_Node] = []
        j = _skip(text, i + 1)
        while text[j] != "]":
            value = _parse(text, j)
            items.append(value)
            j = _skip(text, value.end)
            if text[j] == ",":
                j = _skip(text, j + 1)
        return _Node(i, j + 1, items=items)
    _, end = _DECODER.raw_decode(text, i)
    return _Node(i, end)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _diff(text: str, node: _Node, before: Any, after: Any, depth: int, style: _Style, edits: _Edits) -> None:
    """Record the smallest text edits turning `before` (found at node) into `after`."""
    if _same(before, after):
        return
    both_objects = isinstance(before, dict) and isinstance(after, dict) and node.members is not None
    both_arrays = isinstance(before, list) and isinstance(after, list) and node.items is not None
    if both_objects and _diff_object(text, node, before, after, depth, style, edits):
        return
    if both_arrays and _diff_array(text, node, before, after, depth, style, edits):
        return
    inline = "\n" not in text[node.start : node.end] and node.end - node.start > 2 and depth > 0
    edits.append((node.start, node.end, style.dump(after, depth, inline=inline)))


def _diff_object(
    text: str, node: _Node, before: dict[str, Any], after: dict[str, Any], depth: int, style: _Style, edits: _Edits
) -> bool:
    assert node.members is not None
    last = {key: n for n, (key, _, _) in enumerate(node.members)}  # JSON's last duplicate wins
    removed = [last[key] for key in before if key not in after]
    added = [key for key in after if key not in before]
    if removed and added:
        return False  # both at once: rewrite this object
    for key, n in last.items():
        if key in after and not _same(before[key], after[key]):
            _diff(text, node.members[n][2], before[key], after[key], depth + 1, style, edits)
    spans = [(start, value.start, value.end) for _, start, value in node.members]
    if removed:
        _delete(text, node, spans, set(removed), edits)
    if added:
        inline = bool(spans) and "\n" not in text[node.start : node.end]
        entries = [
            json.dumps(key, ensure_ascii=False) + ": " + style.dump(after[key], depth + 1, inline=inline)
            for key in added
        ]
        _insert(text, node, spans, entries, depth, style, edits)
    return True


def _diff_array(
    text: str, node: _Node, before: list[Any], after: list[Any], depth: int, style: _Style, edits: _Edits
) -> bool:
    assert node.items is not None
    spans = [(item.start, item.start, item.end) for item in node.items]
    if len(before) == len(after):
        for n, item in enumerate(node.items):
            _diff(text, item, before[n], after[n], depth + 1, style, edits)
        return True
    if len(after) > len(before) and all(_same(a, b) for a, b in zip(before, after, strict=False)):
        inline = bool(spans) and "\n" not in text[node.start : node.end]
        entries = [style.dump(value, depth + 1, inline=inline) for value in after[len(before) :]]
        _insert(text, node, spans, entries, depth, style, edits)
        return True
    kept = _subsequence(before, after)
    if kept is None:
        return False
    _delete(text, node, spans, set(range(len(before))) - kept, edits)
    return True


def _subsequence(before: list[Any], after: list[Any]) -> set[int] | None:
    """Indexes of `before` that make up `after` when it is `before` with some items taken out, else None."""
    kept: set[int] = set()
    n = 0
    for value in after:
        while n < len(before) and not _same(before[n], value):
            n += 1
        if n == len(before):
            return None
        kept.add(n)
        n += 1
    return kept


def _delete(text: str, node: _Node, spans: list[tuple[int, int, int]], gone: set[int], edits: _Edits) -> None:
    """Take members or items out with their separators; the rest keeps its bytes."""
    if len(gone) == len(spans):
        edits.append((node.start + 1, node.end - 1, ""))
        return
    first_kept = min(set(range(len(spans))) - gone)
    for n in sorted(gone):
        if n > first_kept:
            edits.append((spans[n - 1][2], spans[n][2], ""))  # from the end of the one before
        else:
            edits.append((spans[n][0], spans[n + 1][0], ""))  # up to the start of the next


def _insert(
    text: str,
    node: _Node,
    spans: list[tuple[int, int, int]],
    entries: list[str],
    depth: int,
    style: _Style,
    edits: _Edits,
) -> None:
    """Add members or items after the last one, laid out like it (or like the file, in an empty container)."""
    if spans:
        if len(spans) > 1:
            gap = text[spans[-2][2] : spans[-1][0]]
            gap = gap[gap.index(",") + 1 :]
        else:
            gap = text[node.start + 1 : spans[0][0]] or ("" if style.indent is None else " ")
        edits.append((spans[-1][2], spans[-1][2], "".join("," + gap + entry for entry in entries)))
        return
    inner = ("," + style.line(depth + 1)).join(entries)
    edits.append((node.start + 1, node.end - 1, style.line(depth + 1) + inner + style.line(depth)))
