"""MemoryService: the one place every entry point calls to record, find, judge, change and export memories."""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from orcmem.host.export import bullet_for, export_bullet
from orcmem.host.workspace import Location
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    CONFIDENCE_STEP,
    DB_FILENAME,
    LIST_MAX_LIMIT,
    REFLAG_OPEN_BUDGET_S,
    TITLE_MAX_CHARS,
)
from orcmem.models.data_shapes import SqlValue
from orcmem.models.errors import NotFoundError, StoreError, ValidationError
from orcmem.models.types import (
    DEFAULT_PROVENANCE,
    Memory,
    MemoryFilter,
    MemoryType,
    NewMemory,
    Project,
    Provenance,
    RecordResult,
    Relation,
    Scope,
    Source,
    Status,
    Verdict,
    least_trusted,
    new_memory_id,
)
from orcmem.rules import memory as rules
from orcmem.rules.permissions import may_change
from orcmem.rules.review import steers_from_tool_text
from orcmem.service.audit import StoreAudit, note_written
from orcmem.service.context import AgentContext
from orcmem.service.contradictions import Contradictions
from orcmem.service.core import ServiceCore, now_ms
from orcmem.service.cost import LearningCost
from orcmem.service.duplicates import memory_text
from orcmem.service.freshness import CheckReport, FreshnessCheck
from orcmem.service.history import History
from orcmem.service.memory_access import MemoryEdits
from orcmem.service.overview import Overview, RunsOverview, build_overview, build_runs
from orcmem.service.reflag import Reflag
from orcmem.service.review import Review
from orcmem.service.search import Search
from orcmem.service.settings import Settings
from orcmem.service.team import Team
from orcmem.store.facade import Store
from orcmem.store.grants import Grant
from orcmem.text.instructions import looks_like_instructions
from orcmem.text.redact import redact

if TYPE_CHECKING:
    from orcmem.embed.embedder import Embedder


USER_TOPIC_MESSAGE = (
    "A memory the user wrote uses this topic key, and only the user can change it. "
    "Record the new fact under another topic key, or without one."
)


def stored_text(text: str, max_chars: int) -> str:
    """Redact, then keep within the limit (a marker can be longer than the secret it replaced)."""
    return redact(text)[:max_chars]


def kept_whole(title: str, body: str) -> bool:
    """Whether `stored_text` kept both redacted texts whole: a cut one may end in what a rule takes whole."""
    return len(title) < TITLE_MAX_CHARS and len(body) < BODY_MAX_CHARS


def _provenance(source: Source, claimed: Provenance | str | None) -> Provenance:
    """The provenance a write is stored with: the one it names, else its source's default.

    Raises:
        ValidationError: it is unknown, or names a person's words without being the person's own write.
    """
    if claimed is None:
        return DEFAULT_PROVENANCE[source]
    provenance = rules.check_provenance(str(claimed))
    if provenance is Provenance.TEAMMATE or (provenance is Provenance.PERSON and source is not Source.USER):
        raise ValidationError(f"A {source} write cannot be stored as {provenance}.")
    return provenance


