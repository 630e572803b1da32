"""Reciprocal rank fusion: the one formula recall fuses its two ranked lists with.

Free of the rest of orcmem: the prompt hook imports it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs the prompt hook milliseconds
if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence


def reciprocal_rank(ranked_lists: Sequence[Sequence[Hashable]], k: int) -> dict[Hashable, float]:
    """Each item's sum over the lists of 1/(k+n), n its 1-based rank in a list (its first place there)."""
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        placed: set[Hashable] = set()
        for position, item in enumerate(ranked, start=1):
            if item not in placed:
                placed.add(item)
                scores[item] = scores.get(item, 0.0) + 1.0 / (k + position)
    return scores
