"""Every pinned model orcmem can run, by the id its vectors carry."""

from __future__ import annotations

from types import MappingProxyType

from orcmem.embed.model_files import MINILM_ARCHIVE, ModelSource
from orcmem.embed.pypi_source import MINILM_INT8_PYPI

#: model id -> where its pinned files come from.
MODEL_SOURCES: MappingProxyType[str, ModelSource] = MappingProxyType(
    {
        MINILM_ARCHIVE.pins.model_id: MINILM_ARCHIVE,
        MINILM_INT8_PYPI.pins.model_id: MINILM_INT8_PYPI,
    }
)
