"""Does a memory still match the code it cites? The rules, free of the database (docs/freshness.md).

A memory's files are its citations. When it is written or confirmed, each gets a fingerprint: the file's git blob
id (computed here, the same as `git hash-object` for a file git does not filter; outside git it is simply a content
hash) and the names the memory mentions that the file then held (functions, classes, scripts). A `command` memory
also cites the program it runs. Later the citation is judged against the file as it is now:

- unchanged: the same blob;
- renamed: gone from its path, found at another (git's rename detection, or the same content elsewhere);
- changed: another blob, every named symbol still there (how many lines changed is reported);
- possibly stale: the file is gone, or a symbol the memory names is no longer in it, or the script or program a
  command runs is gone.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# Names worth checking: code-like words. A word the memory puts in backticks, a name followed by "(", and words
# that only code uses (snake_case, camelCase, CamelCase with an inner capital, dotted.names' last part).
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{2,})\(")
_CODE_WORD = re.compile(r"\b([a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)\b")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_GLOB = re.compile(r"[*?\[]")
MAX_SYMBOLS = 20


class State:
    """What a check found."""

    FRESH = "fresh"  # unchanged, renamed, or changed with every named symbol still there
    STALE = "stale"  # possibly stale: cited code or program gone, or a named symbol vanished


@dataclass(frozen=True, slots=True)
class Judgement:
    """One citation's outcome: the state, a one-line reason, and the new path when the file was renamed."""

    state: str
    reason: str
    renamed_to: str | None = None
    changed_lines: int | None = None


def blob_id(data: bytes) -> str:
    """Git's blob id of these bytes (what `git hash-object` prints for a file git stores as is)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def is_citable(path: str) -> bool:
    """Whether a memory's file entry names one file (not a glob) that a check can look at."""
    return bool(path.strip()) and not _GLOB.search(path) and "\n" not in path


def named_symbols(title: str, body: str) -> list[str]:
    """The code-like names a memory mentions, in order, at most MAX_SYMBOLS."""
    text = f"{title}\n{body}"
    found: list[str] = []
    for span in _BACKTICKED.findall(text):
        found += _IDENTIFIER.findall(span)
    found += _CALLED.findall(text) + _CODE_WORD.findall(text)
    return list(dict.fromkeys(found))[:MAX_SYMBOLS]


def symbols_held(symbols: list[str], content: bytes) -> list[str]:
    """Those of `symbols` the content holds as whole words."""
    text = content.decode("utf-8", errors="replace")
    return [name for name in symbols if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text)]


def command_program(title: str, body: str) -> str | None:
    """The program or script a `command` memory runs: the first word of its first backticked span (else of its
    body's first line), after environment assignments and `sudo`."""
    spans = _BACKTICKED.findall(body) or _BACKTICKED.findall(title) or [body.strip().splitlines()[0] if body else ""]
    for word in spans[0].split():
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", word) or word in ("sudo", "env", "$"):
            continue
        return word.strip("'\"") or None
    return None


def is_script_path(program: str) -> bool:
    """Whether a program names a file of the project (`./deploy.sh`, `scripts/release`), not one found on PATH."""
    return "/" in program or program.endswith((".sh", ".py", ".js", ".ts", ".rb", ".pl"))


def judge_file(
    path: str,
    fingerprint_blob: str | None,
    symbols: list[str],
    current: bytes | None,
    renamed_to: str | None,
    renamed_content: bytes | None,
    changed_lines: int | None,
    deleted_on: str | None,
) -> Judgement:
    """One cited file now: `current` is its content (None: gone), `renamed_to` where git says it went."""
    if current is None and renamed_to is not None:
        gone = [name for name in symbols if name not in symbols_held(symbols, renamed_content or b"")]
        if gone:
            return Judgement(State.STALE, _vanished(gone, renamed_to), renamed_to)
        return Judgement(State.FRESH, f"{path} was renamed to {renamed_to}", renamed_to)
    if current is None and fingerprint_blob is None:  # not there when the memory was saved either: nothing moved
        return Judgement(State.FRESH, f"{path} was not there when the memory was saved")
    if current is None:
        when = f" on {deleted_on}" if deleted_on else ""
        return Judgement(State.STALE, f"the file it cites, {path}, was deleted{when}")
    if fingerprint_blob is None or blob_id(current) == fingerprint_blob:
        return Judgement(State.FRESH, f"{path} is unchanged")
    gone = [name for name in symbols if name not in symbols_held(symbols, current)]
    if gone:
        return Judgement(State.STALE, _vanished(gone, path), changed_lines=changed_lines)
    how_much = f" ({changed_lines} lines changed)" if changed_lines is not None else ""
    return Judgement(
        State.FRESH, f"{path} changed{how_much}; the names it mentions are still there", None, changed_lines
    )


def _vanished(names: list[str], path: str) -> str:
    shown = ", ".join(f"`{name}`" for name in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{shown} no longer in {path}"


def judge_program(program: str, found_then: bool, found_now: bool, is_script: bool) -> Judgement:
    """A command's program: stale only when it was there when the memory was saved and is gone now."""
    if found_now or not found_then:
        return Judgement(State.FRESH, f"{program} is there" if found_now else f"{program} was never found here")
    where = "in the project" if is_script else "on PATH"
    return Judgement(
        State.STALE, f"the command's {'script' if is_script else 'program'} {program} is no longer {where}"
    )
