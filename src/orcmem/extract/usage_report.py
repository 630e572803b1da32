"""What a provider's answer says of its cost and its rate limits: Claude Code's stream events, Codex's `--json`
events, Gemini CLI's JSON stats, the Messages API's usage and `anthropic-ratelimit-*` headers. Every reader takes
what it finds and never raises: a field missing or of another shape is left out."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from orcmem.models.constants import RATE_LIMIT_HEADROOM_MIN
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.usage import RateLimit, Usage

# How the CLIs word a refusal for rate or usage limits (Claude Code: "You've reached your … limit", "rate_limit";
# Codex: "You've hit your usage limit", "429 Too Many Requests"; the API: rate_limit_error).
RATE_LIMIT_TEXT = re.compile(
    r"rate[ _-]?limit|usage limit|too many requests|\b429\b|reached your [^.\n]{0,40}limit|hit your [^.\n]{0,40}limit",
    re.IGNORECASE,
)


def rate_limit_text(text: str) -> bool:
    """Whether an error reads as a refusal for rate or usage limits."""
    return bool(RATE_LIMIT_TEXT.search(text))


def json_lines(stdout: str) -> Iterator[JsonObject]:
    """Every line of `stdout` that is a JSON object (the others are skipped)."""
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _epoch_ms(value: object) -> int | None:
    """Seconds (or milliseconds) since the epoch as milliseconds; None when not a number."""
    number = _number(value)
    if number is None or number <= 0:
        return None
    return int(number if number > 1e12 else number * 1000)


# --- Claude Code ---------------------------------------------------------------------------------------------------
def claude_usage(result: Mapping[str, JsonValue]) -> Usage | None:
    """The `result` event's cost: `modelUsage` summed (it counts subagents and compaction), else `usage`."""
    per_model = result.get("modelUsage")
    usage = result.get("usage")
    cost = _number(result.get("total_cost_usd"))
    duration = result.get("duration_ms")
    duration_ms = _int(duration) if duration is not None else None
    if isinstance(per_model, dict) and per_model:
        models = [(name, entry) for name, entry in per_model.items() if isinstance(entry, dict)]
        tokens = [
            (
                _int(entry.get("inputTokens")),
                _int(entry.get("outputTokens")),
                _int(entry.get("cacheReadInputTokens")),
                _int(entry.get("cacheCreationInputTokens")),
            )
            for _, entry in models
        ]
        if models:
            main = max(zip(models, tokens, strict=True), key=lambda pair: sum(pair[1]))[0][0]
            return Usage(
                sum(t[0] for t in tokens),
                sum(t[1] for t in tokens),
                sum(t[2] for t in tokens),
                sum(t[3] for t in tokens),
                cost,
                str(main),
                duration_ms,
            )
    if isinstance(usage, dict):
        return Usage(
            _int(usage.get("input_tokens")),
            _int(usage.get("output_tokens")),
            _int(usage.get("cache_read_input_tokens")),
            _int(usage.get("cache_creation_input_tokens")),
            cost,
            None,
            duration_ms,
        )
    if cost is not None:
        return Usage(cost_usd=cost, duration_ms=duration_ms)
    return None


def claude_rate_limit(events: list[JsonObject], result: Mapping[str, JsonValue] | None) -> RateLimit | None:
    """What Claude Code's stream said of its limits: a `rate_limit_event` (`rejected`, `allowed_warning`, a
    utilization), a synthetic `rate_limit` error, or a failed result with status 429 or a limit's wording."""
    info: JsonObject = {}
    for event in events:
        if event.get("type") == "rate_limit_event" and isinstance(event.get("rate_limit_info"), dict):
            info = event["rate_limit_info"]
    limited = any(event.get("error") == "rate_limit" for event in events)
    if result is not None and result.get("is_error") is True:
        said = " ".join(str(part) for part in (result.get("result"), result.get("errors")) if part)
        limited = limited or result.get("api_error_status") == 429 or rate_limit_text(said)
    status = str(info.get("status") or "")
    limited = limited or status == "rejected"
    utilization = _number(info.get("utilization"))
    if utilization is not None and utilization > 1:
        utilization /= 100  # a percentage
    headroom = None if utilization is None else max(0.0, 1.0 - utilization)
    low = status == "allowed_warning" or (headroom is not None and headroom < RATE_LIMIT_HEADROOM_MIN)
    resets_at = _epoch_ms(info.get("resetsAt"))
    if not (limited or low or headroom is not None or resets_at is not None):
        return None
    return RateLimit(limited=limited, headroom=headroom, low=low, resets_at=resets_at)


