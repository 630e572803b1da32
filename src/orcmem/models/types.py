"""Enums and dataclasses shared by every layer."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

from orcmem.models.data_shapes import JsonObject


class MemoryType(StrEnum):
    """What kind of knowledge a memory holds: ten kinds (docs/learning.md)."""

    DECISION = "decision"
    SPEC = "spec"
    LESSON = "lesson"
    PREFERENCE = "preference"
    CONVENTION = "convention"
    COMMAND = "command"
    ENV_QUIRK = "env_quirk"
    OWNERSHIP = "ownership"
    FACT = "fact"
    WORKFLOW = "workflow"


class Scope(StrEnum):
    """Where a memory applies: one project, or every project on this machine."""

    PROJECT = "project"
    GLOBAL = "global"


class Source(StrEnum):
    """Who saved a memory."""

    USER = "user"
    AGENT = "agent"
    EXTRACTION = "extraction"
    TOOL = "tool"


class Provenance(StrEnum):
    """Where a memory's words came from (docs/security.md, Untrusted text): how far a later reader may trust them."""

    PERSON = "person"  # written by a person: the CLI, the Memory page
    USER_WORDS = "user_words"  # distilled from the user's own words in a run
    AGENT = "agent"  # an agent's own claim (MCP memory_record): not a person's word, whatever it says
    TOOL_TEXT = "tool_text"  # derived from tool output, a file or a web page read during a run
    TEAMMATE = "teammate"  # a person's memory pulled from the team pool, written by another person


# The provenance of a write that names none, by who saved it; a distilled memory defaults to the safer tool_text.
DEFAULT_PROVENANCE: dict[Source, Provenance] = {
    Source.USER: Provenance.PERSON,
    Source.AGENT: Provenance.AGENT,
    Source.EXTRACTION: Provenance.TOOL_TEXT,
    Source.TOOL: Provenance.TOOL_TEXT,
}


_PROVENANCES = {member.value: member for member in Provenance}
_DEFAULT_BY_SOURCE = {source.value: provenance for source, provenance in DEFAULT_PROVENANCE.items()}


def provenance_seen_by(stored: str | None, source: str, author: str | None, person: str | None) -> Provenance:
    """A team memory's provenance as a profile keeps it: its writer's (the one its source implies when the server
    holds none, from before the field), and `teammate` for a person's words that another person wrote."""
    found = _PROVENANCES.get(stored or "") or _DEFAULT_BY_SOURCE.get(source, Provenance.TOOL_TEXT)
    if found in (Provenance.PERSON, Provenance.USER_WORDS) and author is not None and author != person:
        return Provenance.TEAMMATE
    if found is Provenance.TEAMMATE and author is not None and author == person:
        return Provenance.PERSON  # one's own memory, marked by a teammate's copy that could not know better
    return found


# Most trusted first: a change that mixes two writers' words keeps the less trusted provenance of the two.
_TRUST_ORDER = (Provenance.PERSON, Provenance.USER_WORDS, Provenance.TEAMMATE, Provenance.AGENT, Provenance.TOOL_TEXT)


def least_trusted(first: Provenance, second: Provenance) -> Provenance:
    """The less trusted of two provenances."""
    return max(first, second, key=_TRUST_ORDER.index)


class Status(StrEnum):
    """A memory's standing: only active memories are searched, briefed and recalled."""

    ACTIVE = "active"
    STALE = "stale"
    RETRACTED = "retracted"
    PENDING = "pending"  # learned, waiting in the review inbox (docs/learning.md); seen only by the person reviewing
    SUPERSEDED = "superseded"  # replaced by a newer memory: kept as history, linked to its successor


class Relation(StrEnum):
    """How a new memory stands to an existing one under another topic key (docs/learning.md, Contradictions)."""

    REPLACES = "replaces"  # the old one is superseded
    REFINES = "refines"  # both stay active, linked
    CONFLICTS = "conflicts"  # both stay visible until someone settles it


class Verdict(StrEnum):
    """Feedback on a memory."""

    HELPFUL = "helpful"
    WRONG = "wrong"
    STALE = "stale"


@dataclass(frozen=True, slots=True)
class Project:
    """A project, identified by its canonical root (the git common dir, or the resolved folder)."""

    id: str
    canonical_root: str
    root_path: str
    name: str
    created_at: int
    last_seen_at: int

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON output."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory; times are milliseconds since the epoch."""

    id: str
    scope: Scope
    project_id: str | None
    type: MemoryType
    topic_key: str | None
    title: str
    body: str
    confidence: float
    status: Status
    source: Source
    source_run_id: str | None
    source_task_id: str | None
    evidence_count: int
    files: tuple[str, ...]
    created_at: int
    updated_at: int
    last_confirmed_at: int
    origin_root: str | None = None
    flagged: bool = False
    author: str | None = None  # the person it was written by or for (docs/team.md)
    author_agent: str | None = None  # the agent that wrote it on their behalf; None when the person did
    stale_reason: str | None = None  # why the code it cites may have moved on (docs/freshness.md); None: it has not
    provenance: Provenance = Provenance.TOOL_TEXT  # where its words came from; the least trusted when unknown

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON output, enums as strings and files as a list."""
        data = asdict(self)
        data["files"] = list(self.files)
        for key in ("scope", "type", "status", "source", "provenance"):
            data[key] = str(data[key])
        return data


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a caller asks to record; the service validates, redacts and normalises it."""

    type: str
    title: str
    body: str
    source: Source
    topic_key: str | None = None
    scope: Scope = Scope.PROJECT
    confidence: float | None = None
    files: tuple[str, ...] = ()
    source_run_id: str | None = None
    source_task_id: str | None = None
    provenance: Provenance | None = None  # None: DEFAULT_PROVENANCE of the source


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The memory as stored, and whether the write merged into an existing one."""

    memory: Memory
    merged: bool
    candidates: tuple[Memory, ...] = ()  # active memories under other topic keys it may contradict
    relation: Relation | None = None  # the relation stored with `related_id`, after the ownership rule
    related_id: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryLink:
    """A stored relation from a newer memory to an older one, with when and by whom; `open` for an unsettled
    conflict."""

    from_id: str
    from_title: str
    to_id: str
    to_title: str
    relation: Relation
    at: int
    by: str
    open: bool = False
    settled_at: int | None = None
    settled_by: str | None = None
    project_id: str | None = None
    person: str | None = None  # the teammate who stated it, for a link from the team pool (None: this profile's)

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON output."""
        data = asdict(self)
        data["relation"] = str(self.relation)
        return data


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Filters for listing memories; empty tuples mean no filter."""

    types: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    provenances: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    limit: int = 200
    offset: int = 0


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """Each factor of a search score, for --explain."""

    word_rank: int | None
    meaning_rank: int | None
    fused: float
    type_weight: float
    confidence_factor: float
    recency_factor: float
    score: float
    freshness_factor: float = 1.0  # POSSIBLY_STALE_FACTOR when the code it cites moved on
    word_score: float | None = None  # BM25 relevance of the words (higher is better), when the words found it
    similarity: float | None = None  # cosine similarity to the query, when meaning found it


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A memory found by search, with its score and how it was made."""

    memory: Memory
    score: float
    parts: ScoreParts


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """Memory settings as stored."""

    enabled: bool
    provider: str
    models: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON output."""
        return asdict(self)


def new_memory_id() -> str:
    """A fresh public memory id: `mem_` and 32 lowercase hex characters from 128 random bits."""
    import secrets

    return "mem_" + secrets.token_hex(16)
