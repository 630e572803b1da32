"""The store audit's close pairs, kept between audits (migration 18; docs/audit.md, Speed): every close pair the last
audit of a project found, with the pair rules' verdict once judged, as one array (its fields:
`service/audit_pairs.PAIR_FIELDS`); which memories it compared (each with its id, its vector's write order and its
source); and the few vectors around a changed memory, found by sqlite-vec's own k-NN."""

from __future__ import annotations

from orcmem.store.audit_scan import SAME_TEXT, Texts
from orcmem.store.connection import Repository

MAX_K = 4_096  # sqlite-vec's largest k

Compared = dict[int, tuple[str, int, str]]  # memory pk -> (memory id, its vector's seq, its source)


class AuditPairRepository(Repository):
    """The kept close pairs of each project (`audit_close_pairs`) and the memories compared (`audit_compared`)."""

    def pairs(self, project_id: str) -> tuple[str, bytes] | None:
        """The project's kept close pairs (one array: `service/audit_pairs.PAIR_FIELDS`) with their key (the pair
        rules and the model they follow from), or None when none are kept."""
        row = self.db.query_one("SELECT key, pairs FROM audit_close_pairs WHERE project_id = ?", (project_id,))
        return None if row is None else (str(row[0]), bytes(row[1]))

    def compared(self, project_id: str) -> Compared:
        """The memories the last audit compared, as they were."""
        return {
            int(pk): (str(memory_id), int(seq), str(source))
            for pk, memory_id, seq, source in self.db.query(
                "SELECT memory_pk, memory_id, seq, source FROM audit_compared WHERE project_id = ?", (project_id,)
            )
        }

    def save(self, project_id: str, key: str, pairs: bytes, compared: Compared, texts: Texts, gone: list[int]) -> None:
        """Keep an audit's close pairs in place of the last, and what changed in the memories compared: `compared`,
        those now compared that were not as they are, `gone`, those no longer compared. A memory compared is kept
        only while its text is still the one the audit judged (`texts`: pk -> title, body), checked here: one
        edited meanwhile (in any process) stays changed, so the next audit judges it again."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO audit_close_pairs (project_id, key, pairs) VALUES (?, ?, ?) ON CONFLICT (project_id) "
                "DO UPDATE SET key = excluded.key, pairs = excluded.pairs",
                (project_id, key, pairs),
            )
            self.db.query_many(
                "DELETE FROM audit_compared WHERE project_id = ? AND memory_pk = ?",
                ((project_id, pk) for pk in gone),
            )
            self.db.query_many(
                "INSERT OR REPLACE INTO audit_compared (project_id, memory_pk, memory_id, seq, source) "
                f"SELECT ?, pk, ?, ?, ? FROM memories {SAME_TEXT}",
                ((project_id, *stamp, pk, *texts[pk]) for pk, stamp in compared.items()),
            )

    def forget(self, project_id: str) -> None:
        """Keep no pairs for the project: the next audit searches them all again."""
        with self.db.transaction():
            self.db.query("DELETE FROM audit_close_pairs WHERE project_id = ?", (project_id,))
            self.db.query("DELETE FROM audit_compared WHERE project_id = ?", (project_id,))

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
