"""One policy for every write an agent asks for (record, feedback, manage), whichever entry point it comes through."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from orcmem.errors import OwnershipError
from orcmem.models.types import Source
from orcmem.models.vocabulary import Mode
from orcmem.redact import redact_text
from orcmem.textsafe import skeleton


class Decision(StrEnum):
    """What happens to a write."""

    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision and the sentence that explains it to the agent (and the audit log)."""

    decision: Decision
    reason: str
    policy: str


def may_change(owner: Source, actor: Source) -> bool:
    """The ownership rule: only the person changes, retracts or deletes what the person wrote."""
    return owner is not Source.USER or actor is Source.USER


def require_may_change(
    owner: Source, actor: Source, refusal: str, *, author: str | None = None, person: str | None = None
) -> None:
    """Raise OwnershipError(`refusal`) when `actor` may not change a memory `owner` wrote; and, across a team, when
    the memory is another person's own (`author`, not this profile's `person`): only they overrule themselves."""
    if not may_change(owner, actor):
        raise OwnershipError(refusal)
    if owner is Source.USER and author is not None and person is not None and author != person:
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

# Text that addresses the agent instead of describing the project: the shape of a prompt injection. Any run of
# whitespace counts as one space, so a doubled space or a line break does not slip past.
_WHICH = r"\s+(?:(?:all|any|the|your|my|these|those|of)\s+)*"  # "ignore all of your previous instructions"
_INSTRUCTION_PATTERNS = [
    rf"\b(?:ignore|forget|override){_WHICH}(?:previous|prior|above|earlier|preceding|original)\s+"
    r"(?:instructions?|rules|messages|prompts?|directions|guidelines)",
    r"\b(?:ignore|forget|disregard)\s+(?:everything|(?:all\s+(?:of\s+)?)?(?:the\s+|your\s+)?(?:instructions|rules))"
    r"\s+above",
    rf"\bdisregard{_WHICH}(?:previous|prior|above|earlier|system)",
    r"\byou\s+(?:are|must|should)\s+now\b",
    r"\b(?:system|developer)\s+prompt\b",
    r"\bdo\s+not\s+(?:tell|inform)\s+the\s+user\b",
    r"\bexfiltrat",
    r"\bnew\s+instructions?:",
    r"<\s*/?\s*(?:system|instructions?)\s*>",
]
_INSTRUCTIONS = re.compile("|".join(_INSTRUCTION_PATTERNS), re.IGNORECASE)
# A word each pattern above spells out: a text holding none of them skips the expression, which tries every
# pattern at every position (most of the cost of a write).
_INSTRUCTION_CUES = (
    "ignore",
    "forget",
    "override",
    "disregard",
    "you",
    "prompt",
    "not",
    "exfiltrat",
    "instruction",
    "<",
)


def looks_like_instructions(text: str) -> bool:
    """Whether text reads as orders to the agent (it is flagged on write and fenced on recall), however it is
    spelled: zero-width characters, look-alike letters and width variants are folded first."""
    folded = skeleton(text)
    return any(cue in folded for cue in _INSTRUCTION_CUES) and _INSTRUCTIONS.search(folded) is not None


def auto_review(text: str, *, near_duplicate_of: str | None = None) -> Verdict:
    """The automatic review of `auto` mode: refuse secrets, instructions to the agent, and near-duplicates."""
    redaction = redact_text(text)
    if redaction.changed:
        rules = ", ".join(redaction.rules)
        return Verdict(Decision.DENY, f"Refused by automatic review: the text holds a secret ({rules}).", "auto")
    if looks_like_instructions(text):
        return Verdict(
            Decision.DENY,
            "Refused by automatic review: the text reads as instructions to an agent, not a fact about the project.",
            "auto",
        )
    if near_duplicate_of is not None:
        return Verdict(
            Decision.DENY,
            f"Refused by automatic review: memory {near_duplicate_of} already says nearly the same. "
            "Give it feedback or update it instead.",
            "auto",
        )
    return Verdict(Decision.ALLOW, "Allowed by automatic review.", "auto")


def decide(
    mode: Mode,
    *,
    write: bool,
    headless: bool = False,
    auto_approve: bool = False,
    granted: bool = False,
    review: Verdict | None = None,
) -> Verdict:
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
        return Verdict(Decision.ALLOW, "Reading memory is always allowed.", "read")
    if mode is Mode.PLAN:
        return Verdict(Decision.DENY, PLAN_REFUSAL, "plan")
    if mode is Mode.YOLO:
        return Verdict(Decision.ALLOW, "Allowed without checks (yolo mode).", "yolo")
    if mode in (Mode.ACCEPT_EDITS, Mode.AUTONOMOUS):
        return Verdict(Decision.ALLOW, f"Allowed in {mode} mode.", str(mode))
    if mode is Mode.AUTO:
        if review is None:
            raise ValueError("auto mode needs the automatic review's verdict")
        return review
    # review mode
    if granted:
        return Verdict(Decision.ALLOW, "Allowed by an earlier grant.", "grant")
    if headless:
        if auto_approve:
            return Verdict(Decision.ALLOW, "Allowed by --auto-approve.", "auto-approve")
        return Verdict(Decision.DENY, HEADLESS_REFUSAL, "headless")
    return Verdict(Decision.ASK, "The user is asked first (review mode).", "review")
