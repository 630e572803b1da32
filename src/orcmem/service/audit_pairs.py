"""The store audit's pair findings (near duplicates, possible contradictions) over the stored vectors, searched
again only around what changed since the last audit (docs/audit.md, Speed).

Every close pair the search gives is kept with the pair rules' verdict once judged. The next audit compares the
memories it would compare with those the last one did: a memory new, re-embedded (its vector's write order) or with
another source is changed; the pairs touching a changed or gone memory are dropped; the changed memories and the
partners of those dropped pairs get their closest partners again (sqlite-vec's k-NN for a few, one matrix product
against the stored vectors for more); only the new pairs are judged; and the findings are chosen again from the
kept verdicts, closest first, each memory in one. Beyond a share of changes the whole search runs again.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem.models.constants import AUDIT_CONTRADICTION_MIN_SIMILARITY, DUPLICATE_MIN_SIMILARITY
from orcmem.models.errors import StoreError
from orcmem.retrieve import close_pairs as close_pairs_module
from orcmem.retrieve.close_pairs import PER_VECTOR, close_pairs, closest
from orcmem.rules import audit as rules_audit
from orcmem.rules.audit import Kind, keeper
from orcmem.service import duplicates as service_duplicates
from orcmem.service.duplicates import memory_text
from orcmem.store.audit_pairs import MAX_K, ClosePair, Compared, PairChanges
from orcmem.text import duplicates as text_duplicates
from orcmem.text.duplicates import Facts, differing_facts, facts_of, other_value

if TYPE_CHECKING:
    from orcmem.store.audit_scan import AuditRow
    from orcmem.store.facade import Store

FULL_SHARE = 0.05  # beyond this share of the compared memories to look up again, the whole search runs again
KNN_UP_TO = 12  # up to this many lookups, each through sqlite-vec's k-NN; more: one product over the stored vectors
AROUND = PER_VECTOR * 4  # the nearest memories looked at around a changed one


class PairSearch:
    """The close pairs among a project's compared memories, kept between audits in the store."""

    def __init__(self, store: Store) -> None:
        """Over `store`'s vectors and kept pairs."""
        self.store = store
        self.full_share = FULL_SHARE
        self.knn_up_to = KNN_UP_TO
        self.searched = ""  # how the last audit found its pairs: kept, around (what changed), everything

    def findings(self, project_id: str, model: str, by_pk: dict[int, AuditRow]) -> tuple[int, list[PairFinding]]:
        """(memories compared by meaning, the pair findings closest first) among `by_pk`: those with a stored vector
        of `model`."""
        kept = self.store.audit_pairs
        seqs = self.store.audit_scan.vector_stamps(model)
        now = {pk: (row.id, seqs[pk], row.source) for pk, row in by_pk.items() if pk in seqs}
        key = _rules_key(model)
        before = kept.compared(project_id) if kept.rules_key(project_id) == key else None
        if before == now:  # nothing changed since the last audit: what it reported stands
            self.searched = "kept"
            return len(now), _reported(kept.pairs(project_id, shown=True))
        changes = None if before is None else self._around_changes(project_id, model, before, now)
        self.searched = "everything" if changes is None else "around"
        if changes is None:
            pairs = self._everything(now, model)
            changes = _Changes(pairs, list(pairs.values()), [], replace=True)
        found, judged = _choose(changes.pairs, by_pk)
        gone = [] if before is None else [pk for pk in before if pk not in now]
        fresh = now if changes.replace or before is None else {pk: s for pk, s in now.items() if before.get(pk) != s}
        saved = PairChanges(
            key, fresh, gone, changes.dropped, changes.added, judged, [p.key for p in found], changes.replace
        )
        # A read-only or busy store: the audit still reports, and the next one compares again.
        with contextlib.suppress(StoreError):
            kept.save(project_id, saved)
        return len(now), _reported(found)

    def _everything(self, now: Compared, model: str) -> dict[tuple[int, int], ClosePair]:
        """The close pairs among all compared memories (`close_pairs`)."""
        pks, matrix = self.store.audit_scan.vectors(list(now), model)
        keys = pks.tolist()
        pairs = {}
        for i, j, similarity in close_pairs(matrix, DUPLICATE_MIN_SIMILARITY):
            low, high = sorted((keys[i], keys[j]))
            pairs[(low, high)] = ClosePair(low, high, similarity)
        return pairs

    def _around_changes(self, project_id: str, model: str, before: Compared, now: Compared) -> _Changes | None:
        """The kept pairs with those touching a changed or gone memory searched again; None when too much changed
        for that to be cheaper than the whole search."""
        touched = {pk for pk, stamp in now.items() if before.get(pk) != stamp} | {pk for pk in before if pk not in now}
        pairs: dict[tuple[int, int], ClosePair] = {}
        dropped: list[tuple[int, int]] = []
        partners: set[int] = set()
        for pair in self.store.audit_pairs.pairs(project_id):
            if pair.low_pk in touched or pair.high_pk in touched:
                dropped.append(pair.key)
                partners.update(pk for pk in pair.key if pk not in touched and pk in now)
            else:
                pairs[pair.key] = pair
        lookups = sorted(pk for pk in touched if pk in now) + sorted(partners)
        if len(lookups) > self.full_share * len(now):
            return None
        added = _join(pairs, self._nearest(lookups, now, model))
        return _Changes(pairs, added, dropped)

    def _nearest(self, lookups: list[int], now: Compared, model: str) -> dict[int, list[tuple[int, float]]]:
        """Each memory's AROUND nearest compared memories at least DUPLICATE_MIN_SIMILARITY close, closest first."""
        import numpy as np

        if len(lookups) > self.knn_up_to:
            pks, matrix = self.store.audit_scan.vectors(list(now), model)
            row_of = {pk: n for n, pk in enumerate(pks.tolist())}
            asked = [pk for pk in lookups if pk in row_of]
            selves = np.array([row_of[pk] for pk in asked], dtype=np.int64)
            rows = closest(matrix[selves], matrix, selves, DUPLICATE_MIN_SIMILARITY, AROUND)
            return {pk: [(int(pks[n]), s) for n, s in hits] for pk, hits in zip(asked, rows, strict=True)}
        found = {}
        for pk in lookups:
            own, hits = self._knn(pk, now)
            if own is None:
                continue
            others = np.frombuffer(b"".join(blob for _pk, blob in hits), dtype="<f4").reshape(len(hits), -1)
            mine = np.frombuffer(own, dtype="<f4").reshape(1, -1)
            (near,) = closest(mine, others, np.array([-1]), DUPLICATE_MIN_SIMILARITY, AROUND)
            found[pk] = [(hits[n][0], s) for n, s in near]
        return found

    def _knn(self, pk: int, now: Compared) -> tuple[bytes | None, list[tuple[int, bytes]]]:
        """A memory's vector and its nearest compared memories' (AROUND of them, or all those close enough), asking
        sqlite-vec for more while other projects' or models' vectors crowd the answer."""
        k = AROUND + 1
        while True:
            own, hits = self.store.audit_pairs.nearest(pk, k)
            ours = [(other, blob) for other, blob in hits if other in now]
            if own is None or len(ours) >= AROUND or len(hits) < k - 1 or k >= MAX_K:
                return own, ours
            last = _cosine(own, hits[-1][1])
            if last < DUPLICATE_MIN_SIMILARITY:
                return own, ours
            k *= 4


