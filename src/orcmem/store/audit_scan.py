"""What the store audit reads in one pass (every memory of a project with its text, digest, freshness and last
recall; the stored vectors as one matrix) and the recall times it keeps: every SQL statement the audit needs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orcmem.store.connection import Repository
from orcmem.store.visibility import VISIBLE

if TYPE_CHECKING:
    import numpy as np


_RESCANNED = "ON CONFLICT (memory_pk) DO UPDATE SET rules = excluded.rules"
# A memory whose text is still the one read: what was worked out of that text may be kept for it.
SAME_TEXT = "WHERE pk = ? AND title = ? AND body = ?"
_WRITTEN = "WHERE id = ? AND title = ? AND body = ?"

Texts = dict[int, tuple[str, str]]  # memory pk -> (title, body) as read


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One memory as the audit judges it."""

    pk: int
    id: str
    type: str
    title: str
    body: str
    status: str
    source: str
    digest: int | None
    created_at: int
    last_confirmed_at: int
    stale_reason: str | None  # the freshness check's reason when it judged the memory possibly stale
    last_recalled_at: int | None
    scanned: bool  # found clean by today's redaction rules, and its text unchanged since
    generic: bool | None  # the generic rule's verdict kept for today's traits version (None: not kept)
    facts: str | None  # its facts as kept for today's traits version, packed (`text/facts.pack`; None: not kept)


