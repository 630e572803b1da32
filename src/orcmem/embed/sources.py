"""Every pinned model orcmem can run, by the id its vectors carry."""

from __future__ import annotations

from types import MappingProxyType

from orcmem.embed.errors import ModelError
from orcmem.embed.model_files import MINILM_ARCHIVE, ModelSource
from orcmem.embed.pypi_source import MINILM_INT8_PYPI

#: model id -> where its pinned files come from.
MODEL_SOURCES: MappingProxyType[str, ModelSource] = MappingProxyType(
    {
        MINILM_ARCHIVE.pins.model_id: MINILM_ARCHIVE,
        MINILM_INT8_PYPI.pins.model_id: MINILM_INT8_PYPI,
    }
)


def source_for(model_id: str) -> ModelSource:
    """The pinned source of `model_id`; ModelError naming the known ids if there is none."""
    try:
        return MODEL_SOURCES[model_id]
    except KeyError:
        known = ", ".join(sorted(MODEL_SOURCES))
        raise ModelError(f"Unknown embedding model {model_id!r}; known models: {known}.") from None
