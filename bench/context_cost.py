"""What the context orcmem adds costs an agent: tokens of the brief, of recall per prompt and per session.

Run alone with `python -m bench.context_cost`. A profile of 1,000 synthetic memories in the style agents write
(`bench.search.synthetic_memories`), then sessions of 20 prompts each through the real hooks in this process
(`SessionStart`, then `UserPromptSubmit` on the word path, as a prompt hook answers when no warm server is up),
each session under a context budget: none to speak of (what orcmem would add uncapped), the default, and the
2,000 tokens a peer documents. Tokens are estimated as characters / 4, the estimate the budget counts with.
Peers' figures are what they document, not measured here: claude-mem injects its 50 latest observations at
session start; a 2,000-token budget per session.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.common import profile_with_memories
from bench.search import queries
from orcmem.hooks import handlers
from orcmem.models.constants import CHARS_PER_TOKEN, CONTEXT_BUDGET_TOKENS_DEFAULT
from orcmem.service.memory_service import MemoryService

MEMORIES = 1000
PROMPTS_PER_SESSION = 20
SESSIONS = 10
UNCAPPED = 1_000_000  # tokens: a budget no session reaches, to see what orcmem adds without one
PEER_BUDGET = 2000  # tokens a session, as a peer documents
PEER_START_OBSERVATIONS = 50  # claude-mem's observations at session start


@dataclass(frozen=True, slots=True)
class BudgetRun:
    """Sessions under one context budget: tokens of the brief, per prompt, per session; how many prompts got any."""

    budget: int
    brief_tokens: int
    brief_memories: int
    per_prompt: list[int]  # every prompt's recall, in tokens (0: nothing added)
    per_session: list[int]  # brief and recall of each session, in tokens
    answered: int  # prompts that got some recall


@dataclass(frozen=True, slots=True)
class ContextResult:
    """The runs under each budget, and the profile's size."""

    memories: int
    prompts: int
    sessions: int
    runs: list[BudgetRun]


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


def _added(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def _sessions(home: Path, project: Path, budget: int, prompts: list[list[str]]) -> BudgetRun:
    service = MemoryService.open(home, vectors=False)
    service.context.set_session_budget(budget)
    service.close()
    brief_tokens = brief_memories = answered = 0
    per_prompt: list[int] = []
    per_session: list[int] = []
    for number, session in enumerate(prompts):
        payload = {"session_id": f"bench-{budget}-{number}", "cwd": str(project)}
        brief = _added(handlers.session_start(payload, str(home)))
        brief_tokens, brief_memories = _tokens(brief), brief.count("\n- [")
        total = _tokens(brief)
        for prompt in session:
            recall = _added(handlers.prompt({**payload, "prompt": prompt}, str(home)))
            per_prompt.append(_tokens(recall))
            answered += bool(recall)
            total += _tokens(recall)
        per_session.append(total)
    return BudgetRun(budget, brief_tokens, brief_memories, per_prompt, per_session, answered)


def run(memories: int = MEMORIES, sessions: int = SESSIONS) -> ContextResult:
    """Build the profile, then the sessions under each budget."""
    folder = Path(tempfile.mkdtemp(prefix="orcmem-bench-context-"))
    try:
        home, project = folder / "home", folder / "project"
        profile_with_memories(home, project, memories)
        rng = random.Random(5)
        pool = queries(400)
        prompts = [rng.sample(pool, PROMPTS_PER_SESSION) for _ in range(sessions)]
        runs = [
            _sessions(home, project, budget, prompts)
            for budget in (UNCAPPED, CONTEXT_BUDGET_TOKENS_DEFAULT, PEER_BUDGET)
        ]
        return ContextResult(memories, PROMPTS_PER_SESSION, sessions, runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0


def render(result: ContextResult) -> list[str]:
    """The report's section."""
    lines = [
        "## The context orcmem adds",
        "",
        f"`python -m bench.context_cost`: a profile of {result.memories:,} synthetic memories, {result.sessions}",
        f"sessions of {result.prompts} prompts each (the search benchmark's questions), through the real",
        "`SessionStart` and `UserPromptSubmit` hooks (the word path), under three session budgets (`orcmem memory",
        "budget --context N`). Tokens are characters / 4, the estimate the budget counts with; the fence and",
        "recall's header are counted. A session's brief takes at most half its budget.",
        "",
        "| session budget (tokens) | brief (tokens, memories) | recall per prompt: mean / p95 / max | prompts "
        "given recall | per session of 20 prompts: mean / max | within budget |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in result.runs:
        label = "none (1,000,000)" if r.budget == UNCAPPED else f"{r.budget:,}"
        if r.budget == CONTEXT_BUDGET_TOKENS_DEFAULT:
            label += " (default)"
        within = "—" if r.budget == UNCAPPED else ("yes" if max(r.per_session) <= r.budget else "**no**")
        lines.append(
            f"| {label} | {r.brief_tokens:,} ({r.brief_memories}) | {_mean(r.per_prompt):,.0f} / "
            f"{_p95(r.per_prompt):,} / {max(r.per_prompt):,} | {r.answered} of {len(r.per_prompt)} | "
            f"{_mean(r.per_session):,.0f} / {max(r.per_session):,} | {within} |"
        )
    uncapped = result.runs[0]
    lines += [
        "",
        "Next to what peers document (their figures, not measured here): claude-mem injects its",
        f"{PEER_START_OBSERVATIONS} latest observations at session start; orcmem's brief holds "
        f"{uncapped.brief_memories} memories in {uncapped.brief_tokens:,} tokens (at most 5,000 characters), and",
        "recall adds only memories whose words match the prompt, each given once a session. A peer's 2,000-token",
        "session budget is the last row: the brief takes half, and recall stops once the rest is spent.",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run and print the section."""
    parser = argparse.ArgumentParser(prog="python -m bench.context_cost", description=__doc__)
    parser.add_argument("--memories", type=int, default=MEMORIES)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    args = parser.parse_args(argv)
    print("\n".join(render(run(args.memories, args.sessions))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
