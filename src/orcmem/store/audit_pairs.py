"""The store audit's close pairs, kept between audits (migration 17; docs/audit.md, Speed): which memories the last
audit compared (each with its id, its vector's write order and its source), every close pair it found with the pair
rules' verdict once judged, and the few vectors around a changed memory, found by sqlite-vec's own k-NN."""

from __future__ import annotations

from dataclasses import dataclass

from orcmem.store.connection import Repository

MAX_K = 4_096  # sqlite-vec's largest k


@dataclass(slots=True)
class ClosePair:
    """Two memories close in meaning (`low_pk` < `high_pk`) and the pair rules' verdict: `kind` None until judged,
    '' for neither a near duplicate nor a contradiction; `about_pk` the memory a finding is about."""

    low_pk: int
    high_pk: int
    similarity: float
    kind: str | None = None
    about_pk: int | None = None

    @property
    def key(self) -> tuple[int, int]:
        """The two memories."""
        return self.low_pk, self.high_pk


Compared = dict[int, tuple[str, int, str]]  # memory pk -> (memory id, its vector's seq, its source)


@dataclass(frozen=True, slots=True)
class PairChanges:
    """What one audit changes in the kept pairs: all of them (`replace`), or those touching what changed."""

    key: str
    compared: Compared  # the memories compared now that were not compared as they are (all of them on `replace`)
    gone: list[int]  # memories compared last time and not now
    dropped: list[tuple[int, int]]  # pairs that touch a changed or gone memory
    added: list[ClosePair]
    judged: list[ClosePair]  # pairs the pair rules judged in this audit
    shown: list[tuple[int, int]]  # the pairs this audit reports
    replace: bool = False


class AuditPairRepository(Repository):
    """The kept close pairs of each project (`audit_pair_rules`, `audit_compared`, `audit_close_pairs`)."""

    def rules_key(self, project_id: str) -> str | None:
        """The pair rules and model the project's kept pairs follow from, or None when none are kept."""
        row = self.db.query_one("SELECT key FROM audit_pair_rules WHERE project_id = ?", (project_id,))
        return None if row is None else str(row[0])

    def compared(self, project_id: str) -> Compared:
        """The memories the last audit compared, as they were."""
        return {
            int(pk): (str(memory_id), int(seq), str(source))
            for pk, memory_id, seq, source in self.db.query(
                "SELECT memory_pk, memory_id, seq, source FROM audit_compared WHERE project_id = ?", (project_id,)
            )
        }

    def pairs(self, project_id: str, *, shown: bool = False) -> list[ClosePair]:
        """Every kept close pair of the project, or (`shown`) those the last audit reported."""
        where = " AND shown = 1" if shown else ""
        return [
            ClosePair(int(r[0]), int(r[1]), float(r[2]), r[3], None if r[4] is None else int(r[4]))
            for r in self.db.query(
                "SELECT low_pk, high_pk, similarity, kind, about_pk FROM audit_close_pairs "
                f"WHERE project_id = ?{where}",
                (project_id,),
            )
        ]

    def nearest(self, memory_pk: int, k: int) -> tuple[bytes | None, list[tuple[int, bytes]]]:
        """A memory's stored vector and the `k` stored vectors nearest it (sqlite-vec's k-NN over every stored
        vector, of any project or model: the caller keeps those it compares), each with its memory's pk."""
        own = self.db.query_one("SELECT embedding FROM memory_vec WHERE memory_pk = ?", (memory_pk,))
        if own is None:
            return None, []
        rows = self.db.query(
            "SELECT memory_pk, embedding FROM memory_vec WHERE embedding MATCH ? AND k = ?",
            (own[0], min(k, MAX_K)),
        )
        return bytes(own[0]), [(int(pk), bytes(blob)) for pk, blob in rows if int(pk) != memory_pk]

    def save(self, project_id: str, changes: PairChanges) -> None:
        """Keep what one audit found (`changes`) in place of what it changed."""
        with self.db.transaction():
            if changes.replace:
                self.db.query("DELETE FROM audit_compared WHERE project_id = ?", (project_id,))
                self.db.query("DELETE FROM audit_close_pairs WHERE project_id = ?", (project_id,))
            self.db.query(
                "INSERT INTO audit_pair_rules (project_id, key) VALUES (?, ?) "
                "ON CONFLICT (project_id) DO UPDATE SET key = excluded.key",
                (project_id, changes.key),
            )
            self.db.query_many(
                "DELETE FROM audit_compared WHERE project_id = ? AND memory_pk = ?",
                ((project_id, pk) for pk in changes.gone),
            )
            self.db.query_many(
                "INSERT OR REPLACE INTO audit_compared (project_id, memory_pk, memory_id, seq, source) "
                "VALUES (?, ?, ?, ?, ?)",
                ((project_id, pk, *stamp) for pk, stamp in changes.compared.items()),
            )
            self.db.query_many(
                "DELETE FROM audit_close_pairs WHERE project_id = ? AND low_pk = ? AND high_pk = ?",
                ((project_id, *key) for key in changes.dropped),
            )
            self.db.query_many(
                "INSERT OR REPLACE INTO audit_close_pairs (project_id, low_pk, high_pk, similarity, kind, about_pk) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                ((project_id, p.low_pk, p.high_pk, p.similarity, p.kind, p.about_pk) for p in changes.added),
            )
            self.db.query_many(
                "UPDATE audit_close_pairs SET kind = ?, about_pk = ? WHERE project_id = ? AND low_pk = ? "
                "AND high_pk = ?",
                ((p.kind, p.about_pk, project_id, *p.key) for p in changes.judged),
            )
            self.db.query("UPDATE audit_close_pairs SET shown = 0 WHERE project_id = ? AND shown = 1", (project_id,))
            self.db.query_many(
                "UPDATE audit_close_pairs SET shown = 1 WHERE project_id = ? AND low_pk = ? AND high_pk = ?",
                ((project_id, *key) for key in changes.shown),
            )

    def forget(self, project_id: str) -> None:
        """Keep no pairs for the project: the next audit searches them all again."""
        with self.db.transaction():
            for table in ("audit_pair_rules", "audit_compared", "audit_close_pairs"):
                self.db.query(f"DELETE FROM {table} WHERE project_id = ?", (project_id,))
