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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from orcmem.host.forking import ForkPool, Spread
from orcmem.models.constants import AUDIT_CONTRADICTION_MIN_SIMILARITY, DUPLICATE_MIN_SIMILARITY
from orcmem.models.errors import StoreError
from orcmem.retrieve import close_pairs as close_pairs_module
from orcmem.retrieve.close_pairs import PER_VECTOR, close_pair_arrays, closest
from orcmem.rules import audit as rules_audit
from orcmem.rules.audit import Kind, keeper
from orcmem.service import duplicates as service_duplicates
from orcmem.service.duplicates import memory_text
from orcmem.store import vector_chunks
from orcmem.store.audit_pairs import MAX_K, Compared
from orcmem.text import duplicates as text_duplicates
from orcmem.text import facts as text_facts
from orcmem.text.duplicates import differing_facts, other_value
from orcmem.text.facts import Facts, facts_of, unpack

if TYPE_CHECKING:
    from orcmem.store.audit_scan import AuditRow
    from orcmem.store.facade import Store

FULL_SHARE = 0.02  # beyond this share of the compared memories to look up again, the whole search runs again (at
# 100,000: 2.9 ms a lookup in one product, against 3.6 s for the whole search plus the verdicts of its many pairs)
KNN_UP_TO = 12  # up to this many lookups, each through sqlite-vec's k-NN; more: one product over the stored vectors
AROUND = PER_VECTOR * 4  # the nearest memories looked at around a changed one
KINDS = ("", Kind.NEAR_DUPLICATE, Kind.CONTRADICTION)  # a kept verdict's code: its place here
NEITHER = 0
_FOUND = {n: Kind(kind) for n, kind in enumerate(KINDS) if kind}  # a reported verdict's kind (Kind() costs µs each)
UNJUDGED = -1
# One kept close pair (`store/audit_pairs`): the two memories (low < high), how close, the verdict (a code of KINDS,
# UNJUDGED until the pair rules judged it), which of the two a finding is about (0: low, 1: high), whether reported.
PAIR_FIELDS = np.dtype(
    [("low", "<i8"), ("high", "<i8"), ("similarity", "<f4"), ("kind", "i1"), ("about", "i1"), ("shown", "?")]
)


def no_pairs(count: int = 0) -> np.ndarray:
    """An array of `count` close pairs, unjudged and not reported."""
    pairs = np.zeros(count, dtype=PAIR_FIELDS)
    pairs["kind"] = UNJUDGED
    return pairs


def _none() -> Mapping[int, str | None]:
    """No facts worked out by the audit: each memory's worked out here when not kept."""
    return {}


