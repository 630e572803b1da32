"""The facts a text states: the identifiers in it (numbers and versions, flags, paths, file names, code in quotes or
backticks, names with digits, underscores or inner capitals). The pair rules (`text/duplicates.py`) compare them; the
store audit keeps each memory's facts between audits under this module's version (`version`), so new pair-rule code
does not work every memory's facts out again (docs/audit.md, Speed)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

_QUOTED = re.compile(r"`([^`]+)`|'([^'\s]{1,40})'|\"([^\"\s]{1,40})\"")
_TOKEN = re.compile(r"[\w.:/@+-]+")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|^[A-Z]{2,}$|\.[a-z]{1,4}$")
_CODED = re.compile(r"[\d_/]")  # a digit, an underscore or a slash: a token that reads as code
_SEPARATOR = "\x00"  # between the facts a kept row packs: no fact holds one (`pack` keeps none that does)

Facts = frozenset[str]


def facts(text: str) -> set[str]:
    """The identifiers a text states: quoted or backticked code, and tokens that read as names, numbers or flags."""
    return set(cached_facts(text))


@lru_cache(maxsize=8192)  # a write compares its text with a few others (the store audit keeps its own)
def cached_facts(text: str) -> Facts:
    """`facts_of`, cached for the texts a write compares."""
    return facts_of(text)


def facts_of(text: str) -> Facts:
    """`facts`, uncached and frozen: for a caller that keeps each text's facts itself."""
    found = {next(group for group in match.groups() if group).lower().strip() for match in _QUOTED.finditer(text)}
    for token in _TOKEN.findall(text):
        if token.isalpha() and (token.islower() or token.istitle()):
            continue  # a plain word (most tokens): no digit, underscore, slash or inner capital; no regex needed
        core = token.strip(".:,;-/")
        if not core:
            continue
        coded = _CODED.search(core) is not None or token.startswith("-")
        if coded or _INNER_CAPITAL.search(core):
            found.add(core.lower())
    return frozenset(found)


def pack(found: Facts) -> str | None:
    """Facts as one string for the store (None when a fact holds the separator: such a text is worked out again)."""
    if any(_SEPARATOR in fact for fact in found):
        return None
    return _SEPARATOR.join(sorted(found))


def unpack(packed: str) -> Facts:
    """Facts packed by `pack`."""
    return frozenset(packed.split(_SEPARATOR)) if packed else frozenset()


@lru_cache(maxsize=1)
def version() -> int:
    """The version of the facts rule: a signed 64-bit digest of this file (a change to it works them out again)."""
    digest = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)
