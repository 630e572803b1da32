"""The store audit's decisions (docs/audit.md): the kinds of finding, the one command that fixes each, which memory
of a pair to keep, and when a memory says nothing specific enough to be worth recalling.

The generic rule is measured in bench/audit.py (docs/benchmarks.md, The store audit): planted empty and generic
memories against realistic ones.
"""

from __future__ import annotations

import re
from enum import StrEnum

from orcmem.text.facts import facts


class Kind(StrEnum):
    """What the audit found, in the order it reports them (the most harmful first)."""

    SECRET = "secret"
    DUPLICATE = "duplicate"
    NEAR_DUPLICATE = "near_duplicate"
    CONTRADICTION = "contradiction"
    WRONG = "wrong"
    STALE = "stale"
    GENERIC = "generic"
    UNUSED = "unused"


LABELS = {  # how the health line and the groups name each kind: (one, many)
    Kind.SECRET: ("secret", "secrets"),
    Kind.DUPLICATE: ("duplicate", "duplicates"),
    Kind.NEAR_DUPLICATE: ("near duplicate", "near duplicates"),
    Kind.CONTRADICTION: ("possible contradiction", "possible contradictions"),
    Kind.WRONG: ("marked wrong", "marked wrong"),
    Kind.STALE: ("stale", "stale"),
    Kind.GENERIC: ("empty or generic", "empty or generic"),
    Kind.UNUSED: ("unused", "unused"),
}

# The one command that fixes each kind: {a} is the memory the finding is about, {b} the other one of a pair.
FIXES = {
    Kind.SECRET: "orcmem audit fix redact {a}",
    Kind.DUPLICATE: "orcmem audit fix merge {b} {a}",
    Kind.NEAR_DUPLICATE: "orcmem audit fix merge {b} {a}",
    Kind.CONTRADICTION: "orcmem feedback {a} wrong",
    Kind.WRONG: "orcmem forget {a}",
    Kind.STALE: "orcmem feedback {a} wrong",
    Kind.GENERIC: "orcmem forget {a}",
    Kind.UNUSED: "orcmem forget {a}",
}

GENERIC_MIN_CHARS = 25  # title and body together, spaces aside: below this a memory says nothing
GENERIC_MIN_SPECIFIC_WORDS = 3  # without an identifier, a memory needs this many words beyond the stock ones
_WORD = re.compile(r"[a-z][a-z'-]{2,}")
# Words any advice holds whatever the project: a memory made only of them (and no identifier) teaches nothing.
_STOCK = frozenset(
    """
    the and for with that this from into when then than also just very more most some any all each every other
    always never make sure keep use using used run running remember note important careful carefully good better
    best practice practices code codes test tests testing tested change changes changed work works working thing
    things stuff properly correctly clean cleanly write writing written should must need needs before after ensure
    check checks checking everything something anything fix fixes fixed bug bugs issue issues problem problems
    project projects file files task tasks step steps way ways done do does did doing it's don't can will would
    could might may try tried again first last time times well really thoroughly quality readable simple simply
    you your yours we our us they them user users ask asked review reviewed commit commits often small big pass
    passes finish finished made make progress today yesterday unclear clear helpful useful great nice okay fine
    """.split()
)


def is_generic(title: str, body: str) -> bool:
    """Whether a memory is empty or generic: too short to hold a lesson, or no identifier (a name, a number, a
    path, a flag) and fewer than GENERIC_MIN_SPECIFIC_WORDS words beyond stock advice."""
    text = f"{title}\n{body}"
    if len("".join(text.split())) < GENERIC_MIN_CHARS:
        return True
    specific: set[str] = set()
    for match in _WORD.finditer(text.lower()):  # stops at the third specific word: most memories reach it soon
        if match.group() not in _STOCK:
            specific.add(match.group())
            if len(specific) >= GENERIC_MIN_SPECIFIC_WORDS:
                return False
    return not facts(text)  # identifiers looked for only then


def keeper(one: tuple[str, int, int], other: tuple[str, int, int]) -> int:
    """Which of two repeating memories a merge keeps (0 or 1), each given as (source, evidence order, pk): the
    person's own words first, then the older one (it holds the history)."""
    mine, theirs = one[0] == "user", other[0] == "user"
    if mine != theirs:
        return 0 if mine else 1
    return 0 if one[2] <= other[2] else 1
