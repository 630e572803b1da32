"""A maintained scanner's rule set, consumed as data: Betterleaks' default rules (MIT, see LICENSE.betterleaks).

`betterleaks.json` holds, for each rule, its id, its regular expression as Betterleaks publishes it (Go RE2
syntax) and translated for Python's `re`, its keywords (the scanner's prefilter: a rule runs only on text holding
one of them) and the entropy floor of its filter; plus the scanner's global filter of placeholder values.
`scripts/secret_rules.py` rebuilds it from `betterleaks config show toml`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SOURCE = "betterleaks.json"


@dataclass(frozen=True, slots=True)
class ScannerRule:
    """One rule of the scanner: the secret is its first capture group that matched, else the whole match."""

    id: str
    regex: str  # as the scanner publishes it (Go RE2)
    python: str  # the same, for Python's re
    keywords: tuple[str, ...]
    group: int | None  # the capture group that holds the secret, when not the first
    min_entropy: float | None  # the scanner drops a match whose secret has no more entropy than this
    inclusive: bool  # the floor itself is kept (the filter said `< N`, not `<= N`)


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules, the scanner's name and version, and its global filter of values that are never secrets."""

    scanner: str
    version: str
    rules: tuple[ScannerRule, ...]
    never_secret: tuple[str, ...]


@lru_cache(maxsize=1)
def load() -> RuleSet:
    """The shipped rule set (read once)."""
    raw = json.loads((Path(__file__).parent / SOURCE).read_text(encoding="utf-8"))
    rules = tuple(
        ScannerRule(
            r["id"],
            r["regex"],
            r["python"],
            tuple(r["keywords"]),
            r.get("group"),
            r.get("min_entropy"),
            r.get("inclusive", False),
        )
        for r in raw["rules"]
    )
    return RuleSet(raw["scanner"], raw["version"], rules, tuple(raw["never_secret"]))


class TranslationError(ValueError):
    """A Go regular expression this translator cannot carry over to Python."""


_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")


def go_to_python(pattern: str) -> str:
    """Translate a Go RE2 pattern to Python's `re`: scoped mid-pattern flags, `\\z`, POSIX classes, `[` in sets."""
    out: list[str] = []
    closers: list[int] = [0]  # per open group: how many scoped flag groups to close with it
    i = 0
    in_class = False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i : i + 2]
            if escape in ("\\Q", "\\C") or escape.startswith("\\p") or escape.startswith("\\P"):
                raise TranslationError(f"unsupported escape {escape!r} in {pattern!r}")
            out.append("\\Z" if escape == "\\z" else escape)
            i += 2
            continue
        if in_class:
            posix = re.match(r"\[:(\^?)(\w+):\]", pattern[i:])
            if posix:
                if posix.group(1) or posix.group(2) not in _POSIX:
                    raise TranslationError(f"unsupported class {posix.group(0)!r} in {pattern!r}")
                out.append(_POSIX[posix.group(2)])
                i += posix.end()
                continue
            if char == "]":
                in_class = False
            elif char == "[" or (char in "&~|-" and pattern[i + 1 : i + 2] == char):
                out.append("\\")  # Python warns on (and may one day read) "[", "&&", "--" inside a set as set operators
            out.append(char)
            i += 1
            continue
        if char == "[":
            in_class = True
            out.append(char)
            i += 1
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            if pattern[i : i + 1] == "]":  # a "]" first in a set is a literal
                out.append("\\]")
                i += 1
            continue
        flags = _FLAGS.match(pattern, i)
        if flags:
            if "U" in flags.group(1):
                raise TranslationError(f"unsupported flag U in {pattern!r}")
            if i == 0 and "-" not in flags.group(1):
                out.append(flags.group(0))  # global flags at the start: Python reads them the same
            else:
                out.append(f"(?{flags.group(1)}:")  # Go: to the end of the enclosing group; Python: scoped
                closers[-1] += 1
            i = flags.end()
            continue
        if char == "(":
            closers.append(0)
        elif char == ")":
            out.append(")" * closers.pop())
            if not closers:
                raise TranslationError(f"unbalanced ) in {pattern!r}")
        out.append(char)
        i += 1
    out.append(")" * closers.pop())
    if closers or in_class:
        raise TranslationError(f"unbalanced group or set in {pattern!r}")
    return "".join(out)
