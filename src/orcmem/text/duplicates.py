"""When two memories say the same thing: the same words once normalised, or close meaning with nothing that differs.

An embedding model places "Postgres listens on 5432" and "Postgres listens on 5433" almost on top of each other,
and "Always use yarn, never npm" and "Always use npm, never yarn" closer still, so closeness in meaning alone would
merge different and even opposite lessons. Two texts close in meaning still differ when

- each states a fact the other lacks and the two facts look alike: facts are written as identifiers
  (`text/facts.py`: numbers and versions, flags, paths, file names, code in quotes or backticks, names with digits,
  underscores or inner capitals), and alike means the same shape (two ports, two flags) or mostly the same letters;
- they share much of their wording and only one of them negates (not, never, avoid, disable...);
- they share most of their wording and each puts a few words of its own where the other has others (tabs for
  spaces, staging for production);
- they use the very same words in another order (yarn before npm, or npm before yarn).

Measured on bench/data/duplicate_pairs.jsonl (docs/benchmarks.md, bench/duplicates.py).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Set as AbstractSet
from functools import lru_cache

from orcmem.text.facts import Facts, cached_facts

_SPACING = re.compile(r"[\s,;:.!?]+")  # what two writes of the same words may differ in; signs and operators stay
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[a-z]+")
_WORD = re.compile(r"[a-z][a-z0-9_'-]{2,}")
_NEGATION = re.compile(
    r"\b(?:not|never|no|don't|do not|doesn't|does not|avoid|without|isn't|aren't|can't|cannot|won't|instead of|stop|"
    r"disable[sd]?)\b",
    re.I,
)
_FILLER = frozenset(
    "the a an and or of to in on for with by is are be it this that as at from into its their then than so if when "
    "use uses used run runs".split()
)
ALIKE_RATIO = 0.6  # two identifiers sharing this much of their letters are versions of one fact
NEGATION_OVERLAP = 0.4  # shared wording (weighted Jaccard of content words) above which one negation flips a lesson
SWAP_OVERLAP = 0.5  # shared wording above which a few words swapped for others state another lesson
SWAP_MAX_WORDS = 3


def same_text_key(title: str, body: str) -> str:
    """A memory's text as two writes of the same words share it: NFKC, case, spacing and sentence punctuation folded
    (signs and operators stay: `-1` is not `1`, `!=` is not `==`, `C++` is not `C`)."""

    def fold(text: str) -> str:
        return _SPACING.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()

    return fold(title) + "\n" + fold(body)


@lru_cache(maxsize=256)  # a write looks its text up, then stores it: the second call is free
def same_text_digest(title: str, body: str) -> int:
    """`same_text_key` as a 64-bit digest, stored with each memory so a repeat is found by a small index (a match
    is then compared by its key: two texts sharing a digest are not taken for one)."""
    digest = hashlib.blake2b(same_text_key(title, body).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@lru_cache(maxsize=8192)  # identifiers repeat across the pairs one audit compares
def _shape(identifier: str) -> str:
    return _LETTERS.sub("a", _DIGITS.sub("0", identifier))


def _any_alike(mine: AbstractSet[str], theirs: AbstractSet[str]) -> bool:
    """Whether a fact of one text and a fact of the other look alike (the same shape, else mostly the same
    letters): the shapes compared as sets first, the letters pair by pair only when no shape is shared."""
    if not mine or not theirs:
        return False
    shapes = {_shape(b) for b in theirs}
    if any(_shape(a) in shapes for a in mine):
        return True
    return any(_alike_letters(a, b) for a in mine for b in theirs)


def _alike_letters(one: str, other: str) -> bool:
    matcher = difflib.SequenceMatcher(None, one, other)  # the cheap upper bounds first: the same answer, sooner
    return (
        matcher.real_quick_ratio() >= ALIKE_RATIO
        and matcher.quick_ratio() >= ALIKE_RATIO
        and (matcher.ratio() >= ALIKE_RATIO)
    )


def _without(text: str, found: AbstractSet[str]) -> str:
    """The text, folded as `same_text_key` folds it, with each of `found` (lowercase facts) blanked out."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    for fact in sorted(found, key=len, reverse=True):
        folded = folded.replace(fact, "\x00")
    return _SPACING.sub(" ", folded).strip()


def _content_words(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in _FILLER]


def other_value(one: str, other: str, known: tuple[Facts, Facts] | None = None) -> bool:
    """Whether two texts give another value for one thing (a port, a version, a flag, a tool in one sentence) or
    one negates what the other says: the stronger half of `differing_facts`, which the store audit shows as a
    possible contradiction (a few words swapped for others is a rewording as often as another lesson). `known`:
    the two texts' facts (`text/facts.facts_of`), when the caller keeps them."""
    mine, theirs = known or (cached_facts(one), cached_facts(other))
    only_mine, only_theirs = mine - theirs, theirs - mine
    if _any_alike(only_mine, only_theirs):
        return True
    if only_mine and only_theirs and _without(one, only_mine) == _without(other, only_theirs):
        return True
    counts_one, counts_other = Counter(_content_words(one)), Counter(_content_words(other))
    union = sum((counts_one | counts_other).values())
    overlap = sum((counts_one & counts_other).values()) / union if union else 1.0
    return overlap >= NEGATION_OVERLAP and bool(_NEGATION.search(one)) != bool(_NEGATION.search(other))


def differing_facts(one: str, other: str, known: tuple[Facts, Facts] | None = None) -> bool:
    """Whether two texts close in meaning still state different lessons (the rules in this module's docstring);
    `known` as for `other_value`."""
    mine, theirs = known or (cached_facts(one), cached_facts(other))
    only_mine, only_theirs = mine - theirs, theirs - mine
    if _any_alike(only_mine, only_theirs):
        return True
    if only_mine and only_theirs and _without(one, only_mine) == _without(other, only_theirs):
        return True  # the same sentence around another identifier: `echo 123456789012` against `echo 3f2a9b1c0d4e`
    words_one, words_other = _content_words(one), _content_words(other)
    counts_one, counts_other = Counter(words_one), Counter(words_other)
    union = sum((counts_one | counts_other).values())
    overlap = sum((counts_one & counts_other).values()) / union if union else 1.0
    if overlap >= NEGATION_OVERLAP and bool(_NEGATION.search(one)) != bool(_NEGATION.search(other)):
        return True
    if counts_one == counts_other and words_one != words_other:
        return True  # the same words in another order: "yarn, never npm" against "npm, never yarn"
    only_one, only_other = counts_one - counts_other, counts_other - counts_one
    swapped = only_one and only_other and max(sum(only_one.values()), sum(only_other.values())) <= SWAP_MAX_WORDS
    return bool(overlap >= SWAP_OVERLAP and swapped)
