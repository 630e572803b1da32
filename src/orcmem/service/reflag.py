"""Instruction flags made by an older detector, computed again a slice at a time: an opener does a small budget of
it, the long-lived processes (the MCP server, the worker) the rest in the background. Until then each memory keeps
the flag the previous detector gave it (docs/security.md)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from orcmem.host.background import BackgroundLoop
from orcmem.models.constants import (
    REFLAG_PAUSE_S,
    REFLAG_READ_ROWS,
    REFLAG_SLICE_S,
    SETTING_FLAG_CURSOR,
    SETTING_FLAG_VERSION,
)
from orcmem.store.facade import Store
from orcmem.text.instructions import FLAG_VERSION, looks_like_instructions


@dataclass(frozen=True)
class Cursor:
    """How far the re-flag by detector `version` got: every memory with `pk <= last` is done, up to `end`, the newest
    memory when it began (later ones were flagged by this detector when written)."""

    version: int
    last: int
    end: int

    def text(self) -> str:
        """The setting's value."""
        return f"{self.version}:{self.last}:{self.end}"


def parse_cursor(text: str | None) -> Cursor | None:
    """The cursor a setting holds; None when unset or unreadable (the re-flag then starts again from the first)."""
    parts = (text or "").split(":")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return Cursor(int(parts[0]), int(parts[1]), int(parts[2]))


@dataclass(frozen=True)
class Slice:
    """What one slice did: memories checked, flags changed, and whether the re-flag is now done."""

    checked: int
    changed: int
    done: bool


class Reflag:
    """The re-flag of one store: resumable from its cursor, each slice written with its cursor in one transaction."""

    def __init__(self, store: Store, *, timer: Callable[[], float] = time.monotonic) -> None:
        """Re-flag `store`; `timer` gives seconds (tests pass one that counts memories instead)."""
        self.store = store
        self.timer = timer

    def stale(self) -> bool:
        """Whether the stored flags were made by another detector than this one."""
        return self.store.settings.get(SETTING_FLAG_VERSION) != str(FLAG_VERSION)

    def cursor(self) -> Cursor | None:
        """Where this detector's re-flag stands; None before it began (a cursor of another detector is void)."""
        cursor = parse_cursor(self.store.settings.get(SETTING_FLAG_CURSOR))
        return cursor if cursor is not None and cursor.version == FLAG_VERSION else None

    def step(self, budget_s: float) -> Slice:
        """Check memories in pk order from the cursor for about `budget_s` seconds (none at 0, at least one above),
        then write the changed flags and the new cursor in one transaction: an error before it loses no earlier
        slice, and the version is set only when every memory is done."""
        if budget_s <= 0 or not self.stale():
            return Slice(0, 0, not self.stale())
        deadline = self.timer() + budget_s
        cursor = self.cursor() or Cursor(FLAG_VERSION, 0, self.store.memories.last_pk())
        rows = self.store.memories.texts_and_flags(cursor.last, cursor.end, REFLAG_READ_ROWS)
        changed: list[tuple[int, str, bool]] = []
        last, checked = cursor.last, 0
        for pk, text, flagged in rows:
            flag = looks_like_instructions(text)
            if flag != flagged:
                changed.append((pk, text, flag))
            last, checked = pk, checked + 1
            if self.timer() >= deadline:
                break
        # Done when nothing was left up to `end`, or when this slice read the last of it.
        done = last >= cursor.end or (checked == len(rows) and len(rows) < REFLAG_READ_ROWS)
        with self.store.db.transaction():
            self.store.memories.set_flags_unshared(changed)
            if not self.stale():
                return Slice(checked, len(changed), True)  # another process finished meanwhile
            ahead = self.cursor()  # another process may have gone further meanwhile: never move back
            if done or (ahead is not None and ahead.last >= cursor.end):
                self.store.settings.set(SETTING_FLAG_VERSION, str(FLAG_VERSION))
                self.store.settings.delete(SETTING_FLAG_CURSOR)
                return Slice(checked, len(changed), True)
            further = max(last, ahead.last if ahead is not None else 0)
            self.store.settings.set(SETTING_FLAG_CURSOR, Cursor(FLAG_VERSION, further, cursor.end).text())
        return Slice(checked, len(changed), False)

    def finish(self, *, pause_s: float = 0.0, stopping: threading.Event | None = None) -> int:
        """Re-flag until done, in slices of REFLAG_SLICE_S with `pause_s` between them (ended early by `stopping`);
        how many flags changed."""
        changed = 0
        while True:
            done = self.step(REFLAG_SLICE_S)
            changed += done.changed
            if done.done or (stopping is not None and stopping.wait(pause_s)):
                return changed
            if stopping is None and pause_s > 0:
                time.sleep(pause_s)

    def in_background(self, who: str) -> ReflagLoop:
        """Finish the re-flag in a started background thread (`who` names the process in an error line)."""
        loop = ReflagLoop(self, who)
        loop.start()
        return loop


class ReflagLoop(BackgroundLoop):
    """A long-lived process's thread that finishes a store's re-flag in slices that yield (REFLAG_PAUSE_S between
    them: the write lock is held only while a slice is written), then ends."""

    name = "orcmem-reflag"

    def __init__(self, reflag: Reflag, who: str) -> None:
        """Prepare (not start) the re-flag of `reflag`'s store; `who` names the process in an error line."""
        super().__init__()
        self.reflag = reflag
        self.who = who
        self.done = threading.Event()  # set when the thread ends, finished or not

    def run(self) -> None:
        """Re-flag until done or closed; an error is one line on stderr (the next opener takes it up again)."""
        try:
            self.reflag.finish(pause_s=REFLAG_PAUSE_S, stopping=self.stopping)
        except Exception as exc:  # the process keeps serving; the flags stay the previous detector's meanwhile
            print(f"{self.who}: re-flag failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            self.done.set()