class AuditScanRepository(Repository):
    """Reads for the store audit, and the recall times (`memory_recalls`)."""

    def rows(self, project_id: str, rules: int, traits: int) -> list[AuditRow]:
        """Every memory the project sees that a person judges (active, stale or retracted: not those waiting for
        review), oldest first; `rules` is today's redaction rules version (`scanned`), `traits` today's version of
        what the audit works out of a memory's text alone (`generic`, `facts`)."""
        found = self.db.query(
            "SELECT m.pk, m.id, m.type, m.title, m.body, m.status, m.source, m.text_digest, m.created_at, "
            "m.last_confirmed_at, CASE WHEN f.state = 'stale' THEN f.reason END, r.last_at, s.rules IS :rules, "
            "t.generic, t.facts "
            "FROM memories m LEFT JOIN freshness f ON f.memory_pk = m.pk "
            "LEFT JOIN memory_recalls r ON r.memory_pk = m.pk "
            "LEFT JOIN memory_scans s ON s.memory_pk = m.pk "
            "LEFT JOIN memory_traits t ON t.memory_pk = m.pk AND t.version = :traits "
            f"WHERE {VISIBLE} AND m.status != 'pending' ORDER BY m.pk",
            {"project": project_id, "rules": rules, "traits": traits},
        )
        return [
            AuditRow(
                int(r[0]),
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                None if r[7] is None else int(r[7]),
                int(r[8]),
                int(r[9]),
                r[10],
                None if r[11] is None else int(r[11]),
                bool(r[12]),
                None if r[13] is None else bool(r[13]),
                r[14],
            )
            for r in found
        ]

    def unprepared(self, rules: int, traits: int, limit: int, below: int) -> list[tuple[int, str, str, bool]]:
        """Up to `limit` memories of any project below the pk `below`, newest first, not waiting for review, that
        today's redaction rules have not found clean or whose traits of version `traits` are not all kept: (pk,
        title, body, found clean)."""
        return [
            (int(pk), title, body, bool(scanned))
            for pk, title, body, scanned in self.db.query(
                "SELECT m.pk, m.title, m.body, s.rules IS :rules FROM memories m "
                "LEFT JOIN memory_scans s ON s.memory_pk = m.pk "
                "LEFT JOIN memory_traits t ON t.memory_pk = m.pk AND t.version = :traits "
                "WHERE m.pk < :below AND m.status != 'pending' AND (s.rules IS NOT :rules OR t.facts IS NULL) "
                "ORDER BY m.pk DESC LIMIT :limit",
                {"rules": rules, "traits": traits, "limit": limit, "below": below},
            )
        ]

    def note_traits(
        self, traits: Iterable[tuple[int, bool, str | None]], version: int, texts: Texts | None = None
    ) -> None:
        """Keep, for each (pk, generic, packed facts or None), what the audit worked out of that memory's text
        under the traits version `version` (new text forgets it: migration 19's trigger). With `texts` (pk ->
        title, body as read), only while the memory's text is still that, checked here: an edit in between (any
        process) fired the trigger before these were kept. Without, kept unchecked: only for traits not worked out
        of a text read before this call (a test's planted ones)."""
        with self.db.transaction():
            if texts is None:
                self.db.query_many(
                    "INSERT OR REPLACE INTO memory_traits (memory_pk, version, generic, facts) VALUES (?, ?, ?, ?)",
                    ((pk, version, int(generic), facts) for pk, generic, facts in traits),
                )
                return
            self.db.query_many(
                "INSERT OR REPLACE INTO memory_traits (memory_pk, version, generic, facts) "
                f"SELECT pk, ?, ?, ? FROM memories {SAME_TEXT}",
                ((version, int(generic), facts, pk, *texts[pk]) for pk, generic, facts in traits),
            )

    def note_scanned(self, pks: Iterable[int], rules: int, texts: Texts | None = None) -> None:
        """Keep that these memories were found clean by the redaction rules of version `rules` (an edit of a
        memory's title or body forgets it: migration 15's trigger); with `texts`, as `note_traits` says."""
        with self.db.transaction():
            if texts is None:
                self.db.query_many(
                    f"INSERT INTO memory_scans (memory_pk, rules) VALUES (?, ?) {_RESCANNED}",
                    ((pk, rules) for pk in pks),
                )
                return
            self.db.query_many(
                f"INSERT INTO memory_scans (memory_pk, rules) SELECT pk, ? FROM memories {SAME_TEXT} {_RESCANNED}",
                ((rules, pk, *texts[pk]) for pk in pks),
            )

    def note_written(
        self, memory_id: str, text: tuple[str, str], rules: int | None, traits: tuple[int, bool, str | None]
    ) -> None:
        """Keep what was worked out of a memory's text as it was written (`text`: its title and body as stored):
        found clean by the redaction rules of version `rules` (None: not asked), and its traits (version, generic,
        packed facts); only while its stored text is that one (nothing is kept for another)."""
        version, generic, facts = traits
        with self.db.transaction():
            if rules is not None:
                self.db.query(
                    f"INSERT INTO memory_scans (memory_pk, rules) SELECT pk, ? FROM memories {_WRITTEN} {_RESCANNED}",
                    (rules, memory_id, *text),
                )
            self.db.query(
                "INSERT OR REPLACE INTO memory_traits (memory_pk, version, generic, facts) "
                f"SELECT pk, ?, ?, ? FROM memories {_WRITTEN}",
                (version, int(generic), facts, memory_id, *text),
            )

    def vectors(self, pks: list[int], model: str) -> tuple[np.ndarray, np.ndarray]:
        """The stored vectors of `model` for these memories: (their pks, ascending, a unit-row float32 matrix); empty
        without sqlite-vec (`store/vector_chunks.py`)."""
        from orcmem.store.vector_chunks import vectors_of  # numpy: loaded by an audit, never by a hook's store

        return vectors_of(self.db, pks, model)

    def vector_stamps(self, model: str) -> dict[int, int]:
        """Each memory's stored vector of `model` by its write order (`seq`): which vectors an audit would compare,
        without reading them."""
        return {
            int(pk): int(seq)
            for pk, seq in self.db.query("SELECT memory_pk, seq FROM memory_embeddings WHERE model = ?", (model,))
        }

    def note_recalled(self, recalled: Iterable[tuple[str, int]]) -> None:
        """Keep, for each (memory id, time), the latest time recall gave that memory; ids since deleted are passed
        over."""
        with self.db.transaction():
            for memory_id, at in recalled:
                self.db.query(
                    "INSERT INTO memory_recalls (memory_pk, last_at) SELECT pk, ? FROM memories WHERE id = ? "
                    "ON CONFLICT (memory_pk) DO UPDATE SET last_at = MAX(last_at, excluded.last_at)",
                    (at, memory_id),
                )
