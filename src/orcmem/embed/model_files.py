"""The pinned all-MiniLM-L6-v2 model files: what they must hash to, and how they get into the models folder.

A model folder is only ever used after every pinned file in it verifies. Installing builds the folder in a hidden
sibling, verifies it there and renames it into place, so a killed process never leaves a loadable half-install.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from orcmem.embed.archive import safe_extract
from orcmem.embed.download import Progress, download_archive
from orcmem.embed.staging import commit_dir, discard_dir, install_lock, remove_leftovers, staging_dir
from orcmem.models.errors import ModelError

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ModelPins:
    """A model folder's name, the id its vectors carry, and the SHA-256 of every file it must hold."""

    name: str
    model_id: str
    files: Mapping[str, str] = field(default_factory=dict, hash=False)  # relative path -> lowercase hex SHA-256

    def __post_init__(self) -> None:
        # The name and file names become paths under the models folder: nothing may point elsewhere.
        if not _SAFE_NAME.fullmatch(self.name):
            raise ValueError(f"unsafe model folder name {self.name!r}")
        for relative, digest in self.files.items():
            if not all(_SAFE_NAME.fullmatch(part) for part in relative.split("/")):
                raise ValueError(f"unsafe pinned file name {relative!r}")
            if not _SHA256.fullmatch(digest):
                raise ValueError(f"{relative}: {digest!r} is not a lowercase hex SHA-256")
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))


class ModelSource(Protocol):
    """Somewhere the pinned files of one model can come from."""

    @property
    def pins(self) -> ModelPins:
        """The files this source must deliver."""
        ...

    def fetch(self, work: Path, models_dir: Path, progress: Progress | None) -> Path:
        """Put the model's files in a folder inside `work` (a scratch folder) and return that folder."""
        ...


@dataclass(frozen=True)
class ArchiveSource:
    """A model published as one pinned .tar.gz at a URL (fastembed's own archives)."""

    pins: ModelPins
    url: str
    size: int
    sha256: str

    def archive_path(self, models_dir: Path) -> Path:
        """Where the downloaded archive waits to be unpacked: `<models_dir>/<name>.tar.gz`."""
        return models_dir / f"{self.pins.name}.tar.gz"

    def fetch(self, work: Path, models_dir: Path, progress: Progress | None) -> Path:
        """Download the archive unless a verified copy is already there, unpack it into `work`, delete it."""
        archive = self.archive_path(models_dir)
        try:
            if not self._archive_is_good(archive):
                download_archive(self.url, archive, size=self.size, sha256=self.sha256, progress=progress)
            return unpack_model_archive(archive, work, self.pins.name)
        finally:
            # The verified folder is the steady state; the archive is only kept across a crash mid-install.
            archive.unlink(missing_ok=True)

    def _archive_is_good(self, archive: Path) -> bool:
        return archive.is_file() and archive.stat().st_size == self.size and sha256_file(archive) == self.sha256


