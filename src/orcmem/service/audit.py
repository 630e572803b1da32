"""The store audit (`service.store_audit`, docs/audit.md): one pass over a project's memories that reports what
makes the store worse (secrets stored before a rule existed, exact and near duplicates, possible contradictions,
memories marked wrong, stale citations, empty or generic memories, memories no recall gave in N days), and the fixes
that go with them (merge, redact again; retract and forget are the memory service's own)."""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem.host.forking import Spread
from orcmem.models.constants import (
    AUDIT_UNUSED_DAYS_DEFAULT,
    BODY_MAX_CHARS,
    CONFIDENCE_STEP,
    MS_PER_DAY,
    TITLE_MAX_CHARS,
)
from orcmem.models.errors import StoreError, ValidationError
from orcmem.models.types import Memory, Project, Source, Status
from orcmem.rules import audit as audit_rules
from orcmem.rules.audit import FIXES, LABELS, Kind, keeper
from orcmem.service.audit_parallel import Pending, Traits, secret_in, traits_of, work_out
from orcmem.service.core import ServiceCore
from orcmem.service.memory_access import MemoryAccess
from orcmem.service.settings import Settings
from orcmem.store.audit_scan import AuditRow, AuditScanRepository
from orcmem.text import facts as text_facts
from orcmem.text.duplicates import same_text_key
from orcmem.text.redact import redact, redact_text, rules_version
from orcmem.text.wording import plural

if TYPE_CHECKING:
    from orcmem.service.audit_pairs import PairFinding, PairSearch

