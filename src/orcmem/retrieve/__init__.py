"""Domain: building the word query, fusing ranked lists and scoring results."""

from orcmem.retrieve.query import fts_query, query_terms
from orcmem.retrieve.scoring import cap_per_run, fuse, recency_factor

__all__ = ["cap_per_run", "fts_query", "fuse", "query_terms", "recency_factor"]
