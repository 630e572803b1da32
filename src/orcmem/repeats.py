"""When two memories say the same thing: the same words once normalised, or close meaning without a differing fact.

An embedding model places "Postgres listens on 5432" and "Postgres listens on 5433" almost on top of each other,
so closeness in meaning alone would merge different lessons. The facts a lesson hinges on are written as
identifiers: numbers and versions, flags, paths, file names, code in quotes or backticks, names with digits,
underscores or inner capitals. Two texts that each hold such a fact the other lacks, and the two facts look alike
(the same shape, like two ports or two flags, or mostly the same letters), state different facts. Measured on
bench/data/duplicate_pairs.jsonl (docs/benchmarks.md).
"""

from __future__ import annotations

import difflib
import re
import unicodedata

_NOT_WORD = re.compile(r"[\W_]+")
_QUOTED = re.compile(r"`([^`]+)`|'([^'\s]{1,40})'|\"([^\"\s]{1,40})\"")
_TOKEN = re.compile(r"[\w.:/@+-]+")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|^[A-Z]{2,}$|\.[a-z]{1,4}$")
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[a-z]+")
ALIKE_RATIO = 0.6  # two identifiers sharing this much of their letters are versions of one fact


def same_text_key(title: str, body: str) -> str:
    """A memory's text reduced to what two writes of the same words share (NFKC; case, punctuation, spacing folded)."""

    def fold(text: str) -> str:
        return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()

    return fold(title) + "\n" + fold(body)


def facts(text: str) -> set[str]:
    """The identifiers a text states: quoted or backticked code, and tokens that read as names, numbers or flags."""
    found = {next(group for group in match.groups() if group).lower().strip() for match in _QUOTED.finditer(text)}
    for token in _TOKEN.findall(text):
        core = token.strip(".:,;-/")
        if not core:
            continue
        coded = any(c.isdigit() for c in core) or "_" in core or "/" in core or token.startswith("-")
        if coded or _INNER_CAPITAL.search(core):
            found.add(core.lower())
    return found


def _shape(identifier: str) -> str:
    return _LETTERS.sub("a", _DIGITS.sub("0", identifier))


def _alike(one: str, other: str) -> bool:
    return _shape(one) == _shape(other) or difflib.SequenceMatcher(None, one, other).ratio() >= ALIKE_RATIO


def differing_facts(one: str, other: str) -> bool:
    """Whether each text states a fact the other lacks where the other states a look-alike one (5432 vs 5433)."""
    mine, theirs = facts(one), facts(other)
    only_mine, only_theirs = mine - theirs, theirs - mine
    return any(_alike(a, b) for a in only_mine for b in only_theirs)