MAX_DAYS = 36_500
PREPARE_BATCH = 200  # memories a background batch prepares for the audit (about 25 ms of one core)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem with one memory (and, for a pair, the other memory), with the command that fixes it."""

    kind: Kind
    memory_id: str
    title: str
    detail: str
    fix: str
    other_id: str | None = None

    def to_dict(self) -> dict[str, object]:
        """The finding as JSON."""
        return {
            "kind": str(self.kind),
            "memory_id": self.memory_id,
            "other_id": self.other_id,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What one audit found, by kind, and how long it took."""

    memories: int
    findings: list[Finding]
    days: int
    seconds: float
    vectors: int  # memories compared by meaning (those with a stored vector of the current model)
    counts: dict[Kind, int] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        """Whether nothing was found."""
        return not self.findings

    def health_line(self) -> str:
        """`412 memories: 9 duplicates, 2 secrets` or `412 memories: healthy`."""
        head = plural(self.memories, "memory", "memories")
        if self.healthy:
            return f"{head}: healthy"
        parts = [f"{n} {LABELS[kind][0 if n == 1 else 1]}" for kind in Kind if (n := self.counts.get(kind, 0))]
        return f"{head}: " + ", ".join(parts)

    def by_kind(self) -> list[tuple[Kind, list[Finding]]]:
        """The findings grouped by kind, in the order of `Kind`."""
        groups: dict[Kind, list[Finding]] = defaultdict(list)
        for finding in self.findings:
            groups[finding.kind].append(finding)
        return [(kind, groups[kind]) for kind in Kind if groups.get(kind)]

    def to_dict(self) -> dict[str, object]:
        """The report as JSON."""
        return {
            "memories": self.memories,
            "health": self.health_line(),
            "healthy": self.healthy,
            "days": self.days,
            "counts": {str(kind): self.counts.get(kind, 0) for kind in Kind},
            "findings": [finding.to_dict() for finding in self.findings],
            "compared_by_meaning": self.vectors,
            "seconds": round(self.seconds, 3),
        }


def _fix(kind: Kind, memory_id: str, other_id: str | None = None) -> str:
    return FIXES[kind].format(a=memory_id, b=other_id or "")


class StoreAudit:
    """The audit of one profile's store, and its fixes, over the service's core (clock, embedder, audit log), its
    memory reads and its settings (the ownership rule, the embedding model)."""

    def __init__(self, core: ServiceCore, memories: MemoryAccess, settings: Settings) -> None:
        """Audit `core`'s profile."""
        self.core = core
        self.store = core.store
        self.memories = memories
        self.settings = settings
        self._pair_search: PairSearch | None = None
        self.spread = Spread.here()  # the audit's pools over this machine's cores (`host/forking.py`)

    @property
    def pair_search(self) -> PairSearch:
        """The near duplicates' and contradictions' search, loaded on first use (it loads numpy: a hook that opens the
        service never audits)."""
        if self._pair_search is None:
            from orcmem.service.audit_pairs import PairSearch

            self._pair_search = PairSearch(self.core.store)
        return self._pair_search

    # --- the pass ----------------------------------------------------------------------------------------------
    def run(self, project: Project, *, days: int = AUDIT_UNUSED_DAYS_DEFAULT) -> AuditReport:
        """Audit the memories `project` sees (its own and global ones, not those waiting for review).

        Raises:
            ValidationError: `days` is out of range.
        """
        if not 1 <= days <= MAX_DAYS:
            raise ValidationError(f"--days must be between 1 and {MAX_DAYS}.")
        started = time.perf_counter()
        rules, traits = rules_version(), traits_version()
        rows = self.store.audit_scan.rows(project.id, rules, traits)
        now = self.core.clock()
        active = [row for row in rows if row.status == Status.ACTIVE]
        repeats = _repeats(active)
        # The per-memory work runs on the other cores while this process searches the close pairs; what it works
        # out is kept for the next audits by a thread of its own while this one judges the pairs.
        with _Worked(rows, self.spread) as worked, _Keeping(self, rows, rules, traits) as keeping:

            def facts() -> dict[int, str | None]:
                keeping.start(worked())
                return worked.facts()

            compared, pairs, by_pk = self._pairs(project, active, {row.id for row, _keep in repeats}, facts)
            done = worked()
            keeping.start(done)
            findings = [finding for row in rows if done.get(row.pk, _CLEAN)[0] for finding in _secret(row)]
            shown = _Titles({f.memory_id for f in findings})
            for row in rows:
                generic = done[row.pk][1] if row.pk in done else bool(row.generic)
                findings.extend(_alone(row, shown(row), now, days, generic))
            findings.extend(_duplicate(row, keep, shown) for row, keep in repeats)
            findings.extend(_pair_finding(pair, by_pk, shown) for pair in pairs)
        findings.extend(self._contradictions_hook(project, active))
        counts: dict[Kind, int] = defaultdict(int)
        for finding in findings:
            counts[finding.kind] += 1
        order = {kind: n for n, kind in enumerate(Kind)}
        findings.sort(key=lambda f: (order[f.kind], f.memory_id))
        return AuditReport(len(rows), findings, days, time.perf_counter() - started, compared, dict(counts))

    def _note_scanned(self, rows: list[AuditRow], secrets: set[str], rules: int) -> None:
        """Keep which memories today's rules found clean, so the next audit scans only what changed since."""
        clean = [row.pk for row in rows if not row.scanned and row.id not in secrets]
        if not clean:
            return
        # A read-only or busy store: the audit still reports, and the next one scans these again.
        with contextlib.suppress(StoreError):
            self.store.audit_scan.note_scanned(clean, rules, _texts(rows))

    def _note_traits(self, rows: list[AuditRow], worked: dict[int, Traits], traits: int) -> None:
        """Keep what this audit worked out of memories' text alone (the generic rule, facts), for the next audits."""
        kept = [(pk, generic, facts) for pk, (_secret_found, generic, facts) in worked.items()]
        if kept:
            with contextlib.suppress(StoreError):  # as for the scans: the next audit works them out again
                self.store.audit_scan.note_traits(kept, traits, _texts(rows))

    # --- ahead of the audit --------------------------------------------------------------------------------------
    def prepare(self, limit: int = PREPARE_BATCH, below: int | None = None) -> int | None:
        """Do ahead of time, for up to `limit` memories of any project (pk below `below`), what the first audit
        after an upgrade would do for each alone: today's secret rules, the generic rule, the facts (a background
        loop calls it at idle, batch after batch). The lowest pk looked at (the next batch goes below it), None
        when nothing is left."""
        rules, traits = rules_version(), traits_version()
        rows = self.store.audit_scan.unprepared(rules, traits, limit, (1 << 63) - 1 if below is None else below)
        if not rows:
            return None
        worked = work_out([(title, body, not scanned) for _pk, title, body, scanned in rows], self.spread)
        found = [(pk, scanned, traits) for (pk, _title, _body, scanned), traits in zip(rows, worked, strict=True)]
        clean = [pk for pk, scanned, (secret, _generic, _facts) in found if not scanned and not secret]
        kept = [(pk, generic, facts) for pk, _scanned, (_secret, generic, facts) in found]
        texts = {pk: (title, body) for pk, title, body, _s in rows}  # kept only for a text unchanged since
        with self.store.db.transaction():
            self.store.audit_scan.note_scanned(clean, rules, texts)
            self.store.audit_scan.note_traits(kept, traits, texts)
        return min(pk for pk, *_rest in rows)

    def prepare_all(self, go_on: Callable[[], bool]) -> bool:
        """`prepare` batch after batch, each its own short transaction (the write lock yielded between them), while
        `go_on()` (called between batches: it pauses, and says whether to go on); whether every memory is done."""
        below = self.prepare()
        while below is not None:
            if not go_on():
                return False
            below = self.prepare(below=below)
        return True

    def _pairs(
        self,
        project: Project,
        active: list[AuditRow],
        repeats: set[str],
        facts: Callable[[], Mapping[int, str | None]],
    ) -> tuple[int, list[PairFinding], dict[int, AuditRow]]:
        """Near duplicates and possible contradictions among the active memories, by their stored vectors (no
        model runs: a memory without a vector of the current model is compared by its words only; `facts`: the
        facts this audit works out of a memory whose facts were not kept, packed), and the memories compared by pk.
        The last audit's close pairs are searched again only around what changed since (`service/audit_pairs.py`)."""
        if not active or not self.store.vectors.available:
            return 0, [], {}
        model = self.core.embedder.model_id if self.core.embedder is not None else None
        model = model or self.settings.embedding_model()
        by_pk = {row.pk: row for row in active if row.id not in repeats}
        compared, found = self.pair_search.findings(project.id, model, by_pk, facts, self.spread)
        return compared, found, by_pk

    def _contradictions_hook(self, project: Project, active: list[AuditRow]) -> list[Finding]:
        """CONTRADICTION LOOKUP HOOK: the place where the per-write contradiction lookup (branch `contra`,
        `service/contradictions.py`) would add its candidates; until it is on main, possible contradictions are the
        pairs close in meaning that state a differing fact (`_pairs`)."""
        del project, active
        return []

    # --- the fixes ---------------------------------------------------------------------------------------------
    def merge(self, project: Project | None, keep_id: str, drop_id: str, *, actor: Source = Source.USER) -> Memory:
        """Fold the memory `drop_id` into `keep_id` (its files and evidence confirm the kept one), then delete it.

        Raises:
            ValidationError: the two are one memory.
            NotFoundError: either is not visible to the project.
            OwnershipError: `actor` may not delete the dropped memory (only the person deletes what they wrote).
        """
        keep, drop = self.memories.get(project, keep_id), self.memories.get(project, drop_id)
        if keep.id == drop.id:
            raise ValidationError("Merge two different memories: give the one to keep, then the one to fold in.")
        self.settings.require_owner(drop, actor, "Only the user can merge away a memory they wrote.")
        files = tuple(dict.fromkeys([*keep.files, *drop.files]))
        with self.store.db.transaction():
            self.store.memories.confirm(
                keep.id,
                files=files if keep.source is not Source.USER else (),
                source_run_id=None,
                confidence_step=CONFIDENCE_STEP,
                now=self.core.clock(),
                new_evidence=True,
            )
            self.store.memories.delete(drop.id)
            self.core.audit(str(actor), "memory.audit.merge", keep.id, keep.project_id, metadata={"merged": drop.id})
        self.store.db.erase_old_pages()
        merged = self.store.memories.get(keep.id)
        assert merged is not None
        return merged

    def redact(self, project: Project | None, memory_id: str, *, actor: Source = Source.USER) -> tuple[Memory, bool]:
        """Run today's secret rules over a memory's stored title and body again, and erase the old text (as an edit
        does); the memory and whether anything changed.

        Raises:
            NotFoundError: no such memory in this project.
            OwnershipError: `actor` may not change it.
        """
        memory = self.memories.get(project, memory_id)
        self.settings.require_owner(memory, actor, "Only the user can change a memory they wrote.")
        title, body = redact_text(memory.title), redact_text(memory.body)
        if not title.changed and not body.changed:
            return memory, False
        fields: dict[str, int | float | str | bytes | None] = {
            "title": title.text[:TITLE_MAX_CHARS],
            "body": body.text[:BODY_MAX_CHARS],
            "updated_at": self.core.clock(),
        }
        with self.store.db.transaction():
            self.store.memories.update_fields(memory.id, fields)
            note_written(self.store.audit_scan, memory.id, str(fields["title"]), str(fields["body"]), redacted=False)
            # No text and no rule name tied to the text: the audit row must not point at the secret.
            self.core.audit(str(actor), "memory.audit.redact", memory.id, memory.project_id)
        self.store.db.erase_old_pages()  # the secret's page versions leave the WAL
        self.core.vectors_changed([memory.id])
        return self.memories.get(project, memory.id), True

    # --- what recall gave ----------------------------------------------------------------------------------------
    def note_recalled(self, recalled: Iterable[tuple[str, int]]) -> None:
        """Keep when recall last gave each memory (memory id, time in ms): the audit's "never recalled"."""
        self.store.audit_scan.note_recalled(recalled)


def _rank(row: AuditRow) -> tuple[str, int, int]:
    return (row.source, 0, row.pk)


def _texts(rows: list[AuditRow]) -> dict[int, tuple[str, str]]:
    """Each memory's text as the audit read it: what it worked out is kept only while the text is still that (an
    edit in any process meanwhile)."""
    return {row.pk: (row.title, row.body) for row in rows}


def note_written(scan: AuditScanRepository, memory_id: str, title: str, body: str, *, redacted: bool) -> None:
    """Keep, as a memory's title and body are stored (`redacted`: today's secret rules redacted both whole), what the
    audit would otherwise work out of them alone: found clean, and the traits (docs/audit.md, Speed). Called in the
    write's own transaction, so no audit reads the text without them."""
    _secret, generic, facts = traits_of([(title, body, False)])[0]
    scan.note_written(
        memory_id, (title, body), rules_version() if redacted else None, (traits_version(), generic, facts)
    )


@lru_cache(maxsize=1)
def traits_version() -> int:
    """The version of what the audit works out of a memory's text alone (the facts rule, `text/facts.version`, and
    the generic rule, `rules/audit.py`): a signed 64-bit digest; a change to either works them out again."""
    digest = hashlib.blake2b(text_facts.version().to_bytes(8, "big", signed=True), digest_size=8)
    digest.update(Path(str(audit_rules.__file__)).read_bytes())
    return int.from_bytes(digest.digest(), "big", signed=True)


_CLEAN: Traits = (False, False, None)


class _Worked:
    """What an audit works out of the text of each memory whose rules' results are not all kept (today's secret
    rules where they have not found it clean, its generic verdict, its facts), by pk: started over the cores when
    many, gathered when first asked for."""

    def __init__(self, rows: list[AuditRow], spread: Spread) -> None:
        """Start on the memories of `rows` that need it."""
        needed = [row for row in rows if not row.scanned or row.generic is None or row.facts is None]
        self.needed = [row.pk for row in needed]
        self.pending = Pending([(row.title, row.body, not row.scanned) for row in needed], spread)
        self.done: dict[int, Traits] | None = None

    def __call__(self) -> dict[int, Traits]:
        """Each worked-out memory's traits by pk (waits for the pool)."""
        if self.done is None:
            self.done = dict(zip(self.needed, self.pending.result(), strict=True))
        return self.done

    def facts(self) -> dict[int, str | None]:
        """Each worked-out memory's facts, packed (None: not packable), by pk (waits for the pool)."""
        return {pk: traits[2] for pk, traits in self().items()}

    def __enter__(self) -> _Worked:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.pending.close()


class _Keeping:
    """What an audit worked out of each memory's text alone, kept for the next audits (found clean by today's secret
    rules, the traits) in a thread of its own once that work is done: the store's writes (a second or two after an
    upgrade at 100,000 memories) then run while the audit judges and chooses its close pairs. Leaving it waits for
    them, so the audit returns only once they are kept."""

    def __init__(self, audit: StoreAudit, rows: list[AuditRow], rules: int, traits: int) -> None:
        """For `audit`'s pass over `rows`, under today's secret rules and traits versions."""
        self.audit, self.rows, self.rules, self.traits = audit, rows, rules, traits
        self._started = False
        self._thread: threading.Thread | None = None
        self._failed: BaseException | None = None

    def start(self, done: dict[int, Traits]) -> None:
        """Start keeping what was worked out (`done`: each worked-out memory's traits by pk), once; in this thread
        when it holds the store's lock (an audit run inside a transaction: the other thread would wait for it)."""
        if self._started:
            return
        self._started = True
        if self.audit.store.db.held_here():
            self._keep(done)
            return
        self._thread = threading.Thread(target=self._keep, args=(done,), name="orcmem-audit-keep", daemon=True)
        self._thread.start()

    def _keep(self, done: dict[int, Traits]) -> None:
        try:
            secrets = {row.id for row in self.rows if done.get(row.pk, _CLEAN)[0]}  # what today's rules redact
            self.audit._note_scanned(self.rows, secrets, self.rules)
            self.audit._note_traits(self.rows, done, self.traits)
        except BaseException as exc:  # noqa: BLE001 - raised again in the audit's own thread, on leaving
            self._failed = exc

    def __enter__(self) -> _Keeping:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_exc: object) -> None:
        if self._thread is not None:
            self._thread.join()
        if self._failed is not None and kind is None:  # the audit's own error, if any, is the one to see
            raise self._failed


