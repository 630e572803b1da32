"""The review policy: which new memories wait in the inbox for a person, and which go straight in (docs/learning.md).

A project's policy holds memories by type and by confidence. Whatever it says, a memory whose words came from a tool,
a file or a web page (provenance `tool_text`) never goes straight in as a decision or a convention: text an agent
read is the easiest way to plant orders in its memory. A person's own writes are never held (writing one is
reviewing it); an agent's writes through MCP wait only when the policy says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from orcmem.models.constants import REVIEW_MIN_CONFIDENCE_DEFAULT
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryType, Provenance, Source

# Writers whose memories a policy may hold: distillation always, an agent's own writes when the policy says so.
REVIEWED_SOURCES: frozenset[Source] = frozenset({Source.EXTRACTION, Source.AGENT})
# Kinds that steer what an agent does next: from tool text, they always wait.
STEERING_TYPES: frozenset[MemoryType] = frozenset({MemoryType.DECISION, MemoryType.CONVENTION})


@dataclass(frozen=True, slots=True)
class ReviewPolicy:
    """One project's policy: types always held, the confidence under which a learned memory waits, everything
    waiting, and whether an agent's own writes (MCP) are held by the same rules."""

    hold_types: frozenset[MemoryType] = field(default_factory=frozenset)
    min_confidence: float = REVIEW_MIN_CONFIDENCE_DEFAULT
    all_wait: bool = False
    agent_writes: bool = False

    def to_json(self) -> str:
        """The policy as stored in the settings."""
        return json.dumps(
            {
                "hold_types": sorted(str(t) for t in self.hold_types),
                "min_confidence": self.min_confidence,
                "all_wait": self.all_wait,
                "agent_writes": self.agent_writes,
            },
            sort_keys=True,
        )

    def to_dict(self) -> dict[str, object]:
        """Plain dict for JSON output."""
        loaded: dict[str, object] = json.loads(self.to_json())
        return loaded


DEFAULT_POLICY = ReviewPolicy()


def check_min_confidence(value: float) -> float:
    """A confidence threshold between 0 and 1.

    Raises:
        ValidationError: it is outside 0..1 or not a number.
    """
    if not 0.0 <= value <= 1.0:  # NaN fails both comparisons
        raise ValidationError("The minimum confidence must be between 0 and 1.")
    return float(value)


def check_hold_type(name: str) -> MemoryType:
    """A memory type named in a policy.

    Raises:
        ValidationError: no such type.
    """
    try:
        return MemoryType(name)
    except ValueError as exc:
        kinds = ", ".join(t.value for t in MemoryType)
        raise ValidationError(f"Unknown memory type {name!r}; one of: {kinds}.") from exc


def policy_from_json(text: str | None) -> ReviewPolicy:
    """A stored policy; the default when none is stored or what is stored cannot be read (a clean fallback)."""
    if not text:
        return DEFAULT_POLICY
    try:
        data = json.loads(text)
        return ReviewPolicy(
            hold_types=frozenset(check_hold_type(str(t)) for t in data.get("hold_types", [])),
            min_confidence=check_min_confidence(float(data.get("min_confidence", REVIEW_MIN_CONFIDENCE_DEFAULT))),
            all_wait=bool(data.get("all_wait", False)),
            agent_writes=bool(data.get("agent_writes", False)),
        )
    except (ValueError, TypeError, AttributeError, ValidationError):
        return DEFAULT_POLICY


def changed_policy(
    policy: ReviewPolicy,
    *,
    hold: tuple[str, ...] = (),
    release: tuple[str, ...] = (),
    min_confidence: float | None = None,
    all_wait: bool | None = None,
    agent_writes: bool | None = None,
) -> ReviewPolicy:
    """The policy with these changes: types added to and taken from the held ones, a new threshold, the switches."""
    held = (set(policy.hold_types) | {check_hold_type(t) for t in hold}) - {check_hold_type(t) for t in release}
    return replace(
        policy,
        hold_types=frozenset(held),
        min_confidence=policy.min_confidence if min_confidence is None else check_min_confidence(min_confidence),
        all_wait=policy.all_wait if all_wait is None else all_wait,
        agent_writes=policy.agent_writes if agent_writes is None else agent_writes,
    )


def steers_from_tool_text(memory_type: MemoryType, provenance: Provenance) -> bool:
    """Whether a memory is a decision or convention whose words came from a tool, a file or a web page: one only a
    person may let in."""
    return provenance is Provenance.TOOL_TEXT and memory_type in STEERING_TYPES


def waits(
    policy: ReviewPolicy, *, source: Source, memory_type: MemoryType, confidence: float, provenance: Provenance
) -> str | None:
    """Why a new memory waits for review under `policy`, or None when it goes straight in."""
    if source is not Source.EXTRACTION and not (source is Source.AGENT and policy.agent_writes):
        return None  # a person's write is its own review; orcmem's own (`tool`: the recall probe) is no learning
    if steers_from_tool_text(memory_type, provenance):
        return f"a {memory_type} taken from tool, file or web text"
    if policy.all_wait:
        return "every learned memory waits in this project"
    if memory_type in policy.hold_types:
        return f"{memory_type} memories wait in this project"
    if confidence < policy.min_confidence:
        return f"confidence {confidence:.2f} is under {policy.min_confidence:.2f}"
    return None