class _Changes:
    """The pairs an audit chooses from, and what changed in them since the last audit."""

    def __init__(
        self,
        pairs: dict[tuple[int, int], ClosePair],
        added: list[ClosePair],
        dropped: list[tuple[int, int]],
        *,
        replace: bool = False,
    ) -> None:
        """`pairs`: all of them now; `added`, `dropped`: since the last audit; `replace`: searched anew."""
        self.pairs, self.added, self.dropped, self.replace = pairs, added, dropped, replace


def _cosine(one: bytes, other: bytes) -> float:
    import numpy as np

    return float(np.dot(np.frombuffer(one, dtype="<f4"), np.frombuffer(other, dtype="<f4")))


def _join(pairs: dict[tuple[int, int], ClosePair], nearest: dict[int, list[tuple[int, float]]]) -> list[ClosePair]:
    """Add to `pairs` what a full search would give around the looked-up memories: each one's PER_VECTOR closest,
    and a further close one when the looked-up memory would be among that one's PER_VECTOR closest. The new pairs."""
    added: list[ClosePair] = []

    def add(pk: int, other: int, similarity: float) -> None:
        low, high = min(pk, other), max(pk, other)
        if (low, high) not in pairs:
            pairs[(low, high)] = pair = ClosePair(low, high, similarity)
            added.append(pair)

    for pk, hits in nearest.items():
        for other, similarity in hits[:PER_VECTOR]:
            add(pk, other, similarity)
    further = {other for hits in nearest.values() for other, _s in hits[PER_VECTOR:]}
    closer: dict[int, list[float]] = defaultdict(list)  # the similarities of each further one's pairs
    for pair in pairs.values():
        for pk in pair.key:
            if pk in further:
                closer[pk].append(pair.similarity)
    for pk, hits in nearest.items():
        for other, similarity in hits[PER_VECTOR:]:
            if sum(s > similarity for s in closer[other]) < PER_VECTOR:
                add(pk, other, similarity)
    return added