def _secret(row: AuditRow) -> list[Finding]:
    """The secret today's rules find in a memory's title or body, if any."""
    found = secret_in(row.title, row.body)
    if found is None:
        return []
    title, body = found
    what = ", ".join(sorted({*title.rules, *body.rules}))
    return [
        Finding(Kind.SECRET, row.id, title.text, f"holds what today's rules redact ({what})", _fix(Kind.SECRET, row.id))
    ]


def _pair_finding(pair: PairFinding, by_pk: dict[int, AuditRow], shown: _Titles) -> Finding:
    """A pair finding as the report shows it (titles as today's secret rules allow)."""
    one, other = by_pk[pair.memory_pk], by_pk[pair.other_pk]
    if pair.kind == Kind.NEAR_DUPLICATE:
        detail = f"says what {other.id} says ({pair.similarity:.2f} close in meaning)"
    else:
        detail = f"the newer {other.id} says otherwise: {shown(other)}"
    kind = pair.kind
    return Finding(kind, one.id, shown(one), detail, _fix(kind, one.id, other.id), other.id)


class _Titles:
    """A memory's title as a finding shows it: redacted when today's rules found a secret in the memory (a report
    never shows one), else as stored (found clean: no need to run the rules again)."""

    def __init__(self, secrets: set[str]) -> None:
        """`secrets`: the ids of the memories holding what today's rules redact."""
        self.secrets = secrets

    def __call__(self, row: AuditRow) -> str:
        """The title to show."""
        return redact(row.title) if row.id in self.secrets else row.title


