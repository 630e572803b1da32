"""Reading a file an import names: a regular file only (a FIFO never blocks), within a size, as UTF-8 text."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from orcmem.models.constants import IMPORT_FILE_MAX_BYTES
from orcmem.models.errors import NotFoundError, ValidationError


def read_note(path: Path, max_bytes: int = IMPORT_FILE_MAX_BYTES) -> str:
    """The text of `path`; bytes that are no UTF-8 are replaced (a note is words, not data to keep bit for bit).

    Raises:
        NotFoundError: there is no such file.
        ValidationError: it is not a regular file, is unreadable, or is larger than `max_bytes`.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise NotFoundError(f"No file {path}.") from None
    except OSError as exc:
        raise ValidationError(f"Cannot read {path} ({exc.strerror or exc}).") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValidationError(f"{path} is not a regular file.")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValidationError(f"{path} is over {max_bytes:,} bytes; orcmem imports notes, not archives.")
    return data.decode("utf-8", errors="replace")
