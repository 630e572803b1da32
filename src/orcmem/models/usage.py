"""What one distillation call cost (tokens, dollars, time) and what it said of its rate limits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens a call reports (cache reads and writes apart), its dollars where given, its model and its time."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    cost_usd: float | None = None  # None: the provider reports no price (Codex, the API)
    model: str | None = None
    duration_ms: int | None = None  # as the CLI measured it; the worker records its own wall time beside it

    @property
    def tokens(self) -> int:
        """Every token the call processed, cached ones included: what the daily token budget counts."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens


@dataclass(frozen=True, slots=True)
class RateLimit:
    """What a call said of its rate limits: refused for now (`limited`), or how much headroom is left.

    `headroom` is the share still available (0 to 1) where the provider reports it; `low` says the provider warned
    or the headroom is under the threshold; `resets_at` (ms since the epoch) and `retry_after_s` say when to ask
    again.
    """

    limited: bool = False
    headroom: float | None = None
    low: bool = False
    resets_at: int | None = None
    retry_after_s: float | None = None


@dataclass(frozen=True, slots=True)
class DailySpend:
    """What distillation spent since a moment (the local day's start): runs distilled (the judgement is part of its
    run, not another), and every call's tokens and dollars."""

    runs: int = 0
    tokens: int = 0
    dollars: float = 0.0


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One distillation call as recorded: whose run, which provider and model, what it cost, how it ended."""

    id: int
    run_id: str
    project_id: str
    provider: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    cost_usd: float | None
    wall_ms: int
    started_at: int
    finished_at: int
    status: str
    headroom: float | None
    rate_limit_low: bool
    resets_at: int | None
    call: str = "distill"  # models/vocabulary.UsageCall: the distillation, or the contradiction judgement

    @property
    def tokens(self) -> int:
        """Every token of the call, cached ones included."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens


@dataclass(frozen=True, slots=True)
class UsageTotal:
    """Calls, tokens and dollars summed over a period (and a project, when `project_id` is set): every call's
    tokens and dollars, the judgement's among them; `runs` counts the distillation calls, and the judgement's
    share is given apart too."""

    runs: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    dollars: float
    wall_ms: int
    project_id: str | None = None
    judgements: int = 0  # contradiction judgement calls among the calls summed
    judgement_tokens: int = 0  # their tokens, cached ones included (part of `tokens`)
    judgement_dollars: float = 0.0  # their dollars (part of `dollars`)

    @property
    def tokens(self) -> int:
        """Every token, cached ones included."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_creation_tokens
