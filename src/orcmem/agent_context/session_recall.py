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
from orcmem.models.constants import CHARS_PER_TOKEN, CONTEXT_BUDGET_TOKENS_DEFAULT
from orcmem.store.recall import RecallRow

SESSIONS_DIRNAME = "sessions"  # in the profile: one small file per agent session, the memories it was given
RECALL_LOG_NAME = "recall.log"  # in the profile's logs: one line per prompt (which path, what was shown and cut)
RECALL_LOG_MAX_BYTES = 1 << 20  # then it is moved to recall.log.1 (one older file is kept)
SESSION_FILE_MAX_AGE_S = 7 * 86_400  # files of sessions untouched this long are removed at a session's start
# Two memories whose words (title and body, lower-cased) overlap this much read as one: the better ranked is shown.
NEAR_IDENTICAL_SHARE = 0.9
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Beside the memory ids in a session's file (which never start with "#"): the characters the session may be given
# in all (its context budget, set when it started) and those it was given so far, the brief included.
BUDGET_KEY = "#budget"
SPENT_KEY = "#spent"
DEFAULT_BUDGET_CHARS = CONTEXT_BUDGET_TOKENS_DEFAULT * CHARS_PER_TOKEN
_WORD = re.compile(r"\w+")

# What one prompt's recall gives: the fenced text, counts of what it left out and why, and the characters the
# session was given so far with this one (`spent`, None without a session) out of its budget (`budget`).
Selection = namedtuple("Selection", "text shown repeated collapsed cut spent budget", defaults=(None, None))  # noqa: PYI024


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


def select(rows: Sequence[RecallRow], given: dict[str, int], now: int, room: int | None = None) -> Selection:
    """The rows (best first) this prompt gets: not given before unchanged, one of each near-identical group, within
    recall's limits and the `room` left in the session's context budget (characters); with counts of those left
    out for each reason (`cut` counts those the limits or the budget left out)."""
    fresh = [row for row in rows if given.get(row.id) != row.updated_at]
    kept: list[RecallRow] = []
    kept_words: list[frozenset[str]] = []
    for row in fresh:
        words = _words(row)
        if any(_near_identical(words, other) for other in kept_words):
            continue
        kept.append(row)
        kept_words.append(words)
    text, shown = frame_recall(kept, now, room)
    return Selection(text, kept[:shown], len(rows) - len(fresh), len(fresh) - len(kept), len(kept) - shown)


def session_budget(given: dict[str, int], default_chars: int | None = None) -> int:
    """The characters a session may be given in all: set when it started, else `default_chars`, else the default."""
    budget = given.get(BUDGET_KEY)
    if budget is not None and budget >= 0:
        return budget
    return DEFAULT_BUDGET_CHARS if default_chars is None else default_chars


def choose_for_session(
    home: str, session_id: str | None, rows: Sequence[RecallRow], now: int, budget_chars: int | None = None
) -> tuple[Selection, Callable[[], None]]:
    """Select what this prompt gets within what is left of the session's context budget (`budget_chars` when its
    start set none); the function returned records it as given (call it once it was delivered)."""
    path = session_file(home, session_id)
    given = _given(path)
    budget = session_budget(given, budget_chars)
    spent = given.get(SPENT_KEY, 0)
    selection = select(rows, given, now, budget - spent if path is not None else None)
    if path is not None:
        selection = selection._replace(spent=spent + len(selection.text), budget=budget)

    def remember() -> None:
        if path is not None and selection.shown:
            given.update({row.id: row.updated_at for row in selection.shown})
            given[SPENT_KEY] = spent + len(selection.text)
            given.setdefault(BUDGET_KEY, budget)
            _save(path, given)

    return selection, remember


def recall_for_session(home: str, session_id: str | None, rows: Sequence[RecallRow], now: int) -> Selection:
    """Select what this prompt gets, and remember what was shown for the session's later prompts."""
    selection, remember = choose_for_session(home, session_id, rows, now)
    remember()
    return selection


def start_session(home: str, session_id: str | None, budget_chars: int, brief_chars: int) -> None:
    """A session starts: its context budget (characters) and what its brief took of it, before any recall."""
    path = session_file(home, session_id)
    if path is not None:
        _save(path, {BUDGET_KEY: max(0, budget_chars), SPENT_KEY: max(0, brief_chars)})


def given_so_far(home: str, session_id: str | None) -> tuple[int, int] | None:
    """(characters given, budget) of a session, or None when orcmem holds nothing of it."""
    path = session_file(home, session_id)
    if path is None or not os.path.exists(path):
        return None
    given = _given(path)
    return given.get(SPENT_KEY, 0), session_budget(given)


def recalled_in_sessions(home: str) -> list[tuple[str, int]]:
    """(memory id, when in ms) for every memory a session still on file was given: the time is its file's last
    change, when it was last given something. The store audit keeps these before a session's file goes."""
    folder = os.path.join(home, SESSIONS_DIRNAME)
    found: list[tuple[str, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        if not entry.name.startswith("recall-") or not entry.name.endswith(".json"):
            continue
        try:
            at = int(entry.stat().st_mtime * 1000)
        except OSError:
            continue
        found.extend((key, at) for key in _given(entry.path) if key.startswith("mem_"))  # not the budget keys
    return found


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
        if selection.spent is not None:  # what the session was given so far, in estimated tokens, of its budget
            counts += f" tokens={selection.spent // CHARS_PER_TOKEN}/{selection.budget // CHARS_PER_TOKEN}"
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
