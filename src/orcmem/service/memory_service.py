"""MemoryService: the one place every entry point calls to record, find, judge, change and export memories."""

from __future__ import annotations

import builtins
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem import rules
from orcmem.errors import MemoryOffError, NotFoundError, ValidationError
from orcmem.export import bullet_for, export_bullet
from orcmem.models import (
    Memory,
    MemoryFilter,
    MemorySettings,
    NewMemory,
    Project,
    RecordResult,
    Scope,
    SearchHit,
    Source,
    Status,
    Verdict,
    new_memory_id,
)
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    BRIEF_MEMORY_POOL,
    BRIEF_SUMMARIES,
    BRIEF_TASKS,
    CONFIDENCE_STEP,
    DB_FILENAME,
    EMBEDDING_MODEL_DEFAULT,
    EXTRACTION_PROVIDER_DEFAULT,
    EXTRACTION_PROVIDERS,
    IDLE_MINUTES_DEFAULT,
    LIST_MAX_LIMIT,
    QUERY_EMBED_TIMEOUT_S,
    RECALL_MAX_MEMORIES,
    RECALL_MIN_SIMILARITY,
    SEARCH_CANDIDATES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    SETTING_EMBEDDING_MODEL,
    SETTING_EXTRACTION_MODEL_PREFIX,
    SETTING_EXTRACTION_PROVIDER,
    SETTING_IDLE_MINUTES,
    SETTING_MEMORY_ENABLED,
    SETTING_POLICY_REVISION,
    TITLE_MAX_CHARS,
)
from orcmem.permissions import looks_like_instructions, may_change, require_may_change
from orcmem.redact import redact
from orcmem.retrieve import cap_per_run, fts_query, fuse
from orcmem.service.duplicates import Duplicates, memory_text
from orcmem.service.overview import Overview, RunsOverview, build_overview, build_runs
from orcmem.service.vectors import EmbeddingPump
from orcmem.store import Store
from orcmem.store.grants import Grant
from orcmem.store.recall import RecallRow
from orcmem.workspace import Location

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from orcmem.embed.embedder import Embedder
    from orcmem.store.vectors import Scan

log = logging.getLogger("orcmem.service")

MEMORY_OFF_MESSAGE = "orcmem memory is off. Turn it on with `orcmem memory on` to save or recall memories."
USER_TOPIC_MESSAGE = (
    "A memory the user wrote uses this topic key, and only the user can change it. "
    "Record the new fact under another topic key, or without one."
)


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return int(time.time() * 1000)


def _clean(text: str, max_chars: int) -> str:
    """Redact, then keep within the limit (a marker can be longer than the secret it replaced)."""
    return redact(text)[:max_chars]


