"""Helpers for the embed tests: a loopback HTTP server's state, tar archive builders, small pinned fakes."""

from __future__ import annotations

import hashlib
import io
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from orcmem.embed.model_files import ArchiveSource, ModelPins


def sha256(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class Route:
    """What the server answers on one path."""

    body: bytes = b""
    status: int = 200
    send_length: bool = True  # False: no Content-Length, the body ends when the connection closes
    chunk: int = 64 * 1024


@dataclass
class Server:
    """A loopback HTTP server whose routes tests set; it counts requests and bytes sent."""

    base: str
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    sent: dict[str, int] = field(default_factory=dict)
    finished: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        """The full URL of `path`."""
        return self.base + path


def tar_gz(entries: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A .tar.gz in memory: (name, data) pairs become regular files; TarInfo entries are added as they are."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                name, data = entry
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    """A tar entry of another type (tarfile.SYMTYPE, LNKTYPE, DIRTYPE, FIFOTYPE, ...)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


FAKE_FILES = {
    "model.onnx": b"not really onnx, but pinned all the same\n" * 50,
    "tokenizer.json": b'{"fake": true}\n',
    "vocab.txt": b"[PAD]\n[UNK]\nhello\n",
}


def fake_model_archive(extra: list[tarfile.TarInfo | tuple[str, bytes]] | None = None) -> bytes:
    """The fake model in fastembed's layout (`fake-model/<file>`), plus any extra entries."""
    entries: list[tarfile.TarInfo | tuple[str, bytes]] = [special("fake-model", tarfile.DIRTYPE)]
    entries += [(f"fake-model/{name}", data) for name, data in FAKE_FILES.items()]
    return tar_gz(entries + (extra or []))


def archive_source(pins: ModelPins, server: Server, data: bytes, *, path: str = "/model.tar.gz") -> ArchiveSource:
    """An ArchiveSource pinned to exactly `data`, served by `server` at `path`."""
    server.routes[path] = Route(body=data)
    return ArchiveSource(pins=pins, url=server.url(path), size=len(data), sha256=sha256(data))


def leftovers(models_dir: Path) -> list[str]:
    """Everything in `models_dir` except lock files (which are meant to stay)."""
    if not models_dir.exists():
        return []
    return sorted(p.name for p in models_dir.iterdir() if not p.name.endswith(".lock"))