class PairSearch:
    """The close pairs among a project's compared memories, kept between audits in the store."""

    def __init__(self, store: Store) -> None:
        """Over `store`'s vectors and kept pairs."""
        self.store = store
        self.full_share = FULL_SHARE
        self.knn_up_to = KNN_UP_TO
        self.seed = 7  # the full search's draw of centroids (`close_pairs`)
        self.searched = ""  # how the last audit found its pairs: kept, around (what changed), everything

    def findings(
        self,
        project_id: str,
        model: str,
        by_pk: dict[int, AuditRow],
        facts: Callable[[], Mapping[int, str | None]] = _none,
        spread: Spread | None = None,
    ) -> tuple[int, list[PairFinding]]:
        """(memories compared by meaning, the pair findings closest first) among `by_pk`: those with a stored vector
        of `model` (`facts`: the facts the audit worked out of memories whose facts were not kept, packed, by pk;
        asked for once the search is done; `spread`: how a full search and many verdicts spread over the cores)."""
        spread = spread or Spread(1, "")
        kept = self.store.audit_pairs
        seqs = self.store.audit_scan.vector_stamps(model)
        now = {pk: (row.id, seqs[pk], row.source) for pk, row in by_pk.items() if pk in seqs}
        key = _rules_key(model)
        stored, before = kept.pairs(project_id), kept.compared(project_id)
        pairs = None
        if stored is not None and _search_of(stored[0]) == _search_of(key):
            pairs = np.frombuffer(stored[1], dtype=PAIR_FIELDS).copy()  # a copy: the audit judges and marks them
            if stored[0] != key:  # only the verdicts' rules changed: the pairs stand, every one is judged again
                pairs["kind"], pairs["shown"] = UNJUDGED, False
        if pairs is not None and stored is not None and stored[0] == key and before == now:
            # nothing changed since the last audit: what it reported stands
            self.searched = "kept"
            return len(now), _reported(pairs[pairs["shown"]])
        around = None if pairs is None else self._around_changes(pairs, model, before, now)
        self.searched = "everything" if around is None else "around"
        pairs = self._everything(now, model, spread) if around is None else around
        said = _Said(facts())
        _judge(pairs, by_pk, said, spread)
        _choose(pairs, by_pk, said)
        changed = {pk: stamp for pk, stamp in now.items() if before.get(pk) != stamp}
        # A read-only or busy store: the audit still reports, and the next one searches again.
        with contextlib.suppress(StoreError):
            texts = {pk: (by_pk[pk].title, by_pk[pk].body) for pk in changed}
            kept.save(project_id, key, pairs.tobytes(), changed, texts, [pk for pk in before if pk not in now])
        return len(now), _reported(pairs[pairs["shown"]])

    def _everything(self, now: Compared, model: str, spread: Spread) -> np.ndarray:
        """The close pairs among all compared memories (`close_pairs`)."""
        keys, matrix = self.store.audit_scan.vectors(list(now), model)
        firsts, seconds, values = close_pair_arrays(matrix, DUPLICATE_MIN_SIMILARITY, self.seed, spread)
        pairs = no_pairs(len(values))
        pairs["low"] = np.minimum(keys[firsts], keys[seconds])
        pairs["high"] = np.maximum(keys[firsts], keys[seconds])
        pairs["similarity"] = values
        return pairs

    def _around_changes(self, pairs: np.ndarray, model: str, before: Compared, now: Compared) -> np.ndarray | None:
        """The kept pairs with those touching a changed or gone memory searched again; None when too much changed
        for that to be cheaper than the whole search."""
        touched = {pk for pk, stamp in now.items() if before.get(pk) != stamp} | {pk for pk in before if pk not in now}
        marks = np.fromiter(touched, dtype=np.int64, count=len(touched))
        low_touched, high_touched = np.isin(pairs["low"], marks), np.isin(pairs["high"], marks)
        dropped = pairs[low_touched | high_touched]
        ends = np.concatenate([dropped["low"], dropped["high"]]).tolist()
        partners = {pk for pk in ends if pk not in touched and pk in now}
        lookups = sorted(pk for pk in touched if pk in now) + sorted(partners)
        if len(lookups) > self.full_share * len(now):
            return None
        return _join(pairs[~(low_touched | high_touched)], self._nearest(lookups, now, model))

    def _nearest(self, lookups: list[int], now: Compared, model: str) -> dict[int, list[tuple[int, float]]]:
        """Each memory's AROUND nearest compared memories at least DUPLICATE_MIN_SIMILARITY close, closest first."""
        if len(lookups) > self.knn_up_to:
            pks, matrix = self.store.audit_scan.vectors(list(now), model)
            row_of = {pk: n for n, pk in enumerate(pks.tolist())}
            asked = [pk for pk in lookups if pk in row_of]
            selves = np.array([row_of[pk] for pk in asked], dtype=np.int64)
            rows = closest(matrix[selves], matrix, selves, DUPLICATE_MIN_SIMILARITY, AROUND)
            return {pk: [(int(pks[n]), s) for n, s in hits] for pk, hits in zip(asked, rows, strict=True)}
        found: dict[int, list[tuple[int, float]]] = {}
        for pk in lookups:
            own, hits = self._knn(pk, now)
            if own is None or not hits:
                found[pk] = []
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


def _cosine(one: bytes, other: bytes) -> float:
    return float(np.dot(np.frombuffer(one, dtype="<f4"), np.frombuffer(other, dtype="<f4")))