def _alone(row: AuditRow, shown: str, now: int, days: int, generic: bool) -> list[Finding]:
    """What one memory shows by itself (`shown`: its title as a report shows it; `generic`: the generic rule's
    verdict on it): marked wrong, stale, empty or generic, unused."""
    found: list[Finding] = []
    if row.status == Status.RETRACTED:
        found.append(Finding(Kind.WRONG, row.id, shown, "marked wrong (retracted)", _fix(Kind.WRONG, row.id)))
        return found
    if row.status == Status.STALE:
        found.append(Finding(Kind.STALE, row.id, shown, "marked stale", "orcmem forget " + row.id))
        return found
    if row.stale_reason:
        found.append(Finding(Kind.STALE, row.id, shown, row.stale_reason, _fix(Kind.STALE, row.id)))
    if generic:
        found.append(Finding(Kind.GENERIC, row.id, shown, "too short or nothing specific", _fix(Kind.GENERIC, row.id)))
    cutoff = now - days * MS_PER_DAY
    if row.created_at < cutoff and (row.last_recalled_at is None or row.last_recalled_at < cutoff):
        when = "never recalled" if row.last_recalled_at is None else f"not recalled in {days} days"
        found.append(Finding(Kind.UNUSED, row.id, shown, when, _fix(Kind.UNUSED, row.id)))
    return found


def _repeats(active: list[AuditRow]) -> list[tuple[AuditRow, AuditRow]]:
    """Active memories whose words, once normalised, are another's (the stored digest, then the key): (the repeat,
    the memory a merge keeps)."""
    by_digest: dict[int, list[AuditRow]] = defaultdict(list)
    for row in active:
        if row.digest is not None:
            by_digest[row.digest].append(row)
    found: list[tuple[AuditRow, AuditRow]] = []
    for group in by_digest.values():
        if len(group) < 2:
            continue
        by_key: dict[str, list[AuditRow]] = defaultdict(list)
        for row in group:
            by_key[same_text_key(row.title, row.body)].append(row)
        for same in by_key.values():
            if len(same) < 2:
                continue
            keep = same[0]
            for row in same[1:]:
                if keeper(_rank(row), _rank(keep)) == 0:
                    keep = row
            found.extend((row, keep) for row in same if row.id != keep.id)
    return found


def _duplicate(row: AuditRow, keep: AuditRow, shown: _Titles) -> Finding:
    """An exact duplicate as the report shows it."""
    detail = f"the same words as {keep.id}"
    return Finding(Kind.DUPLICATE, row.id, shown(row), detail, _fix(Kind.DUPLICATE, row.id, keep.id), keep.id)
