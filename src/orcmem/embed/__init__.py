"""Embeddings: the pinned all-MiniLM-L6-v2 model files and the embedders that run them.

Importing this package is cheap: fastembed, numpy and ONNX Runtime are imported only when a model loads, and
urllib/tarfile only when a model is downloaded or unpacked.
"""

from orcmem.embed.archive import safe_extract
from orcmem.embed.download import Progress, download_archive
from orcmem.embed.embedder import Embedder, FastEmbedEmbedder, load_embedder
from orcmem.embed.model_files import (
    MINILM_ARCHIVE,
    MINILM_PINS,
    ArchiveSource,
    ModelPins,
    ModelSource,
    ensure_model,
    install_from,
    model_dir,
    model_dir_problem,
)
from orcmem.embed.pypi_source import MINILM_INT8_PINS, MINILM_INT8_PYPI, PackageFile, PackageSource
from orcmem.embed.sources import MODEL_SOURCES
from orcmem.embed.worker import WorkerEmbedder, worker_embedder
from orcmem.errors import ModelError
from orcmem.models.constants import EMBED_BATCH_SIZE, EMBEDDING_DIMENSIONS

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "EMBED_BATCH_SIZE",
    "MINILM_ARCHIVE",
    "MINILM_INT8_PINS",
    "MINILM_INT8_PYPI",
    "MINILM_PINS",
    "MODEL_SOURCES",
    "ArchiveSource",
    "Embedder",
    "FastEmbedEmbedder",
    "ModelError",
    "ModelPins",
    "ModelSource",
    "PackageFile",
    "PackageSource",
    "Progress",
    "WorkerEmbedder",
    "download_archive",
    "ensure_model",
    "install_from",
    "load_embedder",
    "model_dir",
    "model_dir_problem",
    "safe_extract",
    "worker_embedder",
]
