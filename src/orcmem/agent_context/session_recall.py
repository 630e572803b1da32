"""Recall within one agent session: a memory given before an earlier prompt is not given again unless it changed,
near-identical memories are shown once, and each prompt's recall is logged with what it left out.

Both ways recall runs use it: the prompt hook's word path and the warm server's. Kept light (no dataclasses, no
typing, no hashlib unless an id needs it) because the prompt hook imports it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections import namedtuple
from collections.abc import Callable, Sequence

from orcmem.agent_context.recall import frame_recall
from orcmem.store.recall import RecallRow

SESSIONS_DIRNAME = "sessions"  # in the profile: one small file per agent session, the memories it was given
RECALL_LOG_NAME = "recall.log"  # in the profile's logs: one line per prompt (which path, what was shown and cut)
RECALL_LOG_MAX_BYTES = 1 << 20  # then it is moved to recall.log.1 (one older file is kept)
SESSION_FILE_MAX_AGE_S = 7 * 86_400  # files of sessions untouched this long are removed at a session's start
# Two memories whose words (title and body, lower-cased) overlap this much read as one: the better ranked is shown.
NEAR_IDENTICAL_SHARE = 0.9
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_WORD = re.compile(r"\w+")

# What one prompt's recall gives: the fenced text, and counts of what it left out and why.
Selection = namedtuple("Selection", "text shown repeated collapsed cut")  # noqa: PYI024


def session_name(session_id: str) -> str:
    """The session id as a file name and a log word: as it is when plain, else a hash of it."""
    if _SAFE_ID.fullmatch(session_id):
        return session_id
    import hashlib

    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:32]


def session_file(home: str, session_id: str | None) -> str | None:
    """The file holding what this session was given; None without a session id (nothing is remembered)."""
    if not session_id:
        return None
    return os.path.join(home, SESSIONS_DIRNAME, f"recall-{session_name(session_id)}.json")


def _given(path: str | None) -> dict[str, int]:
    """{memory id: its updated_at when given}; empty when the file is missing or unreadable."""
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items() if isinstance(key, str) and isinstance(value, int)}


def _save(path: str, given: dict[str, int]) -> None:
    """Write the file atomically, readable by this user only; a failure only means a memory may be given twice."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        partial = f"{path}.{os.getpid()}.tmp"
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(given, handle, separators=(",", ":"))
        os.replace(partial, path)
    except OSError:
        pass


def _words(row: RecallRow) -> frozenset[str]:
    return frozenset(_WORD.findall(f"{row.title} {row.body}".lower()))


def _near_identical(a: frozenset[str], b: frozenset[str]) -> bool:
    union = len(a | b)
    return union > 0 and len(a & b) / union >= NEAR_IDENTICAL_SHARE


def select(rows: Sequence[RecallRow], given: dict[str, int], now: int) -> Selection:
    """The rows (best first) this prompt gets: not given before unchanged, one of each near-identical group, within
    recall's limits; with counts of those left out for each reason."""
    fresh = [row for row in rows if given.get(row.id) != row.updated_at]
    kept: list[RecallRow] = []
    kept_words: list[frozenset[str]] = []
    for row in fresh:
        words = _words(row)
        if any(_near_identical(words, other) for other in kept_words):
            continue
        kept.append(row)
        kept_words.append(words)
    text, shown = frame_recall(kept, now)
    return Selection(text, kept[:shown], len(rows) - len(fresh), len(fresh) - len(kept), len(kept) - shown)


def choose_for_session(
    home: str, session_id: str | None, rows: Sequence[RecallRow], now: int
) -> tuple[Selection, Callable[[], None]]:
    """Select what this prompt gets; the function returned records it as given (call it once it was delivered)."""
    path = session_file(home, session_id)
    given = _given(path)
    selection = select(rows, given, now)

    def remember() -> None:
        if path is not None and selection.shown:
            given.update({row.id: row.updated_at for row in selection.shown})
            _save(path, given)

    return selection, remember


def recall_for_session(home: str, session_id: str | None, rows: Sequence[RecallRow], now: int) -> Selection:
    """Select what this prompt gets, and remember what was shown for the session's later prompts."""
    selection, remember = choose_for_session(home, session_id, rows, now)
    remember()
    return selection


def forget_session(home: str, session_id: str | None) -> None:
    """The session ended: drop what it was given."""
    path = session_file(home, session_id)
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def prune_sessions(home: str, now_s: float | None = None) -> int:
    """Remove the files of sessions untouched for SESSION_FILE_MAX_AGE_S (one that never ended); how many."""
    folder = os.path.join(home, SESSIONS_DIRNAME)
    cutoff = (time.time() if now_s is None else now_s) - SESSION_FILE_MAX_AGE_S
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if entry.name.startswith("recall-") and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def log_recall(home: str, path: str, ms: float, session_id: str | None, selection: Selection | None) -> None:
    """One line in logs/recall.log: which path answered, how long it took, what was shown and left out."""
    if selection is None:
        counts = "memory off"
    else:
        counts = (
            f"shown={len(selection.shown)} repeated={selection.repeated} "
            f"collapsed={selection.collapsed} cut={selection.cut}"
        )
    session = session_name(session_id) if session_id else "-"
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {path} {ms:.1f}ms session={session} {counts}\n"
    try:
        logs = os.path.join(home, "logs")
        os.makedirs(logs, mode=0o700, exist_ok=True)
        target = os.path.join(logs, RECALL_LOG_NAME)
        try:
            if os.stat(target).st_size > RECALL_LOG_MAX_BYTES:
                os.replace(target, target + ".1")
        except FileNotFoundError:
            pass
        descriptor = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(descriptor, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line)
    except OSError:
        pass
