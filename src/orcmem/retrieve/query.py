"""Turn any user text into a safe FTS5 expression."""

from __future__ import annotations

import re

from orcmem.models.constants import FTS_MAX_TERMS

# Anything that is not a letter, digit, '_', '.', '/' or '-' separates words; nothing else can reach FTS5.
_SEPARATORS = re.compile(r"[^\w./-]+")
_EDGE = "./-"

# Function words say nothing about which memory is meant, yet each one matches most memories, which made BM25
# slower (3x at 10k memories) and less precise. They are dropped when a better word remains; a query made only
# of them is kept whole. The figures behind this choice are in docs/benchmarks.md.
FUNCTION_WORDS = frozenset(
    (
        "a about after again all also am an and any are as at be been before being both but by can could did "
        "do does doing done for from had has have having he her here hers him his how i if in into is it its "
        "just me more most my no nor not of off on once only or other our ours out over own same she should "
        "so some such than that the their theirs them then there these they this those through to too under "
        "until up very was we were what when where which while who whom why will with would you your yours"
    ).split()
)


def query_terms(text: str, max_terms: int = FTS_MAX_TERMS, *, drop_function_words: bool = True) -> list[str]:
    """Lowercased distinct words of more than one character, in order, at most `max_terms`.

    Function words ("the", "how", "in") are left out when any other word remains.
    """
    words: list[str] = []
    for raw in _SEPARATORS.sub(" ", text.lower()).split():
        word = raw.strip(_EDGE)
        # A word must carry a letter or digit: one made only of '_' has no token for FTS5 to match.
        if len(word) > 1 and any(ch.isalnum() for ch in word) and word not in words:
            words.append(word)
    if drop_function_words:
        content = [word for word in words if word not in FUNCTION_WORDS]
        words = content or words
    return words[:max_terms]


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