def _join(pairs: np.ndarray, nearest: dict[int, list[tuple[int, float]]]) -> np.ndarray:
    """`pairs` with what a full search would add around the looked-up memories: each one's PER_VECTOR closest, and a
    further close one when the looked-up memory would be among that one's PER_VECTOR closest."""
    asked = np.fromiter(nearest, dtype=np.int64, count=len(nearest))
    near = np.isin(pairs["low"], asked) | np.isin(pairs["high"], asked)
    known = set(zip(pairs["low"][near].tolist(), pairs["high"][near].tolist(), strict=True))
    added: dict[tuple[int, int], float] = {}
    for pk, hits in nearest.items():
        for other, similarity in hits[:PER_VECTOR]:
            added.setdefault((min(pk, other), max(pk, other)), similarity)
    further = {other for hits in nearest.values() for other, _s in hits[PER_VECTOR:]}
    closer: dict[int, list[float]] = defaultdict(list)  # the similarities of each further one's pairs
    marks = np.fromiter(further, dtype=np.int64, count=len(further))
    for end in ("low", "high"):
        rows = np.isin(pairs[end], marks)
        for pk, similarity in zip(pairs[end][rows].tolist(), pairs["similarity"][rows].tolist(), strict=True):
            closer[pk].append(similarity)
    for (low, high), similarity in added.items():
        for pk in (low, high):
            if pk in further:
                closer[pk].append(similarity)
    for pk, hits in nearest.items():
        for other, similarity in hits[PER_VECTOR:]:
            if sum(s > similarity for s in closer[other]) < PER_VECTOR:
                added.setdefault((min(pk, other), max(pk, other)), similarity)
    new = [(key, similarity) for key, similarity in added.items() if key not in known]
    more = no_pairs(len(new))
    if new:
        more["low"] = [low for (low, _high), _s in new]
        more["high"] = [high for (_low, high), _s in new]
        more["similarity"] = [similarity for _key, similarity in new]
    return np.concatenate([pairs, more])


def _judge(pairs: np.ndarray, by_pk: dict[int, AuditRow], said: _Said, spread: Spread) -> None:
    """Judge ahead, over the pool's workers when there are enough to pay for it, the unjudged pairs `_choose` is sure
    to judge: those neither of whose memories is in a closer pair (no finding can have taken either yet). About
    half of those it judges at 100,000; it judges the rest itself, as it reaches them (a verdict depends on the pair
    alone, so the findings are the same)."""
    order = np.lexsort((pairs["high"], pairs["low"], -pairs["similarity"]))
    order = order[pairs["kind"][order] != NEITHER]  # as `_choose` walks them
    ends = np.column_stack([pairs["low"][order], pairs["high"][order]]).reshape(-1)  # in the walk's order
    _values, firsts = np.unique(ends, return_index=True)  # each memory's first place in the walk
    first_place = np.zeros(len(ends), dtype=bool)
    first_place[firsts] = True
    sure = order[first_place[0::2] & first_place[1::2] & (pairs["kind"][order] == UNJUDGED)]
    if not spread.pays(len(sure)):
        return
    with ForkPool(_Judging(pairs[sure], by_pk, said.packed), spread) as pool:
        parts = pool.map(_verdicts, spread.ranges(len(sure)))
    pairs["kind"][sure] = np.concatenate([kinds for kinds, _abouts in parts])
    pairs["about"][sure] = np.concatenate([abouts for _kinds, abouts in parts])


@dataclass(frozen=True, slots=True)
class _Judging:
    """What the workers judging pairs share: the pairs, the memories by pk, the facts the audit worked out."""

    pairs: np.ndarray
    by_pk: dict[int, AuditRow]
    packed: Mapping[int, str | None]


