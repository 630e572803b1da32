"""How an entry point opens the service: the profile database, plus the embedder when memory is on."""

from __future__ import annotations

from pathlib import Path

from orcmem.embed import MODEL_SOURCES, ModelError, ModelSource, PackageSource, model_dir, worker_embedder
from orcmem.embed.worker import WorkerEmbedder
from orcmem.models.constants import EMBEDDING_MODEL_DEFAULT, MODELS_DIRNAME
from orcmem.service import MemoryService


def models_dir(home: Path) -> Path:
    """Where model folders live: `$ORCMEM_HOME/models`."""
    return home / MODELS_DIRNAME


def active_source(service: MemoryService) -> ModelSource:
    """The pinned source of the model search uses (the default archive if the setting names an unknown one)."""
    return MODEL_SOURCES.get(service.embedding_model()) or MODEL_SOURCES[EMBEDDING_MODEL_DEFAULT]


def make_embedder(home: Path, service: MemoryService, *, allow_download: bool) -> WorkerEmbedder | None:
    """A worker-thread embedder for the active model, or None when memory is off or the model is not here.

    Nothing loads until the first call. The files are verified against their pins before loading; a short-lived
    command passes `allow_download=False`, so it never waits for a download (search then uses words alone).
    """
    if not service.is_enabled():
        return None  # memory off: nothing is embedded and the model is never downloaded
    source = active_source(service)
    installed = model_dir(models_dir(home), source.pins).is_dir()
    # The PyPI source copies files already on this machine: assembling it is never a download.
    local_source = isinstance(source, PackageSource) and source.available()
    if not installed and not allow_download and not local_source:
        return None
    try:
        return worker_embedder(models_dir(home), source, install=allow_download or local_source)
    except ModelError:
        return None


def open_service(home: Path, *, embed: bool = True, allow_download: bool = False) -> MemoryService:
    """Open the profile's service, with an embedder attached when `embed` and memory is on."""
    service = MemoryService.open(home)
    if embed:
        embedder = make_embedder(home, service, allow_download=allow_download)
        if embedder is not None:
            service.use_embedder(embedder)
    return service
