"""Unpack a model .tar.gz defensively: plain files and folders only, inside the target, within fixed limits."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from orcmem.models.constants import (
    MODEL_ARCHIVE_MAX_ENTRIES,
    MODEL_ARCHIVE_MAX_ENTRY_BYTES,
    MODEL_ARCHIVE_MAX_TOTAL_BYTES,
)
from orcmem.models.errors import ModelError

if TYPE_CHECKING:
    import tarfile

MAX_ENTRIES = MODEL_ARCHIVE_MAX_ENTRIES
MAX_ENTRY_BYTES = MODEL_ARCHIVE_MAX_ENTRY_BYTES
MAX_TOTAL_BYTES = MODEL_ARCHIVE_MAX_TOTAL_BYTES

# A payload that is itself compressed could expand far past the limits checked here, so it is refused.
_NESTED_MAGIC = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd")  # gzip, zstd
_DRIVE = re.compile(r"^[A-Za-z]:")
_COPY_CHUNK = 1 << 20


def safe_extract(
    archive: Path,
    target: Path,
    *,
    max_entries: int = MAX_ENTRIES,
    max_entry_bytes: int = MAX_ENTRY_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
) -> list[str]:
    """Extract the gzip tar `archive` into the new folder `target`, refusing anything unsafe.

    Refused: absolute or escaping paths, links and every entry that is not a regular file or folder, duplicate
    files, more than `max_entries` entries, an entry above `max_entry_bytes`, more than `max_total_bytes` in all,
    and files whose payload starts with a gzip or zstd header.

    Args:
        archive: a .tar.gz file.
        target: a folder that must not exist yet; it is created, and removed again if extraction fails.

    Returns:
        The relative paths of the files written, in archive order.

    Raises:
        ModelError: the archive is unreadable or breaks a rule; `target` no longer exists.
    """
    import gzip
    import tarfile
    import zlib

    target.mkdir(parents=False, exist_ok=False)
    try:
        with _open_tar(archive) as tar:
            try:
                return _extract_members(tar, target, max_entries, max_entry_bytes, max_total_bytes)
            except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
                raise ModelError(f"{archive.name} is damaged ({exc}).") from None
            except OSError as exc:
                raise ModelError(f"{archive.name} could not be unpacked: {exc}.") from None
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def _extract_members(
    tar: tarfile.TarFile, target: Path, max_entries: int, max_entry_bytes: int, max_total_bytes: int
) -> list[str]:
    """Check and write every member of `tar` below `target`."""
    import tarfile

    written: list[str] = []
    entries = 0
    total = 0
    # Iterating the TarFile reads headers one at a time, so an oversized archive is stopped early.
    for member in tar:
        entries += 1
        if entries > max_entries:
            raise ModelError(f"Model archive exceeds extraction limits: more than {max_entries} entries.")
        relative = _relative_path(member.name)
        if member.isdir():
            if relative:
                _make_folder(target, relative)
            continue
        if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
            kind = "a link" if member.issym() or member.islnk() else "not a regular file or folder"
            raise ModelError(f"Model archive entry {member.name!r} is {kind}; it was refused.")
        if not relative:
            raise ModelError(f"Model archive entry {member.name!r} has no file name.")
        if member.size > max_entry_bytes:
            raise ModelError(f"Model archive exceeds extraction limits: {member.name!r} is too large.")
        total += member.size
        if total > max_total_bytes:
            raise ModelError(f"Model archive exceeds {max_total_bytes // (1024 * 1024)} MiB when unpacked.")
        source = tar.extractfile(member)
        if source is None:
            raise ModelError(f"Model archive entry {member.name!r} has no contents.")
        destination = target / relative
        if "/" in relative:
            _make_folder(target, relative.rsplit("/", 1)[0])
        with source:
            head = source.read(4)
            if head.startswith(_NESTED_MAGIC):
                raise ModelError(f"Nested model archive compression is not supported ({member.name!r}).")
            with _create(destination, member.name) as out:
                out.write(head)
                shutil.copyfileobj(source, out, _COPY_CHUNK)
        written.append(relative)
    return written


def _open_tar(archive: Path) -> tarfile.TarFile:
    """Open `archive` as a gzip tar, or ModelError if it is not one."""
    import tarfile
    import zlib

    try:
        return tarfile.open(archive, mode="r:gz")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ModelError(f"{archive.name} is not a readable .tar.gz archive ({exc}).") from None


def _create(destination: Path, name: str) -> BinaryIO:
    """Open a new file for writing; an existing one means the archive names it twice."""
    try:
        return open(destination, "xb")
    except FileExistsError:
        raise ModelError(f"Model archive holds {name!r} more than once.") from None


def _relative_path(name: str) -> str:
    """The entry name as a clean relative path ('' for the archive root), or ModelError if it could escape."""
    if "\x00" in name or "\\" in name:
        raise ModelError(f"Model archive entry {name!r} has an unsafe name.")
    if name.startswith("/") or _DRIVE.match(name):
        raise ModelError(f"Model archive entry {name!r} is an absolute path.")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ModelError(f"Model archive entry {name!r} points outside the model folder.")
    return "/".join(parts)


def _make_folder(target: Path, relative: str) -> None:
    """Create `target/relative`; a file already standing at any step of the path is an error."""
    folder = target / relative
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ModelError(f"Model archive entry {relative!r} clashes with a file of the same name.") from None