def _verdicts(judging: _Judging, bounds: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The verdicts (kind codes, which end each finding is about) of one slice of the shared pairs."""
    said = _Said(judging.packed)
    part = judging.pairs[bounds[0] : bounds[1]]
    rows = zip(*(part[field].tolist() for field in ("low", "high", "similarity")), strict=True)
    verdicts = [_verdict(judging.by_pk[low], judging.by_pk[high], similarity, said) for low, high, similarity in rows]
    kinds = np.array([kind for kind, _about in verdicts], dtype=np.int8)
    return kinds, np.array([about for _kind, about in verdicts], dtype=np.int8)


def _choose(pairs: np.ndarray, by_pk: dict[int, AuditRow], said: _Said) -> None:
    """Mark in `pairs` those reported, closest first, each memory in one pair finding (fixing it changes the rest),
    judging a pair only when neither memory is already reported (its verdict kept in `pairs`; `said`: each
    memory's facts)."""
    order = np.lexsort((pairs["high"], pairs["low"], -pairs["similarity"]))
    order = order[pairs["kind"][order] != NEITHER]  # a pair judged neither is never reported
    reported: set[int] = set()
    judged: list[tuple[int, int, int]] = []
    shown: list[int] = []
    columns = (pairs[field][order].tolist() for field in ("low", "high", "similarity", "kind"))
    for n, low, high, similarity, kind in zip(order.tolist(), *columns, strict=True):
        if low in reported or high in reported:
            continue
        if kind == UNJUDGED:
            kind, about = _verdict(by_pk[low], by_pk[high], similarity, said)
            judged.append((n, kind, about))
        if kind != NEITHER:
            shown.append(n)
            reported.update((low, high))
    if judged:
        rows, kinds, abouts = (list(column) for column in zip(*judged, strict=True))
        pairs["kind"][rows], pairs["about"][rows] = kinds, abouts
    pairs["shown"] = False
    pairs["shown"][shown] = True


def _rank(row: AuditRow) -> tuple[str, int, int]:
    """A memory's rank for `rules.audit.keeper`: which of two a merge keeps."""
    return (row.source, 0, row.pk)


def _verdict(low: AuditRow, high: AuditRow, similarity: float, said: _Said) -> tuple[int, int]:
    """The pair rules on two close memories: (the kind's code, which of the two a finding is about: 0 low, 1 high)."""
    (text_low, facts_low), (text_high, facts_high) = said(low), said(high)
    known = (facts_low, facts_high)
    if not differing_facts(text_low, text_high, known):
        return KINDS.index(Kind.NEAR_DUPLICATE), 1 if keeper(_rank(low), _rank(high)) == 0 else 0
    if similarity >= AUDIT_CONTRADICTION_MIN_SIMILARITY and other_value(text_low, text_high, known):
        return KINDS.index(Kind.CONTRADICTION), 0 if low.pk < high.pk else 1
    return NEITHER, 0


@dataclass(frozen=True, slots=True)
class PairFinding:
    """A pair finding as reported: its kind, the memory it is about and the other one, how close."""

    kind: Kind
    memory_pk: int
    other_pk: int
    similarity: float


def _reported(pairs: np.ndarray) -> list[PairFinding]:
    """Reported pairs as findings, closest first."""
    pairs = pairs[np.lexsort((pairs["high"], pairs["low"], -pairs["similarity"]))]
    found = []
    for low, high, similarity, kind, about in zip(
        *(pairs[field].tolist() for field in ("low", "high", "similarity", "kind", "about")), strict=True
    ):
        one, other = (high, low) if about else (low, high)
        found.append(PairFinding(_FOUND[kind], one, other, similarity))
    return found


@lru_cache(maxsize=1)
def _pair_rules() -> tuple[bytes, bytes]:
    """Digests of the code and thresholds (the close pairs' search, the verdicts) the kept pairs follow from: a
    change to the search's makes the next audit search again; to the verdicts' only, judge the kept pairs again."""
    search, verdicts = hashlib.blake2b(digest_size=16), hashlib.blake2b(digest_size=16)
    for module in (close_pairs_module, vector_chunks):  # the search, and the order it reads the vectors in
        search.update(Path(str(module.__file__)).read_bytes())
    for module in (text_duplicates, text_facts, service_duplicates, rules_audit):
        verdicts.update(Path(str(module.__file__)).read_bytes())
    for digest in (search, verdicts):  # this file holds both the search around changes and the choice of findings
        digest.update(Path(__file__).read_bytes())
    search.update(f"{DUPLICATE_MIN_SIMILARITY}".encode())
    verdicts.update(f"{AUDIT_CONTRADICTION_MIN_SIMILARITY}".encode())
    return search.digest(), verdicts.digest()


def _rules_key(model: str) -> str:
    """The key of a project's kept pairs: the search's rules and the model, then the verdicts' rules."""
    search, verdicts = _pair_rules()
    return hashlib.blake2b(search + model.encode(), digest_size=16).hexdigest() + ":" + verdicts.hex()


def _search_of(key: str) -> str:
    """The search's half of a kept pairs' key (`_rules_key`)."""
    return key.partition(":")[0]


class _Said:
    """Each memory's text and the facts it states: as kept (`AuditRow.facts`) or worked out by the audit (packed),
    else worked out here, once however many pairs the memory is in."""

    def __init__(self, packed: Mapping[int, str | None]) -> None:
        """Over the facts the audit worked out (a memory's, packed, by pk)."""
        self.packed = packed
        self.known: dict[int, tuple[str, Facts]] = {}

    def __call__(self, row: AuditRow) -> tuple[str, Facts]:
        """The memory's text (as a write compares it) and its facts."""
        if row.pk not in self.known:
            text = memory_text(row.title, row.body)
            kept = row.facts if row.facts is not None else self.packed.get(row.pk)
            found = facts_of(text) if kept is None else unpack(kept)
            self.known[row.pk] = (text, found)
        return self.known[row.pk]