def _choose(
    pairs: dict[tuple[int, int], ClosePair], by_pk: dict[int, AuditRow]
) -> tuple[list[ClosePair], list[ClosePair]]:
    """The pairs reported, closest first, each memory in one pair finding (fixing it changes the rest), judging a
    pair only when neither memory is already reported; and the pairs judged now."""
    found: list[ClosePair] = []
    judged: list[ClosePair] = []
    reported: set[int] = set()
    said = _Said()
    for pair in sorted(pairs.values(), key=lambda p: (-p.similarity, p.low_pk, p.high_pk)):
        if pair.low_pk in reported or pair.high_pk in reported:
            continue
        if pair.kind is None:
            pair.kind, pair.about_pk = _verdict(by_pk[pair.low_pk], by_pk[pair.high_pk], pair.similarity, said)
            judged.append(pair)
        if pair.kind:
            found.append(pair)
            reported.update(pair.key)
    return found, judged


def rank(row: AuditRow) -> tuple[str, int, int]:
    """A memory's rank for `rules.audit.keeper`: which of two a merge keeps."""
    return (row.source, 0, row.pk)


def _verdict(one: AuditRow, other: AuditRow, similarity: float, said: _Said) -> tuple[str, int | None]:
    """The pair rules on two close memories: (kind, the memory a finding is about), kind '' for neither."""
    (text_one, facts_one), (text_other, facts_other) = said(one), said(other)
    known = (facts_one, facts_other)
    if not differing_facts(text_one, text_other, known):
        drop = other if keeper(rank(one), rank(other)) == 0 else one
        return str(Kind.NEAR_DUPLICATE), drop.pk
    if similarity >= AUDIT_CONTRADICTION_MIN_SIMILARITY and other_value(text_one, text_other, known):
        return str(Kind.CONTRADICTION), min(one.pk, other.pk)
    return "", None


@dataclass(frozen=True, slots=True)
class PairFinding:
    """A pair finding as reported: its kind, the memory it is about and the other one, how close."""

    kind: str
    memory_pk: int
    other_pk: int
    similarity: float


def _reported(pairs: list[ClosePair]) -> list[PairFinding]:
    """Reported pairs as findings, closest first."""
    ordered = sorted(pairs, key=lambda p: (-p.similarity, p.low_pk, p.high_pk))
    return [
        PairFinding(str(p.kind), int(p.about_pk or 0), p.high_pk if p.about_pk == p.low_pk else p.low_pk, p.similarity)
        for p in ordered
    ]


@lru_cache(maxsize=1)
def _pair_rules() -> bytes:
    """A digest of the code and thresholds the close pairs and their verdicts follow from: a change to any makes the
    next audit search again."""
    digest = hashlib.blake2b(digest_size=16)
    for module in (close_pairs_module, text_duplicates, service_duplicates, rules_audit):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    digest.update(f"{DUPLICATE_MIN_SIMILARITY} {AUDIT_CONTRADICTION_MIN_SIMILARITY}".encode())
    return digest.digest()


def _rules_key(model: str) -> str:
    """The key of a project's kept pairs: the pair rules and the model."""
    return hashlib.blake2b(_pair_rules() + model.encode(), digest_size=16).hexdigest()


class _Said:
    """Each memory's text and the facts it states, worked out once however many pairs the memory is in."""

    def __init__(self) -> None:
        """Nothing worked out yet."""
        self.known: dict[int, tuple[str, Facts]] = {}

    def __call__(self, row: AuditRow) -> tuple[str, Facts]:
        """The memory's text (as a write compares it) and its facts."""
        if row.pk not in self.known:
            text = memory_text(row.title, row.body)
            self.known[row.pk] = (text, facts_of(text))
        return self.known[row.pk]
