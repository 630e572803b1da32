"""Add a memory to a project's CLAUDE.md or AGENTS.md under the orcmem heading."""

from __future__ import annotations

import os
from pathlib import Path

from orcmem.models.constants import EXPORT_FILES, EXPORT_HEADING
from orcmem.models.errors import ExportError, ValidationError
from orcmem.text.textsafe import printable


def bullet_for(title: str, body: str, note: str = "") -> str:
    """The markdown bullet for a memory, kept on one line so the list stays a list; control and invisible
    characters shown as codes, so the file can neither drive a terminal nor hide text from its reader. `note` (where
    its words came from, when a tool gave them) ends it in parentheses."""
    line = f"- {printable(' '.join(title.split()))}: {printable(' '.join(body.split()))}"
    return f"{line} ({note})" if note else line


def add_bullet(content: str, bullet: str) -> str | None:
    """The new file content with `bullet` added newest-first under the heading, or None if already there."""
    if bullet in content.splitlines():
        return None
    lines = content.splitlines()
    if EXPORT_HEADING in lines:
        index = lines.index(EXPORT_HEADING)
        lines.insert(index + 1, bullet)
        return "\n".join(lines) + "\n"
    return (content.rstrip() + "\n\n" + EXPORT_HEADING + "\n" + bullet + "\n").lstrip()


def export_bullet(root: Path, file_name: str, bullet: str) -> tuple[Path, bool]:
    """Write `bullet` into `root/file_name`; returns the file and whether it changed.

    Raises:
        ValidationError: the file name is not CLAUDE.md or AGENTS.md.
        ExportError: the file resolves outside the project root, or cannot be read or written.
    """
    if file_name not in EXPORT_FILES:
        raise ValidationError(f"Export goes to {' or '.join(EXPORT_FILES)}, not {file_name!r}.")
    try:
        root = root.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13), an unreadable link
        raise ExportError(f"Cannot open the project folder {root} ({exc}).") from exc
    target = root / file_name
    # Only a regular file, never through a link: a link could lead to .git/config or a script, and its target
    # would be rewritten; a FIFO would hang the export. O_NONBLOCK opens a FIFO at once; fstat then refuses it.
    if target.is_symlink():
        raise ExportError(f"{target} is a symbolic link; orcmem writes only to a regular file. It was left unchanged.")
    content = _read_regular(target)
    updated = add_bullet(content, bullet)
    if updated is None:
        return target, False
    import tempfile

    try:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(updated)
            os.chmod(temp_name, mode)
            os.replace(temp_name, target)  # atomic: a crash never leaves a half-written file
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ExportError(f"Cannot write {target} ({exc}); it was left unchanged.") from exc
    return target, True


def _read_regular(target: Path) -> str:
    """The text of `target` ("" when it does not exist), refusing anything but a regular file without blocking."""
    import stat

    try:
        descriptor = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise ExportError(f"Cannot read {target} ({exc.strerror or exc}); it was left unchanged.") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise ExportError(f"{target} is not a regular file; orcmem writes only to one. It was left unchanged.")
    with os.fdopen(descriptor, "rb") as handle:
        try:
            return handle.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ExportError(f"Cannot read {target} ({exc}); it was left unchanged.") from exc
