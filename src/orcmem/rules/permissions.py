"""One policy for every write an agent asks for (record, feedback, manage), whichever entry point it comes through."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from enum import StrEnum

from orcmem.models.errors import OwnershipError
from orcmem.models.types import Source
from orcmem.models.vocabulary import Mode
from orcmem.text.instructions import looks_like_instructions
from orcmem.text.redact import redact_text


class Decision(StrEnum):
    """What happens to a write."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class PolicyVerdict:
    """A decision and the sentence that explains it to the agent (and the audit log)."""

    decision: Decision
    reason: str
    policy: str


def may_change(owner: Source, actor: Source) -> bool:
    """The ownership rule: only the person changes, retracts or deletes what the person wrote."""
    return owner is not Source.USER or actor is Source.USER


def require_may_change(
    owner: Source, actor: Source, refusal: str, *, author: str | None = None, own: Collection[str] | None = None
) -> None:
    """Raise OwnershipError(`refusal`) when `actor` may not change a memory `owner` wrote; and, across a team, when
    the memory is another person's own (`author`, none of this profile's person's ids `own`): only they overrule
    themselves. Every id the person has written as counts (root@host before git's email was set, then the email)."""
    if not may_change(owner, actor):
        raise OwnershipError(refusal)
    if owner is Source.USER and author is not None and own is not None and author not in own:
        raise OwnershipError(f"{author} wrote this memory; only they can change, retract or delete it.")


# Claude Code's permission_mode (hook input) -> orcmem's mode.
CLAUDE_MODES: dict[str, Mode] = {
    "plan": Mode.PLAN,
    "default": Mode.REVIEW,
    "acceptEdits": Mode.ACCEPT_EDITS,
    "auto": Mode.AUTO,
    "dontAsk": Mode.AUTO,
    "bypassPermissions": Mode.YOLO,
}

PLAN_REFUSAL = "Changing project memory is refused in plan mode. Put the finding in the plan instead."
HEADLESS_REFUSAL = (
    "Changing project memory needs the user's approval, and no one can be asked here. "
    "Run with --auto-approve (or choose the accept-edits or autonomous mode) to allow it."
)
DECLINED = "The user declined this change to project memory."


def auto_review(text: str, *, near_duplicate_of: str | None = None) -> PolicyVerdict:
    """The automatic review of `auto` mode: refuse secrets, instructions to the agent, and near-duplicates."""
    redaction = redact_text(text)
    if redaction.changed:
        rules = ", ".join(redaction.rules)
        return PolicyVerdict(Decision.DENY, f"Refused by automatic review: the text holds a secret ({rules}).", "auto")
    if looks_like_instructions(text):
        return PolicyVerdict(
            Decision.DENY,
            "Refused by automatic review: the text reads as instructions to an agent, not a fact about the project.",
            "auto",
        )
    if near_duplicate_of is not None:
        return PolicyVerdict(
            Decision.DENY,
            f"Refused by automatic review: memory {near_duplicate_of} already says nearly the same. "
            "Give it feedback or update it instead.",
            "auto",
        )
    return PolicyVerdict(Decision.ALLOW, "Allowed by automatic review.", "auto")


def decide(
    mode: Mode,
    *,
    write: bool,
    headless: bool = False,
    auto_approve: bool = False,
    granted: bool = False,
    review: PolicyVerdict | None = None,
) -> PolicyVerdict:
    """Decide one request. Reads are always allowed; ownership rules are checked by the service in every mode.

    Args:
        mode: the session's mode.
        write: whether the request changes memory.
        headless: no one can be asked (no elicitation, no terminal).
        auto_approve: the user allowed headless writes (`--auto-approve`).
        granted: an earlier "allow for this session / workspace" covers this request.
        review: the automatic review's verdict, required in `auto` mode.
    """
    if not write:
        return PolicyVerdict(Decision.ALLOW, "Reading memory is always allowed.", "read")
    if mode is Mode.PLAN:
        return PolicyVerdict(Decision.DENY, PLAN_REFUSAL, "plan")
    if mode is Mode.YOLO:
        return PolicyVerdict(Decision.ALLOW, "Allowed without checks (yolo mode).", "yolo")
    if mode in (Mode.ACCEPT_EDITS, Mode.AUTONOMOUS):
        return PolicyVerdict(Decision.ALLOW, f"Allowed in {mode} mode.", str(mode))
    if mode is Mode.AUTO:
        if review is None:
            raise ValueError("auto mode needs the automatic review's verdict")
        return review
    # review mode
    if granted:
        return PolicyVerdict(Decision.ALLOW, "Allowed by an earlier grant.", "grant")
    if headless:
        if auto_approve:
            return PolicyVerdict(Decision.ALLOW, "Allowed by --auto-approve.", "auto-approve")
        return PolicyVerdict(Decision.DENY, HEADLESS_REFUSAL, "headless")
    return PolicyVerdict(Decision.ASK, "The user is asked first (review mode).", "review")