class MemoryService(ServiceCore):
    """Memory reads and writes over one profile database, on the ground `ServiceCore` gives (store, clock,
    embedder, projects, on/off, audit); the rest are parts it holds over the same store and clock:
    `settings`, `team`, `search`, `context` (the brief and recall), `review` (the review inbox), `cost` (the cost of
    learning), `store_audit` (the audit of the store and its fixes), `reflag` (flags made by an older detector)."""

    def __init__(self, store: Store, *, clock: Callable[[], int] = now_ms, embedder: Embedder | None = None) -> None:
        """Use an open store; `clock` returns milliseconds since the epoch (tests pass their own).

        Without an embedder (or without sqlite-vec) search and recall work on words alone.
        """
        super().__init__(store, clock=clock, embedder=embedder)
        self.settings = Settings(self)
        self.team = Team(self, self.settings)
        self.search = Search(self)
        self.context = AgentContext(self, self.settings, self.search)
        self.history = History(self)
        self.review = Review(self, self, self.history)
        self.cost = LearningCost(self)
        self.contradictions = Contradictions(self.store)
        self.store_audit = StoreAudit(self, self, self.settings)
        self.reflag = Reflag(self.store)

    def close(self, *, embed_wait: float = 0.0) -> None:
        """Close the database, first giving background embedding up to `embed_wait` seconds to finish."""
        self.search.close()
        super().close(embed_wait=embed_wait)

    @classmethod
    def open(
        cls,
        home: Path,
        *,
        vectors: bool = True,
        embedder: Embedder | None = None,
        reflag_budget_s: float = REFLAG_OPEN_BUDGET_S,
    ) -> MemoryService:
        """Open the profile database in `home` (created with its folder when missing), doing up to `reflag_budget_s`
        of the re-flag an upgraded instruction detector left (service/reflag.py; the rest is the long-lived
        processes').

        Raises:
            StoreError: the database cannot be opened or migrated.
        """
        service = cls(Store.open(home / DB_FILENAME, vectors=vectors), embedder=embedder)
        with contextlib.suppress(StoreError):  # a busy database leaves the re-flag to the next opener
            service.reflag.step(reflag_budget_s)
        service.review.expire()  # one indexed read when nothing is due
        return service

    # --- read --------------------------------------------------------------------------------------------------
    def overview(self, project: Project, *, utc_offset_ms: int = 0) -> Overview:
        """What the project remembers: counts by type, source and status, and how it grew."""
        return build_overview(self.store, project, self.clock(), utc_offset_ms=utc_offset_ms)

    def runs_overview(self, project: Project) -> RunsOverview:
        """The project's run summaries and extraction jobs, newest first."""
        return build_runs(self.store, project)

    def memories_by_id(self, memory_ids: Sequence[str]) -> builtins.list[Memory]:
        """The memories with these ids, in the order given (ids of memories since deleted are left out)."""
        return self.store.memories.get_many(memory_ids)

    def get(self, project: Project | None, memory_id: str) -> Memory:
        """A memory visible to the project (its own or a global one).

        Raises:
            ValidationError: the id is not a public memory id.
            NotFoundError: no such memory in this project.
        """
        checked = rules.check_memory_id(memory_id)
        memory = self.store.memories.get(checked)
        if memory is None or not _visible(memory, project):
            raise NotFoundError(f"No memory {checked} in this project.")
        return memory

    def get_reviewed(self, project: Project | None, memory_id: str) -> Memory:
        """A visible memory that is not waiting for review: what agents, feedback and exports may reach.

        Raises:
            ValidationError: the id is not a public memory id.
            NotFoundError: no such memory in this project, or it waits in the review inbox.
        """
        memory = self.get(project, memory_id)
        if memory.status is Status.PENDING:
            raise NotFoundError(f"Memory {memory.id} waits for review; accept it first (`orcmem review`).")
        return memory

    def list(self, project: Project | None, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Memories visible to the project, newest update first; those waiting for review only when the filter names
        the status."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.list(project.id if project else None, checked)

    def count(self, project: Project | None, flt: MemoryFilter | None = None) -> int:
        """How many memories the filter matches, ignoring limit and offset."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.count(project.id if project else None, checked)

    # --- record ------------------------------------------------------------------------------------------------
    def meanings(self, texts: Sequence[tuple[str, str]]) -> builtins.list[Sequence[float] | None]:
        """Vectors of new memories' titles and bodies for the duplicate check, waiting for the model to load
        (for background writers such as the worker); Nones without a model."""
        return self.duplicates.embed(
            self.embedder if self.semantic_ready else None, [memory_text(title, body) for title, body in texts]
        )

    def record(
        self,
        project: Project | None,
        new: NewMemory,
        *,
        embed: bool = True,
        meaning: Sequence[float] | None = None,
        look_up_meaning: bool = True,
        fingerprint: bool = True,
        relation: Relation | None = None,
        related_id: str | None = None,
        candidates: bool = False,
    ) -> RecordResult:
        """Validate, redact and store a memory, merging into the active one with the same topic key, or else into
        the one of the same scope and project it repeats (the same words once normalised, or the same meaning).

        A repeat only confirms the memory it repeats (its age; evidence and confidence unless the same run said it
        before), so what the person wrote is never overwritten; the person's own writes are stored as asked.
        `meaning` is the new text's vector when the caller computed it already (it then passes
        `look_up_meaning=False`, inside its own transaction); else it is computed here when the model is loaded,
        within the query time limit. A caller writing many (an import) passes `fingerprint=False` and fingerprints
        them together afterwards (`freshness.renew`): one look at the code for all.
        `relation` says what the new memory is to the older `related_id` (replaces,
        refines, conflicts: `History.relate`, the ownership rule included); with `candidates` the result lists the
        active memories under other topic keys it may contradict, for the writer to judge.

        Raises:
            MemoryOffError: memory is off.
            ValidationError: a limit or a value is wrong.
            OwnershipError: the topic key belongs to a memory the user wrote and the writer is not the user.
        """
        self._require_enabled()
        memory_type = rules.check_type(new.type)
        scope = rules.check_scope(new.scope)
        source = rules.check_source(new.source)
        provenance = _provenance(source, new.provenance)
        title = stored_text(rules.check_title(new.title), TITLE_MAX_CHARS)
        body = stored_text(rules.check_body(new.body), BODY_MAX_CHARS)
        topic_key = rules.check_topic_key(new.topic_key)
        files = rules.check_files(new.files)
        if scope is Scope.PROJECT and project is None:
            raise ValidationError("A project memory needs a project; run this inside the project's folder.")
        project_id = project.id if scope is Scope.PROJECT and project is not None else None
        origin_root = project.root_path if project is not None else None
        may_repeat = source is not Source.USER
        confidence = rules.clamp_confidence(new.confidence)
        held = self.review.waits(
            project, source=source, memory_type=memory_type, confidence=confidence, provenance=provenance
        )
        author, author_agent = self.settings.person(origin_root), self._writing_agent(source, new.source_run_id)
        if (may_repeat or candidates) and meaning is None and look_up_meaning and self.model_ready():
            meaning = self.duplicates.embed_now(self.embedder, memory_text(title, body))
        if (relation is None) != (related_id is None):
            raise ValidationError("A relation needs the id of the memory it is about, and an id needs a relation.")
        with self.store.db.transaction():
            older = self.history.target(project, related_id) if related_id is not None else None
            existing = self.store.memories.find_active_topic(project_id, topic_key) if topic_key else None
            repeated = None
            if existing is None and may_repeat:
                model = self.embedder.model_id if self.embedder is not None else None
                repeated = self.duplicates.find(project_id, title, body, meaning, model)
            if held is not None and repeated is None:
                # Waits for review: never merged into what is active (accepting it does that); a repeat of what
                # already waits confirms that one, so the inbox holds each thing once.
                if existing is not None:
                    self.settings.require_owner(existing, source, USER_TOPIC_MESSAGE)
                # The same topic waiting takes the newer words (merged below); the same words waiting are confirmed.
                existing = self.store.memories.find_pending_topic(project_id, topic_key) if topic_key else None
                if existing is None:
                    repeated = self.store.memories.with_same_text(project_id, title, body, Status.PENDING)
            if repeated is not None:
                person_wrote = not may_change(repeated.source, source)  # only its age changes: text, files, origin stay
                same_run = new.source_run_id is not None and new.source_run_id == repeated.source_run_id
                self.store.memories.confirm(
                    repeated.id,
                    files=() if person_wrote else files,
                    source_run_id=None if person_wrote else new.source_run_id,
                    confidence_step=CONFIDENCE_STEP,
                    now=self.clock(),
                    new_evidence=not same_run,  # a later pass of one run saying it again is not new evidence
                )
                self.audit(str(source), "memory.repeat", repeated.id, project_id)
                confirmed = self.store.memories.get(repeated.id)
                assert confirmed is not None
                result = RecordResult(confirmed, merged=True)
            elif existing is not None:
                self.settings.require_owner(existing, source, USER_TOPIC_MESSAGE)
                self.store.memories.merge(
                    existing.id,
                    title=title,
                    body=body,
                    files=files,
                    source_run_id=new.source_run_id,
                    confidence_step=CONFIDENCE_STEP,
                    now=self.clock(),
                    provenance=provenance,  # its text is now the new write's
                    flagged=looks_like_instructions(f"{title}\n{body}"),
                )
                self.audit(str(source), "memory.merge", existing.id, project_id)
                self._note_redacted(existing.id, title, body)
                merged = self.store.memories.get(existing.id)
                assert merged is not None
                result = RecordResult(merged, merged=True)
            else:
                now = self.clock()
                memory = Memory(
                    id=new_memory_id(),
                    scope=scope,
                    project_id=project_id,
                    type=memory_type,
                    topic_key=topic_key,
                    title=title,
                    body=body,
                    confidence=confidence,
                    status=Status.PENDING if held is not None else Status.ACTIVE,
                    source=source,
                    source_run_id=new.source_run_id,
                    source_task_id=new.source_task_id,
                    evidence_count=1,
                    files=files,
                    created_at=now,
                    updated_at=now,
                    last_confirmed_at=now,
                    origin_root=origin_root,
                    flagged=looks_like_instructions(f"{title}\n{body}"),
                    author=author,
                    author_agent=author_agent,
                    provenance=provenance,
                )
                self.store.memories.insert(memory)
                self._note_redacted(memory.id, title, body)
                self.audit(
                    str(source),
                    "memory.record",
                    memory.id,
                    project_id,
                    metadata={"waits": held} if held is not None else None,
                )
                result = RecordResult(memory, merged=False)
            if older is not None and relation is not None:
                same_person = older.author is None or author is None or older.author == author
                stored = self.history.relate(result.memory, relation, older, source, same_person=same_person)
                now_stored = self.store.memories.get(result.memory.id)  # a conflict may have sent it to the inbox
                assert now_stored is not None
                result = replace(result, memory=now_stored, relation=stored, related_id=older.id if stored else None)
        if candidates:
            model = self.embedder.model_id if self.embedder is not None else None
            found = self.contradictions.candidates(
                result.memory.project_id, title, body, topic_key, meaning, model, exclude=(result.memory.id,)
            )
            result = replace(result, candidates=tuple(found))
        if embed and result.memory.status is not Status.PENDING:  # embedded once accepted
            self.vectors_changed([result.memory.id])  # after the commit, so the background thread sees the row
        if fingerprint and project is not None and (result.memory.files or result.memory.type is MemoryType.COMMAND):
            self.freshness.renew(project, [result.memory.id])  # made or confirmed: its code as it is now
        return result

    def _note_redacted(self, memory_id: str, title: str, body: str) -> None:
        """Keep what the store audit works out of a memory's stored text alone, as today's secret rules just redacted
        it, so the audit need not work it out again (docs/audit.md, Speed)."""
        note_written(self.store.audit_scan, memory_id, title, body, redacted=kept_whole(title, body))

    def _writing_agent(self, source: Source, run_id: str | None) -> str | None:
        """The agent a memory is written by on the person's behalf (its run's agent); None for the person's own, or
        when no run says which agent it was."""
        if source is Source.USER or not run_id:
            return None
        run = self.store.runs.get(run_id)
        return run.agent if run is not None else None

    def record_at(
        self,
        location: Location,
        new: NewMemory,
        *,
        relation: Relation | None = None,
        related_id: str | None = None,
        candidates: bool = False,
    ) -> RecordResult:
        """Record a memory in the project at `location`, creating the project in the same transaction.

        One transaction for both: a database that fails while saving the memory keeps its bytes, instead of
        keeping only the project's new "last used" time.
        """
        with self.store.db.transaction():
            project = self.project(location)
            result = self.record(
                project, new, embed=False, relation=relation, related_id=related_id, candidates=candidates
            )
        self.vectors_changed([result.memory.id])
        return result

    def relate(
        self, project: Project | None, memory_id: str, relation: Relation, other_id: str, *, actor: Source
    ) -> Relation | None:
        """Say after the fact what a memory is to an older one (`History.relate`, the ownership rule included); the
        relation stored.

        Raises:
            NotFoundError: either memory is not in this project.
            ValidationError: the older one is no longer active.
        """
        memory = self.get(project, memory_id)
        with self.store.db.transaction():
            older = self.history.target(project, other_id)
            person = self.settings.person()
            same_person = older.author is None or person is None or older.author == person
            return self.history.relate(memory, relation, older, actor, same_person=same_person)

    @property
    def freshness(self) -> FreshnessCheck:
        """The freshness check over this profile (docs/freshness.md)."""
        return FreshnessCheck(self.store, self.clock)

    def check_freshness(
        self, project: Project, *, everything: bool = False, worktree: Path | None = None
    ) -> CheckReport:
        """Judge the project's memories against its code now, in `worktree` when given (incremental unless
        `everything`)."""
        return self.freshness.check(project, everything=everything, worktree=worktree)

    # --- change ------------------------------------------------------------------------------------------------
    def edit(
        self,
        project: Project | None,
        memory_id: str,
        *,
        actor: Source = Source.USER,
        **edits: Unpack[MemoryEdits],
    ) -> Memory:
        """Change a memory's title, body or type; only the user may change what the user wrote."""
        title, body, type = edits.get("title"), edits.get("body"), edits.get("type")
        memory = self.get(project, memory_id)
        self.settings.require_owner(memory, actor, "Only the user can change a memory they wrote.")
        fields: dict[str, SqlValue] = {}
        if title is not None:
            fields["title"] = stored_text(rules.check_title(title), TITLE_MAX_CHARS)
        if body is not None:
            fields["body"] = stored_text(rules.check_body(body), BODY_MAX_CHARS)
        if type is not None:
            fields["type"] = str(rules.check_type(type))
        if not fields:
            raise ValidationError("Nothing to change: give a new title, body or type.")
        changed = {k: v for k, v in fields.items() if getattr(memory, k) != v and str(getattr(memory, k)) != v}
        if not changed:
            return memory
        if "title" in changed or "body" in changed:
            text = f"{str(changed.get('title', memory.title))}\n{str(changed.get('body', memory.body))}"
            changed["flagged"] = int(looks_like_instructions(text))
            # A person who rewrites a memory owns its words now; an agent's rewrite is trusted no more than before.
            edited = Provenance.PERSON if actor is Source.USER else least_trusted(memory.provenance, Provenance.AGENT)
            if edited is not memory.provenance:
                changed["provenance"] = str(edited)
        new_type = rules.check_type(str(changed.get("type", memory.type)))
        new_provenance = Provenance(str(changed.get("provenance", memory.provenance)))
        if (
            actor is not Source.USER
            and memory.status is Status.ACTIVE
            and steers_from_tool_text(new_type, new_provenance)
        ):
            raise ValidationError(  # the review inbox's rule: no agent turns tool text into a standing order
                f"A {new_type} whose words came from tool output goes in only by the person's review; "
                "tell the user what you would change."
            )
        with self.store.db.transaction():
            self.store.memories.update_fields(memory.id, {**changed, "updated_at": self.clock()})
            self.audit(str(actor), "memory.edit", memory.id, memory.project_id, metadata={"fields": sorted(changed)})
            if "title" in changed or "body" in changed:
                self._note_redacted(
                    memory.id, str(fields.get("title", memory.title)), str(fields.get("body", memory.body))
                )
        if "title" in changed or "body" in changed:
            self.store.db.erase_old_pages()  # the old text's page versions leave the WAL
            self.vectors_changed([memory.id])
            if project is not None and memory.project_id == project.id:
                self.freshness.renew(project, [memory.id])  # the names it mentions may have changed
        return self.get(project, memory.id)

    def feedback(self, project: Project | None, memory_id: str, verdict: str, *, actor: Source = Source.USER) -> Memory:
        """helpful: one CONFIDENCE_STEP more and the age reset; wrong: retracted; stale: stale.

        Raises:
            OwnershipError: someone other than the user marks a user's memory wrong or stale.
        """
        checked = rules.check_verdict(verdict)
        memory = self.get_reviewed(project, memory_id)
        if checked is not Verdict.HELPFUL:  # anyone may find a memory helpful
            self.settings.require_owner(
                memory, actor, "Only the user can retract a memory they wrote, or mark it stale."
            )
        now = self.clock()
        with self.store.db.transaction():
            if checked is Verdict.HELPFUL:
                self.store.memories.mark_helpful(memory.id, confidence_step=CONFIDENCE_STEP, now=now)
                if project is not None and memory.project_id == project.id:
                    self.freshness.renew(project, [memory.id])  # confirmed: fresh again, as the code is now
            else:
                status = Status.RETRACTED if checked is Verdict.WRONG else Status.STALE
                self.store.memories.update_fields(memory.id, {"status": str(status), "updated_at": now})
            self.audit(str(actor), f"memory.feedback.{checked}", memory.id, memory.project_id)
        return self.get(project, memory.id)

    def forget(self, project: Project | None, memory_id: str, *, actor: Source = Source.USER) -> Memory:
        """Delete a memory: its row, full-text entry, files and vector. Returns what was deleted."""
        memory = self.get(project, memory_id)
        self.settings.require_owner(memory, actor, "Only the user can delete a memory they wrote.")
        with self.store.db.transaction():
            self.store.memories.delete(memory.id)
            # No text in the audit row: forgetting a memory that holds a secret must leave no copy of it.
            self.audit(str(actor), "memory.forget", memory.id, memory.project_id)
        self.store.db.erase_old_pages()
        return memory

    def export(self, project: Project | None, memory_id: str, file_name: str, root: Path) -> tuple[Path, bool]:
        """Add a memory to `root`/CLAUDE.md or AGENTS.md; returns the file and whether it changed."""
        memory = self.get_reviewed(project, memory_id)
        # The agents read these files as instructions: words a tool gave say so there too.
        note = "from tool output" if memory.provenance is Provenance.TOOL_TEXT else ""
        target, changed = export_bullet(root, file_name, bullet_for(memory.title, memory.body, note))
        if changed:
            self.audit("user", "memory.export", memory.id, memory.project_id, metadata={"file": str(target)})
        return target, changed

    # --- grants ------------------------------------------------------------------------------------------------
    def grants(self) -> builtins.list[tuple[Grant, Project | None]]:
        """Every stored "allow for this session / workspace" answer, oldest first, with its project."""
        projects = {project.id: project for project, _count in self.projects()}
        return [(grant, projects.get(grant.project_id)) for grant in self.store.grants.list()]

    def revoke_grant(self, grant_id: int) -> Grant:
        """Delete a grant: the next write it covered asks the person again.

        Raises:
            NotFoundError: there is no grant with that id.
        """
        found = next((grant for grant in self.store.grants.list() if grant.pk == grant_id), None)
        if found is None:
            raise NotFoundError(f"No grant {grant_id}; `orcmem grants` lists them.")
        with self.store.db.transaction():
            self.store.grants.remove(found.pk)
            self.audit(
                "user", "grant.revoke", None, found.project_id, metadata={"grant": found.pk, "scope": found.scope}
            )
        return found


def _visible(memory: Memory, project: Project | None) -> bool:
    return memory.scope is Scope.GLOBAL or (project is not None and memory.project_id == project.id)


def _check_filter(flt: MemoryFilter) -> MemoryFilter:
    if not 1 <= flt.limit <= LIST_MAX_LIMIT:
        raise ValidationError(f"The limit must be between 1 and {LIST_MAX_LIMIT}.")
    if flt.offset < 0:
        raise ValidationError("The offset cannot be negative.")
    return replace(
        flt,
        types=tuple(str(rules.check_type(t)) for t in flt.types),
        sources=tuple(str(rules.check_source(s)) for s in flt.sources),
        provenances=tuple(str(rules.check_provenance(p)) for p in flt.provenances),
        statuses=tuple(str(rules.check_status(s)) for s in flt.statuses),
        scopes=tuple(str(rules.check_scope(s)) for s in flt.scopes),
    )
