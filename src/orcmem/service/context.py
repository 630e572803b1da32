"""What an agent is given: the brief at session start and recall before each prompt (one pipeline for the hook,
the CLI and MCP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orcmem.agent_context.brief import build_brief
from orcmem.agent_context.recall import format_recall, memory_row, merge_recall, recall_by_words, recall_match
from orcmem.agent_context.tool_recall import tool_call_rows
from orcmem.models.constants import (
    BRIEF_MAX_CHARS,
    BRIEF_MEMORY_POOL,
    BRIEF_SUMMARIES,
    BRIEF_TASKS,
    CONTEXT_BUDGET_TOKENS_DEFAULT,
    RECALL_CANDIDATES,
    RECALL_MAX_MEMORIES,
    RECALL_MIN_SIMILARITY,
    RECALL_RRF_K,
    SETTING_CONTEXT_BUDGET,
    WARM_RECALL_MIN_TERM_SHARE,
)
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryFilter, Project
from orcmem.service.core import ServiceCore
from orcmem.service.search import Search
from orcmem.service.settings import Settings
from orcmem.store.recall import RecallRow, word_candidates

if TYPE_CHECKING:
    from concurrent.futures import Future

    from orcmem.store.vectors import Scan


class AgentContext:
    """The brief and recall (`service.context`): what memory gives an agent, fenced as reference material."""

    def __init__(self, core: ServiceCore, settings: Settings, search: Search) -> None:
        """The brief and recall over the service's store, its settings (who is asking) and its search."""
        self.core = core
        self.store = core.store
        self.settings = settings
        self.search = search

    def session_budget(self) -> int:
        """The tokens (estimated as characters / CHARS_PER_TOKEN) the brief and every recall of one session may add
        together; the default when unset or unreadable."""
        raw = self.store.settings.get(SETTING_CONTEXT_BUDGET)
        try:
            value = int(raw) if raw is not None else CONTEXT_BUDGET_TOKENS_DEFAULT
        except ValueError:
            return CONTEXT_BUDGET_TOKENS_DEFAULT
        return value if value >= 0 else CONTEXT_BUDGET_TOKENS_DEFAULT

    def set_session_budget(self, tokens: int) -> int:
        """Set a session's context budget in tokens (0 gives nothing at all), audited.

        Raises:
            ValidationError: not a whole number from 0 to 1,000,000.
        """
        if isinstance(tokens, bool) or not isinstance(tokens, int) or not 0 <= tokens <= 1_000_000:
            raise ValidationError("A session's context budget is a whole number of tokens from 0 to 1,000,000.")
        with self.store.db.transaction():
            self.store.settings.set(SETTING_CONTEXT_BUDGET, str(tokens))
            self.core.audit("user", "settings.context_budget", metadata={"tokens": tokens})
        return tokens

    def brief(self, project: Project | None, max_chars: int = BRIEF_MAX_CHARS) -> str:
        """The project brief for a new session, at most `max_chars` characters (before its fence); "" when memory is
        off or nothing is stored."""
        if project is None or not self.core.is_enabled():
            return ""
        memories = self.store.memories.list(project.id, MemoryFilter(statuses=("active",), limit=BRIEF_MEMORY_POOL))
        tasks = self.store.tasks.open_titles(project.id, BRIEF_TASKS)
        items = [
            item for summary in self.store.summaries.recent(project.id, BRIEF_SUMMARIES) for item in summary.open_items
        ]
        replaced = self.store.links.replaced_texts([memory.id for memory in memories])
        return build_brief(
            memories, tasks, items, self.core.clock(), self.settings.own_ids(), max_chars, replaced=replaced
        )

    def recall(self, canonical_root: str, prompt: str, *, meaning: bool = False) -> str:
        """The memories that match a prompt, fenced as reference material; "" when off or nothing matches.

        With `meaning`, memories whose cosine similarity to the prompt reaches RECALL_MIN_SIMILARITY join those the
        words found, so a prompt that says the same thing in other words is answered too. Only a process whose
        model has already loaded (the MCP server) uses it: recall never waits for a model. (`recall_rows` takes
        another threshold.)
        """
        rows = self.recall_rows(canonical_root, prompt, meaning=meaning)
        return format_recall(rows, self.core.clock()) if rows else ""

    def recall_rows(
        self,
        canonical_root: str,
        prompt: str,
        *,
        meaning: bool = False,
        min_similarity: float = RECALL_MIN_SIMILARITY,
        limit: int = RECALL_MAX_MEMORIES,
    ) -> list[RecallRow]:
        """What `recall` frames, best first (`limit` of them: a session's recall reads more, to pass over those it
        already gave).

        Words alone: the matches that pass the relevance gate. With `meaning` (a process whose model has loaded):
        the memories at least `min_similarity` close to the prompt, fused with the word matches, which count
        ungated when meaning found something (the prompt is about the project) and must pass the stricter
        WARM_RECALL_MIN_TERM_SHARE gate when it found nothing.
        """
        match = recall_match(prompt)
        if match is None:
            return []
        project = self.store.projects.by_root(canonical_root) if meaning else None
        pending = (
            self.search.nearest_soon(project, prompt, RECALL_CANDIDATES)
            if meaning and self.core.model_ready()
            else None
        )
        if pending is None:
            return recall_by_words(self.store.db.path, canonical_root, prompt, limit) or []
        found = word_candidates(
            self.store.db.path, canonical_root, match, RECALL_CANDIDATES, share=WARM_RECALL_MIN_TERM_SHARE
        )
        if found is None:  # memory is off, or the database is from another version
            pending.cancel()
            return []
        by_words, relevant = found
        by_meaning = self._close_in_meaning(project, pending, min_similarity, RECALL_CANDIDATES)
        if not by_meaning and not relevant:
            return []
        return merge_recall(by_words, by_meaning, RECALL_RRF_K)[:limit]

    def tool_call_rows(
        self, canonical_root: str, worktree_root: str, tool_name: str, tool_input: JsonObject, cwd: str
    ) -> list[RecallRow]:
        """The memories a tool call concerns (the files it touches, its command), best first; [] when off."""
        db_path = str(self.store.db.path)
        return tool_call_rows(db_path, canonical_root, worktree_root, tool_name, tool_input, cwd) or []

    def _close_in_meaning(
        self, project: Project | None, pending: Future[Scan | None], min_similarity: float, limit: int
    ) -> list[RecallRow]:
        """The memories of a pending scan at least `min_similarity` close to the query, closest first (recall
        answers from words alone when the scan is late or fails)."""
        close = [(m, similarity) for m, similarity in self.search.meaning_hits(project, pending, limit)]
        replaced = self.store.links.replaced_texts([m.id for m, similarity in close if similarity >= min_similarity])
        return [memory_row(m, replaced.get(m.id)) for m, similarity in close if similarity >= min_similarity]
