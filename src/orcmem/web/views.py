"""Words and numbers as the Memory page shows them: labels, relative times, page arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from urllib.parse import urlencode

from orcmem.extract.constants import DEFAULT_CLAUDE_MODEL_LABEL
from orcmem.models.constants import DEFAULT_GEMINI_MODEL, MS_PER_DAY, MS_PER_MINUTE
from orcmem.models.types import MemoryType, Provenance, Source, Status
from orcmem.models.vocabulary import Agent, ExtractionProvider, JobState

PAGE_SIZE = 25

TYPE_LABELS = {
    MemoryType.DECISION: "Decision",
    MemoryType.LESSON: "Lesson",
    MemoryType.COMMAND: "Command",
    MemoryType.ENV_QUIRK: "Env quirk",
    MemoryType.CONVENTION: "Convention",
    MemoryType.PREFERENCE: "Preference",
    MemoryType.SPEC: "Spec",
    MemoryType.OWNERSHIP: "Ownership",
    MemoryType.FACT: "Fact",
    MemoryType.WORKFLOW: "Workflow",
}
SOURCE_LABELS = {
    Source.AGENT: "Saved by an agent",
    Source.EXTRACTION: "Learned after a run",
    Source.USER: "Saved by you",
    Source.TOOL: "Saved by a tool",
}
# Where a memory's words came from (docs/security.md, Untrusted text): a badge on each card and a filter.
PROVENANCE_LABELS = {
    Provenance.PERSON: "Written by a person",
    Provenance.USER_WORDS: "From the user's words",
    Provenance.AGENT: "An agent's own words",
    Provenance.TOOL_TEXT: "From tool output",
    Provenance.TEAMMATE: "From a teammate",
}
STATUS_LABELS = {
    Status.ACTIVE: "Active",
    Status.STALE: "Stale",
    Status.RETRACTED: "Retracted",
    Status.PENDING: "Waiting for review",
    Status.SUPERSEDED: "Superseded",
}
JOB_STATE_LABELS = {
    JobState.QUEUED: "Queued",
    JobState.RUNNING: "Running",
    JobState.DONE: "Done",
    JobState.FAILED: "Failed",
    JobState.SKIPPED: "Skipped",
}
PROVIDER_OPTIONS = (
    (ExtractionProvider.AUTO, "Automatic", "each run is summarized by the agent that ran it"),
    (ExtractionProvider.CLAUDE, "Claude Code", "your Claude Code subscription"),
    (ExtractionProvider.CODEX, "Codex", "your Codex subscription"),
    (ExtractionProvider.GEMINI, "Gemini CLI", "your Gemini CLI sign-in or key"),
    (ExtractionProvider.OPENCODE, "OpenCode", "the model and provider OpenCode is set up with"),
    (ExtractionProvider.APIKEY, "Anthropic API key", "billed to your API key"),
    (ExtractionProvider.OFF, "Off", "no background learning; agents can still save memories"),
)
MODEL_DEFAULT_LABELS = {
    Agent.CLAUDE: DEFAULT_CLAUDE_MODEL_LABEL,
    Agent.CODEX: "the account's default Codex model",
    Agent.GEMINI: DEFAULT_GEMINI_MODEL,
    Agent.OPENCODE: "OpenCode's configured model",
}

_MINUTE = MS_PER_MINUTE
_HOUR = 60 * MS_PER_MINUTE
_DAY = MS_PER_DAY


def relative_time(ms: int, now: int) -> str:
    """`just now`, `5 min ago`, `3 h ago`, `yesterday`, `4 days ago`, `2 months ago`, `1 year ago`."""
    delta = now - ms
    if delta < _MINUTE:
        return "just now"
    if delta < _HOUR:
        return f"{delta // _MINUTE} min ago"
    if delta < _DAY:
        return f"{delta // _HOUR} h ago"
    days = delta // _DAY
    if days == 1:
        return "yesterday"
    if days < 30:
        return f"{days} days ago"
    if days < 365:
        months = max(1, round(days / 30.4))
        return f"{months} month{'s' if months > 1 else ''} ago"
    years = int(days // 365)
    return f"{years} year{'s' if years > 1 else ''} ago"


def local_zone(offset_ms: int) -> timezone:
    """A fixed time zone `offset_ms` ahead of UTC."""
    return timezone(timedelta(milliseconds=offset_ms))


def iso_time(ms: int) -> str:
    """The moment as ISO 8601 in UTC, for `<time datetime>`."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def full_time(ms: int, offset_ms: int = 0) -> str:
    """The moment for a tooltip: `2027-01-15 08:00`."""
    return datetime.fromtimestamp(ms / 1000, local_zone(offset_ms)).strftime("%Y-%m-%d %H:%M")


def with_query(path: str, **params: object) -> str:
    """`path` with the non-empty parameters as a query string."""
    kept = {key: value for key, value in params.items() if value not in (None, "", 0, False)}
    return f"{path}?{urlencode(kept)}" if kept else path


def safe_next(value: object, default: str = "/") -> str:
    """A same-site path to go back to after an action; anything else (another host, `//x`, `\\x`) is the default."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text or any(ord(c) < 32 for c in text):
        return default
    return text


@dataclass(frozen=True, slots=True)
class Pages:
    """Which slice of a result list a page shows."""

    page: int  # 1-based, clamped to the pages there are
    total: int

    @property
    def count(self) -> int:
        """How many pages there are (at least one)."""
        return max(1, -(-self.total // PAGE_SIZE))

    @property
    def start(self) -> int:
        """Offset of the page's first item."""
        return (self.page - 1) * PAGE_SIZE

    @property
    def first(self) -> int:
        """1-based number of the page's first item (0 when empty)."""
        return self.start + 1 if self.total else 0

    @property
    def last(self) -> int:
        """1-based number of the page's last item."""
        return min(self.total, self.start + PAGE_SIZE)

    @classmethod
    def clamp(cls, page: int, total: int) -> Pages:
        """The asked page, or the last one when it is past the end (say, after deleting its last memory)."""
        pages = cls(1, total)
        return cls(min(max(1, page), pages.count), total)


def count_line(pages: Pages, searching: bool) -> str:
    """`25 saved memories`, `26–50 of 60 saved memories`, `3 matching memories`."""
    word = "matching" if searching else "saved"
    noun = "memory" if pages.total == 1 else "memories"
    if pages.total <= PAGE_SIZE:
        return f"{pages.total} {word} {noun}"
    return f"{pages.first}\u2013{pages.last} of {pages.total} {word} {noun}"


# The Runs page's cost totals: the period and its heading.
COST_PERIODS = (("day", "Today"), ("week", "This week"), ("month", "This month"), ("all", "All time"))
