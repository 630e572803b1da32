"""The permission flow of an agent's memory writes: decide, ask the person, keep grants, audit.

Every write goes through it: `permissions.decide` (the one policy) says allow, deny or ask; an ask goes to the
host's `ask` callback, and "allow for this session / workspace" answers are stored as grants. Every decision is
audited.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Required, TypedDict

from orcmem.models.errors import MemoryOffError, PermissionDenied
from orcmem.models.types import Project
from orcmem.models.vocabulary import Answer, Mode, values
from orcmem.rules.permissions import DECLINED, HEADLESS_REFUSAL, Decision, PolicyVerdict, auto_review, decide
from orcmem.service.core import MEMORY_OFF_MESSAGE
from orcmem.service.memory_service import MemoryService
from orcmem.store.grants import GrantRepository

Ask = Callable[[str], str | None]  # returns an Answer, or None when no one could be asked after all


class Flow(TypedDict, total=False):
    """The keyword arguments of `Approvals` (a session's permission flow), as `AgentTools` takes them on."""

    mode: Required[Mode | str]
    headless: Required[bool]
    auto_approve: Required[bool]
    session_id: Required[str]
    ask: Ask | None
    grants: GrantRepository | None
    answers_from_person: bool


WRITE_ACTION = "memory_write"  # the one permission every memory write asks for (the action grants name)
ANSWERS: tuple[str, ...] = values(Answer)
DUPLICATE_JACCARD = 0.8  # word-set overlap at which auto review calls a new memory a near-duplicate
DUPLICATE_CANDIDATES = 10

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class PlannedWrite:
    """A validated write, ready for the permission check."""

    tool: str
    reason: str  # one line for the audit log and the agent, e.g. "Save to project memory: <title>"
    detail: str = ""  # what the user sees below the reason when asked
    memory_id: str | None = None
    review_text: str = ""  # what auto review reads for secrets and instructions
    duplicate_of: tuple[str, str] | None = None  # (title, body) to check for near-duplicates in auto mode
    exclude_id: str | None = None  # the memory being changed is not its own duplicate
    global_scope: bool = False  # it writes a memory every project sees: no grant of one project covers it


def _normalized_title(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


class Approvals:
    """One agent session's permission flow in one project, with its mode and its way of asking the person; every
    write asks here first (`AgentTools.approvals`)."""

    def __init__(
        self,
        memory: MemoryService,
        project: Project,
        *,
        mode: Mode | str,
        headless: bool,
        auto_approve: bool,
        session_id: str,
        ask: Ask | None = None,
        grants: GrantRepository | None = None,
        answers_from_person: bool = True,
    ) -> None:
        """Bind the flow to a service and the project derived from the host's working folder.

        Args:
            memory: the memory service.
            project: the session's project (its canonical root); the agent never chooses it.
            mode: the session's permission mode.
            headless: no one can be asked (no elicitation, no terminal).
            auto_approve: the user allowed writes that would otherwise need a question nobody can answer.
            session_id: this session's id; "allow for this session" grants are tied to it.
            ask: asks the user and returns once, session, workspace or deny; None when no one can be asked.
            grants: where grants live (default: the service's database).
            answers_from_person: whether `ask` reaches the person (a local agent's UI); over HTTP any client holding
                the key could answer, so its answers allow one call and are audited as the client's.
        """
        self.memory = memory
        self.project = project
        self.mode = Mode(mode)
        self.headless = headless
        self.auto_approve = auto_approve
        self.session_id = session_id
        self.ask = ask
        self.grants = grants or memory.store.grants
        self.answers_from_person = answers_from_person

    def is_enabled(self) -> bool:
        """Whether memory is on now (it can be switched while a session runs)."""
        return self.memory.is_enabled()

    def require_enabled(self) -> None:
        """Raise MemoryOffError while memory is off."""
        if not self.memory.is_enabled():
            raise MemoryOffError(MEMORY_OFF_MESSAGE)

    # --- the permission flow -----------------------------------------------------------------------------------
    def verdict(self, write: PlannedWrite, *, can_ask: bool) -> PolicyVerdict:
        """What the one policy says of this write, asking no one."""
        review = None
        if self.mode is Mode.AUTO:
            duplicate = self._near_duplicate(write) if write.duplicate_of is not None else None
            review = auto_review(write.review_text, near_duplicate_of=duplicate)
        return decide(
            self.mode,
            write=True,
            headless=self.headless or not can_ask,
            auto_approve=self.auto_approve,
            granted=self._granted(write),
            review=review,
        )

    def _granted(self, write: PlannedWrite) -> bool:
        """Whether an earlier grant answers for this write: only in a session someone could be asked in (a grant
        never stands in for --auto-approve), and only for this project's memory (never one every project sees)."""
        if self.headless or write.global_scope:
            return False
        return self.grants.covers(WRITE_ACTION, self.project.id, self.session_id)

    def authorize(self, write: PlannedWrite) -> None:
        """Allow the write or raise PermissionDenied; the decision is audited either way."""
        verdict = self.verdict(write, can_ask=self.ask is not None)
        answer: str | None = None
        if verdict.decision is Decision.ASK:
            assert self.ask is not None
            raw = self.ask(self.question(write))
            answer = raw if raw in ANSWERS else ("deny" if raw is not None else None)
            if answer is None:
                verdict = PolicyVerdict(Decision.DENY, HEADLESS_REFUSAL, "headless")
            elif answer == "deny":
                verdict = PolicyVerdict(Decision.DENY, DECLINED, "user")
            else:
                if answer != "once" and not self.answers_from_person:
                    answer = "once"  # a client's own answer is no grant: only the person's can last
                if answer != "once" and not write.global_scope:
                    self.grants.add(WRITE_ACTION, self.project.id, answer, self.session_id, self.memory.clock())
                label = "once" if answer == "once" or write.global_scope else f"for this {answer}"
                who, policy = ("the user", "user") if self.answers_from_person else ("the HTTP client", "client")
                verdict = PolicyVerdict(Decision.ALLOW, f"Allowed by {who} ({label}).", policy)
        metadata: dict[str, object] = {
            "tool": write.tool,
            "mode": str(self.mode),
            "policy": verdict.policy,
            "reason": write.reason,
            "session": self.session_id,
        }
        if answer is not None:
            metadata["answer"] = answer
        self.memory.audit(
            "agent",
            f"permission.{verdict.decision}",
            write.memory_id,
            self.project.id,
            metadata=metadata,
            decision=str(verdict.decision),
        )
        if verdict.decision is not Decision.ALLOW:
            raise PermissionDenied(verdict.reason)

    @staticmethod
    def question(write: PlannedWrite) -> str:
        """What the person is asked about a write."""
        detail = f"\n\n{write.detail}" if write.detail else ""
        return f"An agent asks to change project memory.\n{write.reason}{detail}"

    def _near_duplicate(self, write: PlannedWrite) -> str | None:
        """The id of an active memory saying nearly the same: an equal title, or ≥ 0.8 word overlap."""
        assert write.duplicate_of is not None
        title, body = write.duplicate_of
        wanted_title = _normalized_title(title)
        wanted_words = _words(f"{title} {body}")
        for hit in self.memory.search.hits(self.project, f"{title} {body}", DUPLICATE_CANDIDATES):
            found = hit.memory
            if found.id == write.exclude_id:
                continue
            same_title = bool(wanted_title) and _normalized_title(found.title) == wanted_title
            if same_title or _jaccard(wanted_words, _words(f"{found.title} {found.body}")) >= DUPLICATE_JACCARD:
                return found.id
        return None
