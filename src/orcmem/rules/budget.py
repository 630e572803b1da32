"""The daily budget of learning: what it allows (runs, tokens, dollars), when a local day starts, and whether the
day's spending has reached it. No storage: the service reads the spending and the setting."""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass

from orcmem.models.constants import BUDGET_DOLLARS_DEFAULT, BUDGET_RUNS_DEFAULT, BUDGET_TOKENS_DEFAULT
from orcmem.models.errors import ValidationError
from orcmem.models.usage import DailySpend
from orcmem.text.wording import plural

MS_PER_S = 1000


@dataclass(frozen=True, slots=True)
class Budget:
    """A day's allowance; None in a field: no cap on it. `enabled` False: no cap at all (`--off`)."""

    runs: int | None = BUDGET_RUNS_DEFAULT
    tokens: int | None = BUDGET_TOKENS_DEFAULT
    dollars: float | None = BUDGET_DOLLARS_DEFAULT
    enabled: bool = True

    def to_json(self) -> str:
        """The setting's stored form."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str | None) -> Budget:
        """The stored budget; the safe default when unset or unreadable."""
        if not raw:
            return cls()
        try:
            data = json.loads(raw)
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        runs, tokens, dollars = data.get("runs"), data.get("tokens"), data.get("dollars")
        return cls(
            runs=runs if isinstance(runs, int) and not isinstance(runs, bool) and runs >= 0 else None,
            tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else None,
            dollars=float(dollars) if isinstance(dollars, (int, float)) and not isinstance(dollars, bool) else None,
            enabled=data.get("enabled") is not False,
        )


def check_budget(runs: int | None, tokens: int | None, dollars: float | None) -> None:
    """Raise ValidationError unless every given cap is a whole number of runs or tokens (0 or more) and a finite
    number of dollars (0 or more)."""
    if runs is not None and runs < 0:
        raise ValidationError("The daily runs budget is 0 or more.")
    if tokens is not None and tokens < 0:
        raise ValidationError("The daily tokens budget is 0 or more.")
    if dollars is not None and (not math.isfinite(dollars) or dollars < 0):
        raise ValidationError("The daily dollars budget is a number of 0 or more.")


def day_start(now_ms: int) -> int:
    """The start of the local day holding `now_ms` (ms since the epoch)."""
    moment = time.localtime(now_ms / MS_PER_S)
    midnight = time.mktime((moment.tm_year, moment.tm_mon, moment.tm_mday, 0, 0, 0, 0, 0, -1))
    return int(midnight * MS_PER_S)


def next_day_start(now_ms: int) -> int:
    """The start of the next local day (midnight; a day of 23 or 25 hours is counted right)."""
    moment = time.localtime(now_ms / MS_PER_S)
    midnight = time.mktime((moment.tm_year, moment.tm_mon, moment.tm_mday + 1, 0, 0, 0, 0, 0, -1))
    return int(midnight * MS_PER_S)


def period_start(now_ms: int, period: str) -> int:
    """The start of the local day, week (Monday) or month holding `now_ms`; 0 for "all"."""
    moment = time.localtime(now_ms / MS_PER_S)
    if period == "day":
        return day_start(now_ms)
    if period == "week":
        day = moment.tm_mday - moment.tm_wday
        return int(time.mktime((moment.tm_year, moment.tm_mon, day, 0, 0, 0, 0, 0, -1)) * MS_PER_S)
    if period == "month":
        return int(time.mktime((moment.tm_year, moment.tm_mon, 1, 0, 0, 0, 0, 0, -1)) * MS_PER_S)
    return 0


def budget_reached(budget: Budget, spent: DailySpend, running: int = 0) -> str | None:
    """Which cap today's spending reached ("50/50 runs today"), or None while learning may go on. Runs in flight
    count as runs, so two workers starting at once do not pass the cap together."""
    if not budget.enabled:
        return None
    if budget.runs is not None and spent.runs + running >= budget.runs:
        return f"{spent.runs + running}/{budget.runs} runs today"
    if budget.tokens is not None and spent.tokens >= budget.tokens:
        return f"{spent.tokens:,}/{budget.tokens:,} tokens today"
    if budget.dollars is not None and spent.dollars >= budget.dollars:
        return f"${spent.dollars:.2f}/${budget.dollars:.2f} today"
    return None


def describe_budget(budget: Budget) -> str:
    """The budget in words: "50 runs, 2,000,000 tokens, $5.00 a day" or "off"."""
    if not budget.enabled:
        return "off"
    parts = []
    if budget.runs is not None:
        parts.append(plural(budget.runs, "run"))
    if budget.tokens is not None:
        parts.append(f"{budget.tokens:,} tokens")
    if budget.dollars is not None:
        parts.append(f"${budget.dollars:.2f}")
    return (", ".join(parts) + " a day") if parts else "no cap"
