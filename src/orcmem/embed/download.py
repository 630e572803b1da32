"""Stream a pinned archive over HTTP(S): size cap, SHA-256 check, nothing kept on failure."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from orcmem.models.errors import ModelError, ModelHostUnreachable

#: Called with (bytes done, bytes expected) as a download or copy advances.
Progress = Callable[[int, int], None]

_CHUNK_BYTES = 1 << 20
_ALLOWED_SCHEMES = ("https://", "http://")


def download_archive(
    url: str,
    dest: Path,
    *,
    size: int,
    sha256: str,
    progress: Progress | None = None,
    timeout: float = 30.0,
) -> Path:
    """Download `url` to `dest` only if it has exactly `size` bytes and the pinned SHA-256.

    The body streams to `<dest>.part`, which is renamed to `dest` on success and removed on every failure.

    Args:
        url: an http(s) address.
        dest: where the verified file ends up.
        size: the pinned byte count; a larger body is refused as soon as it is exceeded.
        sha256: the pinned lowercase hex digest.
        progress: called with (bytes done, `size`) after every chunk.
        timeout: seconds to wait for the connection and for each read.

    Returns:
        `dest`.

    Raises:
        ModelError: the server refused, the connection failed, or the body is too large, short or altered.
    """
    # Imported here: urllib.request pulls in http.client and ssl, too slow for hooks that never download.
    import urllib.error
    import urllib.request

    if not url.startswith(_ALLOWED_SCHEMES):
        raise ModelError(f"The embedding model can only be downloaded over http(s), not from {url!r}.")
    part = dest.with_name(dest.name + ".part")
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "orcmem"})
        try:
            response = urllib.request.urlopen(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise ModelError(f"The embedding model download failed with HTTP {exc.code}.") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ModelHostUnreachable(f"The embedding model could not be downloaded: {reason}.") from None
        with response:
            if response.status != 200:
                raise ModelError(f"The embedding model download failed with HTTP {response.status}.")
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > size:
                raise ModelError("The embedding model download is larger than the pinned archive.")
            done, digest = _stream(response, part, size, progress)
        if done < size:
            raise ModelError(f"The embedding model download stopped after {done:,} of {size:,} bytes.")
        if digest != sha256.lower():
            raise ModelError("The downloaded embedding model does not match its pinned SHA-256.")
        os.replace(part, dest)
    finally:
        # After a success `part` is already gone; after any failure this is what keeps nothing behind.
        part.unlink(missing_ok=True)
    return dest


def _stream(response: BinaryIO, part: Path, size: int, progress: Progress | None) -> tuple[int, str]:
    """Copy the response body to `part`, returning (bytes, hex SHA-256); stop as soon as it passes `size`."""
    import http.client

    digest = hashlib.sha256()
    done = 0
    try:
        with open(part, "wb") as out:
            while chunk := response.read(_CHUNK_BYTES):
                done += len(chunk)
                if done > size:
                    raise ModelError("The embedding model download is larger than the pinned archive.")
                digest.update(chunk)
                out.write(chunk)
                if progress is not None:
                    progress(done, size)
    except (OSError, http.client.HTTPException) as exc:
        raise ModelError(f"The embedding model download was interrupted: {exc}.") from None
    return done, digest.hexdigest()
