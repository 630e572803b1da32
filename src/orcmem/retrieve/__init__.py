"""Domain: building the word query, fusing ranked lists and scoring results (names load on first use)."""

from __future__ import annotations

from orcmem.lazy import lazy_getattr

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hooks milliseconds

if TYPE_CHECKING:
    from orcmem.retrieve.query import fts_query, query_terms
    from orcmem.retrieve.scoring import cap_per_run, fuse, recency_factor

__all__ = [
    "cap_per_run",
    "fts_query",
    "fuse",
    "query_terms",
    "recency_factor",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "fts_query": "orcmem.retrieve.query",
        "query_terms": "orcmem.retrieve.query",
        "cap_per_run": "orcmem.retrieve.scoring",
        "fuse": "orcmem.retrieve.scoring",
        "recency_factor": "orcmem.retrieve.scoring",
    },
)
