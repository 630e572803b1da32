"""Random strings that a regular expression matches: the secrets of a scanner's rules, made from its own patterns.

Works on Python's parsed form of a pattern (`re._parser`): literals, sets, categories, alternations, groups and
repeats; anchors and look-arounds are skipped (the caller checks the result with the pattern itself).
"""

from __future__ import annotations

import random
import re
import string
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

_PRINTABLE = string.ascii_letters + string.digits + "_-./+="
_CATEGORIES = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_NOT_DIGIT: string.ascii_letters + "_-",
    C.CATEGORY_SPACE: " ",
    C.CATEGORY_NOT_SPACE: _PRINTABLE,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_NOT_WORD: "-.:/ ",
}
_MAX_EXTRA = 6  # an open-ended repeat ({8,} or +) adds up to this many beyond its minimum


def _set_chars(items: list[tuple[Any, Any]]) -> str:
    negate = False
    chars: list[str] = []
    for op, arg in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.append(chr(arg))
        elif op is C.RANGE:
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1) if c < 127)
        elif op is C.CATEGORY:
            chars.extend(_CATEGORIES.get(arg, ""))
    if negate:
        return "".join(c for c in _PRINTABLE if c not in chars)
    return "".join(c for c in chars if c.isprintable() or c in "\t\n") or "a"


def _emit(parsed: Any, rng: random.Random, groups: dict[int, str], out: list[str]) -> None:
    for op, arg in parsed:
        if op is C.LITERAL:
            out.append(chr(arg))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in _PRINTABLE if ord(c) != arg]))
        elif op is C.ANY:
            out.append(rng.choice(_PRINTABLE))
        elif op is C.IN:
            out.append(rng.choice(_set_chars(arg)))
        elif op is C.CATEGORY:
            out.append(rng.choice(_CATEGORIES.get(arg, "a")))
        elif op is C.BRANCH:
            _emit(rng.choice(arg[1]), rng, groups, out)
        elif op is C.SUBPATTERN:
            group, _add, _del, sub = arg
            start = len(out)
            _emit(sub, rng, groups, out)
            if group is not None:
                groups[group] = "".join(out[start:])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, sub = arg
            high = low + _MAX_EXTRA if high == C.MAXREPEAT else min(high, low + 40)
            for _ in range(rng.randint(low, high) if low != high else low):
                _emit(sub, rng, groups, out)
        elif op is C.GROUPREF:
            out.append(groups.get(arg, ""))
        elif op is C.ATOMIC_GROUP:
            _emit(arg, rng, groups, out)
        elif op is C.GROUPREF_EXISTS:
            _emit(arg[1], rng, groups, out)
        # AT (anchors), ASSERT and ASSERT_NOT (look-arounds) emit nothing


def sample(pattern: str, rng: random.Random, tries: int = 50) -> str | None:
    """A string `pattern` finds a match in (None after `tries` failed attempts)."""
    compiled = re.compile(pattern, re.ASCII)
    parsed = P.parse(pattern, re.ASCII)
    for _ in range(tries):
        out: list[str] = []
        _emit(parsed, rng, {}, out)
        text = "".join(out)
        if compiled.search(text):
            return text
    return None