# --- Codex ---------------------------------------------------------------------------------------------------------
def codex_report(stdout: str, model: str | None) -> tuple[Usage | None, str | None]:
    """`codex exec --json`'s usage (its `turn.completed` events summed; `cached_input_tokens` is part of the input,
    so it is moved to cache reads) and the error its `turn.failed` or `error` events gave, if any."""
    usage: Usage | None = None
    error: str | None = None
    for event in json_lines(stdout):
        kind = event.get("type")
        if kind == "turn.completed" and isinstance(event.get("usage"), dict):
            raw = event["usage"]
            cached = _int(raw.get("cached_input_tokens"))
            total_in = _int(raw.get("input_tokens"))
            before = usage or Usage(model=model)
            usage = Usage(
                before.input_tokens + max(0, total_in - cached),
                before.output_tokens + _int(raw.get("output_tokens")),
                before.cache_read_tokens + min(cached, total_in),
                0,
                None,
                model,
            )
        elif kind == "turn.failed" and isinstance(event.get("error"), dict):
            error = str(event["error"].get("message") or error or "")
        elif kind == "error" and isinstance(event.get("message"), str):
            error = event["message"]
    return usage, error


# --- Gemini CLI ----------------------------------------------------------------------------------------------------
def gemini_usage(envelope: Mapping[str, JsonValue], model: str | None) -> Usage | None:
    """`gemini -p --output-format json`'s usage: `stats.models.<model>.tokens` summed over the models it called
    (`input` is the prompt without its cached part; `candidates` and `thoughts` are both output); the model asked
    for, else the one that took the most tokens. None when the envelope has no stats."""
    stats = envelope.get("stats")
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict) or not models:
        return None
    input_tokens = output_tokens = cached = 0
    busiest: tuple[int, str] | None = None
    for name, entry in models.items():
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if not isinstance(tokens, dict):
            continue
        input_tokens += _int(tokens.get("input"))
        output_tokens += _int(tokens.get("candidates")) + _int(tokens.get("thoughts"))
        cached += _int(tokens.get("cached"))
        total = _int(tokens.get("total"))
        if busiest is None or total > busiest[0]:
            busiest = (total, str(name))
    return Usage(input_tokens, output_tokens, cached, 0, None, model or (busiest[1] if busiest else None))


def opencode_usage(events: Sequence[Mapping[str, JsonValue]], model: str | None) -> Usage | None:
    """`opencode run --format json`'s usage: each `step_finish` part's `tokens` (input, output and reasoning as
    output, cache reads and writes) and `cost` summed. None when no step finished."""
    steps = [event.get("part") for event in events if event.get("type") == "step_finish"]
    parts = [part for part in steps if isinstance(part, dict) and isinstance(part.get("tokens"), dict)]
    if not parts:
        return None
    input_tokens = output_tokens = cache_read = cache_write = 0
    cost = 0.0
    for part in parts:
        tokens = part["tokens"]
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        input_tokens += _int(tokens.get("input"))
        output_tokens += _int(tokens.get("output")) + _int(tokens.get("reasoning"))
        cache_read += _int(cache.get("read"))
        cache_write += _int(cache.get("write"))
        spent = part.get("cost")
        cost += float(spent) if isinstance(spent, int | float) else 0.0
    return Usage(input_tokens, output_tokens, cache_read, cache_write, cost or None, model)


# --- The Messages API ----------------------------------------------------------------------------------------------
def api_usage(message: Any, model: str | None) -> Usage | None:
    """The Messages API's `usage` of a message (an SDK object or a mapping)."""
    usage = getattr(message, "usage", None)
    if usage is None:
        return None

    def field(name: str) -> int:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        return _int(value)

    return Usage(
        field("input_tokens"),
        field("output_tokens"),
        field("cache_read_input_tokens"),
        field("cache_creation_input_tokens"),
        None,
        getattr(message, "model", None) or model,
    )


def _reset_ms(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def api_rate_limit(
    headers: Mapping[str, str], status: int | None = None, now_s: float | None = None
) -> RateLimit | None:
    """The `anthropic-ratelimit-*` headers' headroom (the smallest remaining share of requests and tokens) and, on
    HTTP 429, the refusal with its `retry-after`."""
    lowered = {key.lower(): value for key, value in headers.items()}
    shares: list[tuple[float, int | None]] = []
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        try:
            limit = float(lowered[f"anthropic-ratelimit-{kind}-limit"])
            remaining = float(lowered[f"anthropic-ratelimit-{kind}-remaining"])
        except (KeyError, ValueError):
            continue
        if limit > 0:
            shares.append((max(0.0, remaining / limit), _reset_ms(lowered.get(f"anthropic-ratelimit-{kind}-reset"))))
    retry_after: float | None = None
    try:
        retry_after = max(0.0, float(lowered["retry-after"]))
    except (KeyError, ValueError):
        retry_after = None
    limited = status == 429
    if not shares and not limited:
        return None
    headroom, resets_at = min(shares, key=lambda share: share[0]) if shares else (None, None)
    if limited and resets_at is None and retry_after is not None:
        resets_at = int(((time.time() if now_s is None else now_s) + retry_after) * 1000)
    low = headroom is not None and headroom < RATE_LIMIT_HEADROOM_MIN
    return RateLimit(limited=limited, headroom=headroom, low=low, resets_at=resets_at, retry_after_s=retry_after)
