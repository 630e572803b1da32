"""Turn any user text into a safe FTS5 expression."""

from __future__ import annotations

import re

from orcmem.models.constants import FTS_MAX_TERMS

# Anything that is not a letter, digit, '_', '.', '/' or '-' separates words; nothing else can reach FTS5.
_SEPARATORS = re.compile(r"[^\w./-]+")
_EDGE = "./-"


def query_terms(text: str, max_terms: int = FTS_MAX_TERMS) -> list[str]:
    """Lowercased distinct words of more than one character, in order, at most `max_terms`."""
    words: list[str] = []
    for raw in _SEPARATORS.sub(" ", text.lower()).split():
        word = raw.strip(_EDGE)
        # A word must carry a letter or digit: one made only of '_' has no token for FTS5 to match.
        if len(word) > 1 and any(ch.isalnum() for ch in word) and word not in words:
            words.append(word)
            if len(words) == max_terms:
                break
    return words


def fts_query(text: str, max_terms: int = FTS_MAX_TERMS) -> str | None:
    """Quoted terms joined with OR, the last one a prefix; None when the text holds no usable word.

    >>> fts_query("vitest --pool=forks")
    '"vitest" OR "pool" OR "forks"*'
    """
    terms = query_terms(text, max_terms)
    if not terms:
        return None
    quoted = [f'"{term}"' for term in terms]
    quoted[-1] += "*"
    return " OR ".join(quoted)