class MemoryService:
    """Memory operations over one profile database; every method takes explicit arguments, never the environment."""

    def __init__(self, store: Store, *, clock: Callable[[], int] = now_ms, embedder: Embedder | None = None) -> None:
        """Use an open store; `clock` returns milliseconds since the epoch (tests pass their own).

        Without an embedder (or without sqlite-vec) search and recall work on words alone.
        """
        self.store = store
        self.clock = clock
        self.embedder: Embedder | None = None
        self.pump: EmbeddingPump | None = None
        self.duplicates = Duplicates(store)
        self._query_pool: ThreadPoolExecutor | None = None
        self._query_pool_lock = threading.Lock()
        if embedder is not None:
            self.use_embedder(embedder)

    def use_embedder(self, embedder: Embedder) -> None:
        """Search and embed with `embedder` from now on."""
        self.embedder = embedder
        self.pump = EmbeddingPump(self.store, embedder, self.is_enabled, self._now)

    def _now(self) -> int:
        return self.clock()

    @classmethod
    def open(cls, home: Path, *, vectors: bool = True, embedder: Embedder | None = None) -> MemoryService:
        """Open the profile database in `home` (created with its folder when missing).

        Raises:
            StoreError: the database cannot be opened or migrated.
        """
        return cls(Store.open(home / DB_FILENAME, vectors=vectors), embedder=embedder)

    def close(self, *, embed_wait: float = 0.0) -> None:
        """Close the database, first giving background embedding up to `embed_wait` seconds to finish."""
        if self.pump is not None and embed_wait > 0:
            self.pump.wait(embed_wait)
        if self._query_pool is not None:
            self._query_pool.shutdown(wait=False, cancel_futures=True)
        if self.embedder is not None:
            self.embedder.close()
        self.store.close()

    @property
    def home(self) -> Path:
        """The profile folder: the database and orcmem's other files of this profile."""
        return self.store.db.path.parent

    @property
    def database_path(self) -> Path:
        """The profile's database file."""
        return self.store.db.path

    @property
    def semantic_ready(self) -> bool:
        """Whether search by meaning can run: an embedder and the vector table are both there."""
        return self.embedder is not None and self.store.vectors.available

    def vectors_changed(self, memory_ids: Sequence[str] | None = None) -> None:
        """Memories changed: embed these (or, with None, every memory lacking a vector) in the background.

        Nothing is embedded while memory is off.
        """
        if self.pump is not None and self.is_enabled() and self.store.vectors.available:
            self.pump.schedule(memory_ids)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every active memory that has no vector from the current model; returns how many.

        Raises:
            MemoryOffError: memory is off (nothing is embedded while it is off).
        """
        self._require_enabled()
        if self.pump is None or not self.store.vectors.available:
            return 0
        return self.pump.embed_missing(progress=progress)

    # --- projects ----------------------------------------------------------------------------------------------
    def project(self, location: Location, *, create: bool = True) -> Project | None:
        """The project at a location; created on first use when `create`, else None if unknown."""
        if create:
            return self.store.projects.ensure(
                location.canonical_root, location.worktree_root, location.name, self.clock()
            )
        return self.store.projects.by_root(location.canonical_root)

    def projects(self) -> builtins.list[tuple[Project, int]]:
        """Every known project with its number of memories."""
        return self.store.projects.all()

    # --- settings ----------------------------------------------------------------------------------------------
    def settings(self) -> MemorySettings:
        """The stored memory settings; memory is off until turned on."""
        provider = self.store.settings.get(SETTING_EXTRACTION_PROVIDER) or EXTRACTION_PROVIDER_DEFAULT
        models = {
            key.removeprefix(SETTING_EXTRACTION_MODEL_PREFIX): value
            for key, value in self.store.settings.with_prefix(SETTING_EXTRACTION_MODEL_PREFIX).items()
        }
        return MemorySettings(enabled=self.is_enabled(), provider=provider, models=models)

    def is_enabled(self) -> bool:
        """Whether memory is on (a missing setting means off)."""
        return self.store.settings.get(SETTING_MEMORY_ENABLED) == "true"

    def policy_revision(self) -> int:
        """A counter raised whenever memory or extraction is turned off; jobs queued before it are skipped."""
        return int(self.store.settings.get(SETTING_POLICY_REVISION) or 0)

    def _bump_policy(self) -> None:
        self.store.settings.set(SETTING_POLICY_REVISION, str(self.policy_revision() + 1))

    def set_enabled(self, enabled: bool) -> MemorySettings:
        """Turn memory on or off for every project."""
        with self.store.db.transaction():
            if not enabled:
                self._bump_policy()
                self.store.jobs.skip_waiting("memory was turned off", self.clock())
            self.store.settings.set(SETTING_MEMORY_ENABLED, "true" if enabled else "false")
            self.audit("user", "settings.memory", metadata={"enabled": enabled})
        return self.settings()

    def set_provider(self, provider: str, model: str | None = None) -> MemorySettings:
        """Choose the extraction provider (and optionally its model); `off` stops extraction only."""
        name = str(provider).strip().lower()
        if name not in EXTRACTION_PROVIDERS:
            raise ValidationError(f"Unknown provider {provider!r}; choose one of: {', '.join(EXTRACTION_PROVIDERS)}.")
        with self.store.db.transaction():
            if name == "off":
                self._bump_policy()
                self.store.jobs.skip_waiting("extraction was turned off", self.clock())
            self.store.settings.set(SETTING_EXTRACTION_PROVIDER, name)
            if model is not None:
                self._set_model(name, model)
            self.audit("user", "settings.provider", metadata={"provider": name, "model": model and model.strip()})
        return self.settings()

    def _set_model(self, provider: str, model: str) -> None:
        harness = {"apikey": "claude", "claude": "claude", "codex": "codex"}.get(provider)
        if harness is None:
            raise ValidationError("Choose a provider (claude, codex or apikey) before choosing a model.")
        key = SETTING_EXTRACTION_MODEL_PREFIX + harness
        if model.strip():
            self.store.settings.set(key, rules.check_model_name(model))
        else:
            self.store.settings.delete(key)

    def idle_minutes(self) -> float:
        """How long a session left open waits before it is distilled (the default when unset or unreadable)."""
        raw = self.store.settings.get(SETTING_IDLE_MINUTES)
        try:
            minutes = float(raw) if raw is not None else IDLE_MINUTES_DEFAULT
        except ValueError:
            return IDLE_MINUTES_DEFAULT
        # A value stored by an older orcmem ("nan" meant "at once") is not one `set_idle_minutes` accepts.
        return minutes if math.isfinite(minutes) and minutes >= 0 else IDLE_MINUTES_DEFAULT

    def set_idle_minutes(self, minutes: float) -> float:
        """How long a session left open waits before it is distilled (0 to a day, a finite number), audited.

        Raises:
            ValidationError: not a finite number from 0 to 1,440.
        """
        value = rules.check_idle_minutes(minutes)
        with self.store.db.transaction():
            self.store.settings.set(SETTING_IDLE_MINUTES, f"{value:g}")
            self.audit("user", "settings.idle", metadata={"minutes": value})
        return value

    def embedding_model(self) -> str:
        """The id of the model whose vectors search uses."""
        return self.store.settings.get(SETTING_EMBEDDING_MODEL) or EMBEDDING_MODEL_DEFAULT

    def set_embedding_model(self, model_id: str) -> None:
        """Make `model_id` the model search uses; memories with vectors of another model get embedded again."""
        with self.store.db.transaction():
            self.store.settings.set(SETTING_EMBEDDING_MODEL, model_id)
            self.audit("user", "settings.embedding_model", metadata={"model": model_id})

    def vector_status(self) -> dict[str, object]:
        """How many vectors the active model has, and how many active memories still need one."""
        model = self.embedding_model()
        return {
            "model": model,
            "vectors_available": self.store.vectors.available,
            "vector_error": self.store.db.vector_error,
            "vectors": self.store.vectors.count(model) if self.store.vectors.available else 0,
            "missing": self.store.vectors.count_missing(model),
        }

    def _require_enabled(self) -> None:
        if not self.is_enabled():
            raise MemoryOffError(MEMORY_OFF_MESSAGE)

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
    ) -> RecordResult:
        """Validate, redact and store a memory, merging into the active one with the same topic key, or else into
        the one of the same scope and project it repeats (the same words once normalised, or the same meaning).

        A repeat only confirms the memory it repeats (its age; evidence and confidence unless the same run said it
        before), so what the person wrote is never overwritten; the person's own writes are stored as asked.
        `meaning` is the new text's vector when the caller computed it already (it then passes
        `look_up_meaning=False`, inside its own transaction); else it is computed here when the model is loaded,
        within the query time limit.

        Raises:
            MemoryOffError: memory is off.
            ValidationError: a limit or a value is wrong.
            OwnershipError: the topic key belongs to a memory the user wrote and the writer is not the user.
        """
        self._require_enabled()
        memory_type = rules.check_type(new.type)
        scope = rules.check_scope(new.scope)
        source = rules.check_source(new.source)
        title = _clean(rules.check_title(new.title), TITLE_MAX_CHARS)
        body = _clean(rules.check_body(new.body), BODY_MAX_CHARS)
        topic_key = rules.check_topic_key(new.topic_key)
        files = rules.check_files(new.files)
        if scope is Scope.PROJECT and project is None:
            raise ValidationError("A project memory needs a project; run this inside the project's folder.")
        project_id = project.id if scope is Scope.PROJECT and project is not None else None
        origin_root = project.root_path if project is not None else None
        may_repeat = source is not Source.USER
        if may_repeat and meaning is None and look_up_meaning and self._model_ready():
            meaning = self.duplicates.embed_now(self.embedder, memory_text(title, body))
        with self.store.db.transaction():
            existing = self.store.memories.find_active_topic(project_id, topic_key) if topic_key else None
            repeated = None
            if existing is None and may_repeat:
                model = self.embedder.model_id if self.embedder is not None else None
                repeated = self.duplicates.find(project_id, title, body, meaning, model)
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
                require_may_change(existing.source, source, USER_TOPIC_MESSAGE)
                self.store.memories.merge(
                    existing.id,
                    title=title,
                    body=body,
                    files=files,
                    source_run_id=new.source_run_id,
                    confidence_step=CONFIDENCE_STEP,
                    now=self.clock(),
                    flagged=looks_like_instructions(f"{title}\n{body}"),
                )
                self.audit(str(source), "memory.merge", existing.id, project_id)
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
                    confidence=rules.clamp_confidence(new.confidence),
                    status=Status.ACTIVE,
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
                )
                self.store.memories.insert(memory)
                self.audit(str(source), "memory.record", memory.id, project_id)
                result = RecordResult(memory, merged=False)
        if embed:
            self.vectors_changed([result.memory.id])  # after the commit, so the background thread sees the row
        return result

    def record_at(self, location: Location, new: NewMemory) -> RecordResult:
        """Record a memory in the project at `location`, creating the project in the same transaction.

        One transaction for both: a database that fails while saving the memory keeps its bytes, instead of
        keeping only the project's new "last used" time.
        """
        with self.store.db.transaction():
            project = self.project(location)
            result = self.record(project, new, embed=False)
        self.vectors_changed([result.memory.id])
        return result

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

    def list(self, project: Project | None, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Memories visible to the project, newest update first."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.list(project.id if project else None, checked)

    def count(self, project: Project | None, flt: MemoryFilter | None = None) -> int:
        """How many memories the filter matches, ignoring limit and offset."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.count(project.id if project else None, checked)

    def search(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_DEFAULT_LIMIT,
        *,
        semantic: bool | None = None,
    ) -> builtins.list[SearchHit]:
        """Active memories of the project and global ones that match `text`, best first; never raises on text.

        Words (FTS5) and meaning (vectors) each give up to 40 candidates, fused and scored as docs/search.md says.
        Meaning is used while memory is on (or when `semantic` says so), and only if the query vector arrives
        within 500 ms; otherwise the search answers from words alone.
        """
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise ValidationError(f"The search limit must be between 1 and {SEARCH_MAX_LIMIT}.")
        pending = self._nearest_soon(project, text, SEARCH_CANDIDATES) if self._use_meaning(semantic) else None
        word_list = self.search_words(project, text, SEARCH_CANDIDATES)  # runs while the query is embedded and scanned
        meaning_list = self.search_meaning(project, text, SEARCH_CANDIDATES, pending=pending) if pending else []
        hits = cap_per_run(fuse(word_list, meaning_list, self.clock()), limit)
        complete = self.store.memories.with_files([hit.memory for hit in hits])
        return [replace(hit, memory=memory) for hit, memory in zip(hits, complete, strict=True)]

    def search_words(self, project: Project | None, text: str, limit: int = SEARCH_CANDIDATES) -> builtins.list[Memory]:
        """Word matches only, best BM25 first (candidates: read without their files)."""
        match = fts_query(text)
        if match is None:
            return []
        return [hit.memory for hit in self.store.memories.search_words(match, project.id if project else None, limit)]

    def _nearest_soon(self, project: Project | None, text: str, limit: int) -> Future[Scan | None] | None:
        """Start embedding the query and scanning the vectors in the background, or None when meaning cannot be used.

        The in-memory copy of the vectors is refreshed here first, so the background thread needs no database:
        the embedding and the scan release the GIL and, on a second core, overlap the word search.
        """
        embedder = self.embedder
        if embedder is None or not self.store.vectors.available or not text.strip():
            return None
        self.store.vectors.refresh(embedder.model_id)
        with self._query_pool_lock:
            if self._query_pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="orcmem-query")
        return self._query_pool.submit(self._scan_for, embedder, text)

    def _scan_for(self, embedder: Embedder, text: str) -> Scan | None:
        try:
            # On this thread when the embedder allows it (one hand-off less, and never queued behind documents);
            # the caller waits on this thread with a timeout either way.
            vector = embedder.embed_query_here(text)
            if vector is None:
                vector = embedder.embed_query(text, timeout=QUERY_EMBED_TIMEOUT_S)
        except Exception as exc:  # a broken model must leave search working on words
            log.warning("query embedding failed: %s", exc)
            return None
        if vector is None:
            return None
        return self.store.vectors.scan(vector, embedder.model_id, refresh=False)

    def search_meaning(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_CANDIDATES,
        *,
        pending: Future[Scan | None] | None = None,
    ) -> builtins.list[Memory]:
        """Nearest memories by meaning, closest first, read without their files; empty when the model or vectors
        are unavailable or the query vector is late."""
        pending = pending or self._nearest_soon(project, text, limit)
        if pending is None:
            return []
        from concurrent.futures import TimeoutError as FuturesTimeout

        try:
            # The embedder gives up after its own limit; the margin covers the scan that follows it.
            found = pending.result(timeout=QUERY_EMBED_TIMEOUT_S + 0.25)
        except FuturesTimeout:
            return []  # the embedder let its own limit pass: answer from words
        except Exception as exc:  # a failing scan must leave search working on words
            log.warning("meaning search failed: %s", exc)
            return []
        if found is None:
            return []
        hits = self.store.vectors.pick(found, project.id if project else None, limit)
        return self.store.memories.get_many([hit.memory_id for hit in hits], files=False)

    def _use_meaning(self, semantic: bool | None) -> bool:
        return self.is_enabled() if semantic is None else semantic

    # --- brief and recall -------------------------------------------------------------------------------------
    def brief(self, project: Project | None) -> str:
        """The project brief for a new session; "" when memory is off or nothing is stored."""
        from orcmem.brief import build_brief

        if project is None or not self.is_enabled():
            return ""
        memories = self.list(project, MemoryFilter(statuses=("active",), limit=BRIEF_MEMORY_POOL))
        tasks = self.store.tasks.open_titles(project.id, BRIEF_TASKS)
        items = [
            item for summary in self.store.summaries.recent(project.id, BRIEF_SUMMARIES) for item in summary.open_items
        ]
        return build_brief(memories, tasks, items, self.clock())

    def recall(
        self,
        canonical_root: str,
        prompt: str,
        *,
        meaning: bool = False,
        min_similarity: float = RECALL_MIN_SIMILARITY,
    ) -> str:
        """The memories that match a prompt, fenced as reference material; "" when off or nothing matches.

        With `meaning`, memories whose cosine similarity to the prompt reaches `min_similarity` join those the
        words found, so a prompt that says the same thing in other words is answered too. Only a process whose
        model has already loaded (the MCP server) uses it: recall never waits for a model.
        """
        from orcmem.recall import format_recall

        rows = self.recall_rows(canonical_root, prompt, meaning=meaning, min_similarity=min_similarity)
        return format_recall(rows, self.clock()) if rows else ""

    def recall_rows(
        self,
        canonical_root: str,
        prompt: str,
        *,
        meaning: bool = False,
        min_similarity: float = RECALL_MIN_SIMILARITY,
    ) -> builtins.list[RecallRow]:
        """What `recall` frames: the gated word matches, fused with the close ones by meaning when asked, best first."""
        from orcmem.recall import merge_recall, recall_by_words, recall_match

        if recall_match(prompt) is None:
            return []
        project = self.store.projects.by_root(canonical_root) if meaning else None
        pending = self._nearest_soon(project, prompt, RECALL_MAX_MEMORIES) if meaning and self._model_ready() else None
        by_words = recall_by_words(self.store.db.path, canonical_root, prompt)
        if by_words is None:  # memory is off, or the database is from another version
            if pending is not None:
                pending.cancel()
            return []
        by_meaning = self._close_in_meaning(project, pending, min_similarity) if pending is not None else []
        return merge_recall(by_words, by_meaning)[:RECALL_MAX_MEMORIES]

    def _model_ready(self) -> bool:
        """Whether the query can be embedded now: an embedder whose model has loaded (one without a load is ready)."""
        return self.semantic_ready and self.embedder is not None and self.embedder.ready

    def _close_in_meaning(
        self, project: Project | None, pending: Future[Scan | None], min_similarity: float
    ) -> builtins.list[RecallRow]:
        """The memories of a pending scan at least `min_similarity` close to the query, closest first."""
        from concurrent.futures import TimeoutError as FuturesTimeout

        try:
            found = pending.result(timeout=QUERY_EMBED_TIMEOUT_S + 0.25)
        except FuturesTimeout:
            return []  # recall answers from words rather than hold up the prompt
        except Exception as exc:  # a failing scan must leave recall working on words
            log.warning("recall by meaning failed: %s", exc)
            return []
        if found is None:
            return []
        hits = self.store.vectors.pick(found, project.id if project else None, RECALL_MAX_MEMORIES)
        close = [hit.memory_id for hit in hits if 1.0 - hit.distance >= min_similarity]
        return [
            RecallRow(str(m.type), m.title, m.body, str(m.source), m.last_confirmed_at, m.flagged)
            for m in self.store.memories.get_many(close, files=False)
        ]

    # --- change ------------------------------------------------------------------------------------------------
    def edit(
        self,
        project: Project | None,
        memory_id: str,
        *,
        title: str | None = None,
        body: str | None = None,
        type: str | None = None,
        actor: Source = Source.USER,
    ) -> Memory:
        """Change a memory's title, body or type; only the user may change what the user wrote."""
        memory = self.get(project, memory_id)
        require_may_change(memory.source, actor, "Only the user can change a memory they wrote.")
        fields: dict[str, object] = {}
        if title is not None:
            fields["title"] = _clean(rules.check_title(title), TITLE_MAX_CHARS)
        if body is not None:
            fields["body"] = _clean(rules.check_body(body), BODY_MAX_CHARS)
        if type is not None:
            fields["type"] = str(rules.check_type(type))
        if not fields:
            raise ValidationError("Nothing to change: give a new title, body or type.")
        changed = {k: v for k, v in fields.items() if getattr(memory, k) != v and str(getattr(memory, k)) != v}
        if not changed:
            return memory
        if "title" in changed or "body" in changed:
            text = f"{changed.get('title', memory.title)}\n{changed.get('body', memory.body)}"
            changed["flagged"] = int(looks_like_instructions(text))
        with self.store.db.transaction():
            self.store.memories.update_fields(memory.id, {**changed, "updated_at": self.clock()})
            self.audit(str(actor), "memory.edit", memory.id, memory.project_id, metadata={"fields": sorted(changed)})
        if "title" in changed or "body" in changed:
            self.store.db.erase_old_pages()  # the old text's page versions leave the WAL
            self.vectors_changed([memory.id])
        return self.get(project, memory.id)

    def feedback(self, project: Project | None, memory_id: str, verdict: str, *, actor: Source = Source.USER) -> Memory:
        """helpful: one CONFIDENCE_STEP more and the age reset; wrong: retracted; stale: stale.

        Raises:
            OwnershipError: someone other than the user marks a user's memory wrong or stale.
        """
        checked = rules.check_verdict(verdict)
        memory = self.get(project, memory_id)
        if checked is not Verdict.HELPFUL:  # anyone may find a memory helpful
            require_may_change(memory.source, actor, "Only the user can retract a memory they wrote, or mark it stale.")
        now = self.clock()
        with self.store.db.transaction():
            if checked is Verdict.HELPFUL:
                self.store.memories.mark_helpful(memory.id, confidence_step=CONFIDENCE_STEP, now=now)
            else:
                status = Status.RETRACTED if checked is Verdict.WRONG else Status.STALE
                self.store.memories.update_fields(memory.id, {"status": str(status), "updated_at": now})
            self.audit(str(actor), f"memory.feedback.{checked}", memory.id, memory.project_id)
        return self.get(project, memory.id)

    def forget(self, project: Project | None, memory_id: str, *, actor: Source = Source.USER) -> Memory:
        """Delete a memory: its row, full-text entry, files and vector. Returns what was deleted."""
        memory = self.get(project, memory_id)
        require_may_change(memory.source, actor, "Only the user can delete a memory they wrote.")
        with self.store.db.transaction():
            self.store.memories.delete(memory.id)
            # No text in the audit row: forgetting a memory that holds a secret must leave no copy of it.
            self.audit(str(actor), "memory.forget", memory.id, memory.project_id)
        self.store.db.erase_old_pages()
        return memory

    def export(self, project: Project | None, memory_id: str, file_name: str, root: Path) -> tuple[Path, bool]:
        """Add a memory to `root`/CLAUDE.md or AGENTS.md; returns the file and whether it changed."""
        memory = self.get(project, memory_id)
        target, changed = export_bullet(root, file_name, bullet_for(memory.title, memory.body))
        if changed:
            self.audit("user", "memory.export", memory.id, memory.project_id, metadata={"file": str(target)})
        return target, changed

    # --- helpers -----------------------------------------------------------------------------------------------
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

    def audit(
        self,
        actor: str,
        action: str,
        memory_id: str | None = None,
        project_id: str | None = None,
        metadata: dict[str, object] | None = None,
        decision: str | None = None,
    ) -> None:
        """Append one audit row (who did what to which memory, and what was decided)."""
        self.store.audit.add(
            at=self.clock(),
            actor=actor,
            action=action,
            resource_type="memory" if memory_id else None,
            resource_id=memory_id,
            project_id=project_id,
            decision=decision,
            metadata=metadata,
        )


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
        statuses=tuple(str(rules.check_status(s)) for s in flt.statuses),
        scopes=tuple(str(rules.check_scope(s)) for s in flt.scopes),
    )