MINILM_PINS = ModelPins(
    name="fast-all-MiniLM-L6-v2",
    model_id="minilm-l6-v2",
    files={
        "config.json": "1b4d8e2a3988377ed8b519a31d8d31025a25f1c5f8606998e8014111438efcd7",
        "model.onnx": "bbd7b466f6d58e646fdc2bd5fd67b2f5e93c0b687011bd4548c420f7bd46f0c5",
        "special_tokens_map.json": "5d5b662e421ea9fac075174bb0688ee0d9431699900b90662acd44b2a350503a",
        "tokenizer.json": "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
        "tokenizer_config.json": "bd2e06a5b20fd1b13ca988bedc8763d332d242381b4fbc98f8fead4524158f79",
        "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    },
)

#: fastembed's 83 MB archive of all-MiniLM-L6-v2; its entries are `fast-all-MiniLM-L6-v2/<file>`.
MINILM_ARCHIVE = ArchiveSource(
    pins=MINILM_PINS,
    url="https://storage.googleapis.com/qdrant-fastembed/sentence-transformers-all-MiniLM-L6-v2.tar.gz",
    size=83_180_180,
    sha256="2735afe656e156af64ed603dbb1c96f3cae7f937286a8feb27fff7fa979f6a77",
)


def sha256_file(path: Path) -> str:
    """The lowercase hex SHA-256 of a file's contents."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def model_dir(models_dir: Path, pins: ModelPins = MINILM_PINS) -> Path:
    """The folder the model of `pins` lives in: `<models_dir>/<name>`."""
    return models_dir / pins.name


def model_dir_problem(folder: Path, pins: ModelPins = MINILM_PINS) -> str | None:
    """What is wrong with `folder` as the model of `pins`, or None if every pinned file is there and hashes right."""
    if folder.is_symlink() or not folder.is_dir():
        return "the model folder is missing"
    for relative in pins.files:
        if not _is_plain_file(folder / relative):
            return f"{relative} is missing"
    for relative, expected in pins.files.items():
        if sha256_file(folder / relative) != expected:
            return f"{relative} does not match its pinned SHA-256"
    return None


def ensure_model(models_dir: Path, source: ModelSource = MINILM_ARCHIVE, progress: Progress | None = None) -> Path:
    """Return the verified model folder, (re)installing it from `source` if any pinned file is missing or altered.

    Args:
        models_dir: the profile's models folder; created if needed.
        source: where the files come from (default: fastembed's pinned archive, downloaded over HTTPS).
        progress: called with (bytes done, bytes expected) while the source downloads or copies.

    Returns:
        `<models_dir>/<name>`, every pinned file verified.

    Raises:
        ModelError: the source failed or delivered files that do not match the pins; the broken folder is gone
            and nothing else was left behind.
    """
    pins = source.pins
    final = model_dir(models_dir, pins)
    if model_dir_problem(final, pins) is None:
        return final
    with install_lock(models_dir, pins.name):
        # Another process may have installed it while this one waited for the lock.
        if model_dir_problem(final, pins) is None:
            return final
        remove_leftovers(models_dir, pins.name)
        discard_dir(final)
        with staging_dir(models_dir, pins.name) as work:
            found = source.fetch(work, models_dir, progress)
            _install_folder(found, work, final, pins, move=True)
    return final


def install_from(path: Path, models_dir: Path, pins: ModelPins = MINILM_PINS) -> Path:
    """Install the model of `pins` from a local .tar.gz archive or an unpacked folder, verified like a download.

    An existing model folder is only replaced once the new files have verified.

    Raises:
        ModelError: `path` is neither, is unsafe to unpack, or its files do not match the pins.
    """
    final = model_dir(models_dir, pins)
    if not path.exists():
        raise ModelError(f"{path} does not exist.")
    with install_lock(models_dir, pins.name):
        remove_leftovers(models_dir, pins.name)
        with staging_dir(models_dir, pins.name) as work:
            if path.is_dir():
                _install_folder(path, work, final, pins, move=False)
            else:
                found = unpack_model_archive(path, work, pins.name)
                _install_folder(found, work, final, pins, move=True)
    return final


def unpack_model_archive(archive: Path, work: Path, name: str) -> Path:
    """Safely unpack `archive` into `work` and return the folder holding the model files.

    That is the archive's `<name>/` folder when it has one (fastembed's layout), else the archive root.
    """
    unpacked = work / "unpacked"
    safe_extract(archive, unpacked)
    nested = unpacked / name
    return nested if nested.is_dir() and not nested.is_symlink() else unpacked


def _install_folder(found: Path, work: Path, final: Path, pins: ModelPins, *, move: bool) -> None:
    """Gather exactly the pinned files of `found` in `work`, verify them, and rename the result to `final`."""
    ready = work / "ready"
    ready.mkdir()
    for relative in pins.files:
        source = found / relative
        if not _is_plain_file(source):
            raise ModelError(f"The embedding model files are incomplete: {relative} is missing.")
        destination = ready / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if move:
            source.rename(destination)
        else:
            shutil.copyfile(source, destination)
    problem = model_dir_problem(ready, pins)
    if problem is not None:
        raise ModelError(f"The embedding model files were refused: {problem}.")
    commit_dir(ready, final)


def _is_plain_file(path: Path) -> bool:
    """True for a regular file that is not a symbolic link (a link could later point at other bytes)."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False
