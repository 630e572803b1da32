"""The cost of learning with the stand-in CLIs (tests/standin_agent.py) printing the real envelopes: each call's
usage recorded for Claude Code, Codex and the Messages API; a daily budget crossed mid-queue; a rate-limit answer
put back in the queue; learning that yields while a rate limit runs low. The clock is the service's, moved by
hand: nothing sleeps."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest

from orcmem.extract.claude_cli import ClaudeCliGenerator
from orcmem.extract.codex_cli import CodexCliGenerator
from orcmem.extract.generator import Generator
from orcmem.extract.resolve import GeneratorChoice
from orcmem.host.workspace import locate
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.models.types import Project
from orcmem.rules.budget import next_day_start
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.store.runs import Run
from orcmem.worker.loop import drain
from tests.fakes import loopback_http
from tests.helpers import Clock

STANDIN = Path(__file__).with_name("standin_agent.py")
sys.path.insert(0, str(STANDIN.parent))
import standin_agent  # noqa: E402  (the stand-in's own figures, to compare with what was recorded)


@pytest.fixture
def standin(tmp_path: Path) -> dict[str, Any]:
    """Stand-in `claude` and `codex` executables, and the environment they run in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n" + STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
        script.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "STANDIN_PROMPTS": str(tmp_path / "prompts.txt"),
        "STANDIN_RATE_LIMITED": str(tmp_path / "limited"),
    }
    return {"bin": bin_dir, "env": env, "limited": tmp_path / "limited"}


def generator(standin: dict[str, Any], name: str, **env: str) -> Generator:
    environment = {**standin["env"], **env}
    if name == "claude":
        return ClaudeCliGenerator(str(standin["bin"] / "claude"), env=environment)
    return CodexCliGenerator(str(standin["bin"] / "codex"), model="gpt-5.5", env=environment)


@pytest.fixture
def project(service: MemoryService, project_dir: Path) -> Project:
    return service.project(locate(project_dir))


def ended_run(service: MemoryService, project: Project, session: str) -> Run:
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id=session, transcript_path=None, cwd=None, now=service.clock()
    )
    said = [
        LedgerEvent(EventKind.MESSAGE, at=1, role="user", text=f"prompt 1 of {session}: fix the flaky test"),
        LedgerEvent(EventKind.MESSAGE, at=2, role="assistant", text="pinned the pool to forks"),
    ]
    service.store.runs.append(run.id, said, offset=1, turns=1, skipped=0, model=None, title=None, now=service.clock())
    service.store.runs.end(run.id, service.clock())
    queued = service.store.runs.get(run.id)
    assert queued is not None
    return queued


def run_queue(learning: Learning, model: Generator) -> list[Any]:
    return drain(learning, lambda _run: GeneratorChoice(model, None, "stand-in"), pid=os.getpid())


def one_by_one(learning: Learning, model: Generator) -> list[Any]:
    """The queue run one job at a time (drain runs two at once: a token or dollar cap is checked before each call,
    so the call in flight beside it may pass the cap; that is documented)."""
    outcomes = []
    while (job := learning.claim(os.getpid(), lambda pid: True)) is not None:
        outcomes.append(learning.run_job(job, lambda _run: GeneratorChoice(model, None, "stand-in")))
    return outcomes


def job_states(service: MemoryService) -> list[str]:
    return sorted(job.state for job, _run in service.store.jobs.list(None, 100))


# --- usage recorded ------------------------------------------------------------------------------------------------
def test_claude_codes_usage_cost_and_model_are_recorded(service, project, standin) -> None:
    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    [outcome] = run_queue(learning, generator(standin, "claude"))
    assert outcome.state == "done" and outcome.written >= 1  # the answer is read from the stream's result event
    [row] = service.cost.recent(project.id, 10)
    usage = standin_agent.CLAUDE_USAGE
    assert (row.provider, row.model, row.status) == ("claude", standin_agent.CLAUDE_MODEL, "ok")
    assert (row.input_tokens, row.output_tokens) == (usage["input_tokens"], usage["output_tokens"])
    assert (row.cache_read_tokens, row.cache_creation_tokens) == (
        usage["cache_read_input_tokens"],
        usage["cache_creation_input_tokens"],
    )
    assert row.cost_usd == pytest.approx(standin_agent.CLAUDE_COST_USD)
    assert row.headroom == pytest.approx(0.9) and not row.rate_limit_low
    today = service.cost.total("day", project.id)
    assert (today.runs, today.tokens) == (1, sum(v for v in usage.values() if isinstance(v, int)))
    assert service.cost.for_runs([outcome.run_id])[outcome.run_id].runs == 1


def test_codexs_usage_is_recorded_with_its_cached_input_apart(service, project, standin) -> None:
    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    [outcome] = run_queue(learning, generator(standin, "codex"))
    assert outcome.state == "done"
    [row] = service.cost.recent(project.id, 10)
    usage = standin_agent.CODEX_USAGE
    assert (row.provider, row.model, row.status, row.cost_usd) == ("codex", "gpt-5.5", "ok", None)
    # Codex counts cached input inside input_tokens; recorded apart, so nothing is counted twice.
    assert row.input_tokens == usage["input_tokens"] - usage["cached_input_tokens"]
    assert row.cache_read_tokens == usage["cached_input_tokens"]
    assert row.output_tokens == usage["output_tokens"]
    assert row.tokens == usage["input_tokens"] + usage["output_tokens"]


class RateLimitedMessages(BaseHTTPRequestHandler):
    """The Messages API: a message with its usage and `anthropic-ratelimit-*` headers, or 429 with retry-after."""

    protocol_version = "HTTP/1.1"
    refuse: ClassVar[bool] = False
    tokens_remaining: ClassVar[int] = 150_000

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("content-length", 0)))
        headers = {
            "anthropic-ratelimit-requests-limit": "50",
            "anthropic-ratelimit-requests-remaining": "49",
            "anthropic-ratelimit-requests-reset": "2030-01-01T00:00:00Z",
            "anthropic-ratelimit-tokens-limit": "200000",
            "anthropic-ratelimit-tokens-remaining": str(type(self).tokens_remaining),
            "anthropic-ratelimit-tokens-reset": "2030-01-01T00:01:00Z",
            "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        }
        if type(self).refuse:
            status = 429
            body: dict[str, Any] = {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your limit."},
            }
            headers["retry-after"] = "30"
        else:
            status = 200
            answer = {"summary": {"request": "r", "workDone": "w", "outcome": "o", "openItems": []}, "memories": []}
            body = {
                "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5-20251001",
                "content": [{"type": "text", "text": json.dumps(answer)}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 2095,
                    "output_tokens": 503,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 1024,
                },
            }
        data = json.dumps(body).encode()
        self.send_response(status)
        for key, value in {**headers, "content-type": "application/json", "content-length": str(len(data))}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def messages_api() -> Iterator[str]:
    RateLimitedMessages.refuse = False
    RateLimitedMessages.tokens_remaining = 150_000
    with loopback_http(RateLimitedMessages) as url:
        yield url


def test_the_apis_usage_and_rate_limit_headers_are_recorded(service, project, messages_api) -> None:
    pytest.importorskip("anthropic")
    from orcmem.extract.anthropic_api import AnthropicApiGenerator

    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    [outcome] = run_queue(learning, AnthropicApiGenerator("sk-ant-test", base_url=messages_api))
    assert outcome.state == "done"
    [row] = service.cost.recent(project.id, 10)
    assert (row.provider, row.model, row.status) == ("apikey", "claude-haiku-4-5-20251001", "ok")
    assert (row.input_tokens, row.output_tokens, row.cache_read_tokens) == (2095, 503, 1024)
    assert row.headroom == pytest.approx(0.75)  # tokens: 150,000 of 200,000 left; requests: 49 of 50
    assert not row.rate_limit_low


def test_an_api_429_requeues_after_its_retry_after(service, project, messages_api, clock: Clock) -> None:
    pytest.importorskip("anthropic")
    from orcmem.extract.anthropic_api import AnthropicApiGenerator

    RateLimitedMessages.refuse = True
    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    api = AnthropicApiGenerator("sk-ant-test", base_url=messages_api)
    [outcome] = run_queue(learning, api)
    [(job, _run)] = service.store.jobs.list(None)
    assert (outcome.state, job.state, job.attempts) == ("queued", "queued", 1)
    assert job.not_before == clock.now + 30_000  # the retry-after header
    assert "rate limited" in (job.error or "")
    assert run_queue(learning, api) == []  # not before its time
    RateLimitedMessages.refuse = False
    clock.now += 30_000
    [outcome] = run_queue(learning, api)
    assert outcome.state == "done"
    assert [row.status for row in service.cost.recent(None, 10)] == ["ok", "rate_limited"]


# --- rate limits -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["claude", "codex"])
def test_a_rate_limit_answer_requeues_the_job_with_backoff_instead_of_failing_it(
    name: str, service, project, standin, clock: Clock
) -> None:
    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    standin["limited"].touch()
    model = generator(standin, name)
    [outcome] = run_queue(learning, model)
    [(job, _run)] = service.store.jobs.list(None)
    assert (outcome.state, job.state, job.attempts) == ("queued", "queued", 1)
    assert "rate limited" in (job.error or "")
    if name == "claude":  # Claude Code said when its window resets
        assert job.not_before == standin_agent.RESETS_AT * 1000
    else:  # Codex did not: the first backoff
        assert job.not_before == clock.now + 60_000
    [row] = service.cost.recent(None, 10)
    assert row.status == "rate_limited"
    hold = service.cost.hold()  # the limit is the account's: the whole queue waits with the job
    assert hold is not None and hold.kind == "rate_limit" and f"the {name} rate limit was reached" in hold.reason
    assert run_queue(learning, model) == []  # it waits: still queued, never failed
    assert job_states(service) == ["queued"]
    standin["limited"].unlink()
    assert job.not_before is not None
    clock.now = job.not_before
    [outcome] = run_queue(learning, model)
    assert outcome.state == "done"


def test_a_second_refusal_waits_twice_as_long(service, project, standin, clock: Clock) -> None:
    learning = Learning(service)
    assert learning.queue(ended_run(service, project, "s1"))
    standin["limited"].touch()
    model = generator(standin, "codex")
    run_queue(learning, model)
    clock.now += 60_000
    run_queue(learning, model)
    [(job, _run)] = service.store.jobs.list(None)
    assert (job.attempts, job.not_before) == (2, clock.now + 120_000)


def test_learning_yields_while_claudes_rate_limit_runs_low(service, project, standin, clock: Clock) -> None:
    learning = Learning(service)
    for session in ("s1", "s2"):
        assert learning.queue(ended_run(service, project, session))
    low = generator(standin, "claude", STANDIN_UTILIZATION="0.9")  # 10 % left: under the 20 % threshold
    [first] = [
        learning.run_job(learning.claim(os.getpid(), lambda pid: True), lambda r: GeneratorChoice(low, None, ""))
    ]
    assert first.state == "done"
    hold = service.cost.hold()
    assert hold is not None and hold.kind == "rate_limit" and "10% left" in hold.reason
    assert hold.until == standin_agent.RESETS_AT * 1000
    assert run_queue(learning, low) == [] and job_states(service) == ["done", "queued"]
    assert not learning.untaken_jobs()  # a worker does not spin on it
    assert learning.next_retry() == hold.until  # a lingering worker wakes then
    clock.now = hold.until
    [second] = run_queue(learning, generator(standin, "claude"))
    assert second.state == "done" and service.cost.hold() is None


# --- the daily budget ------------------------------------------------------------------------------------------------
def test_a_budget_crossed_mid_queue_keeps_later_jobs_queued_until_the_next_day(
    service, project, standin, clock: Clock
) -> None:
    service.cost.set_budget(runs=2)
    learning = Learning(service)
    for session in ("s1", "s2", "s3", "s4"):
        assert learning.queue(ended_run(service, project, session))
    model = generator(standin, "claude")
    done = run_queue(learning, model)
    assert [o.state for o in done] == ["done", "done"]
    assert job_states(service) == ["done", "done", "queued", "queued"]  # never lost, never failed
    hold = service.cost.hold()
    assert hold is not None and hold.kind == "budget"
    assert hold.reason == "budget reached: 2/2 runs today; queued runs resume after midnight"
    assert hold.until == next_day_start(clock.now)
    assert not learning.untaken_jobs()
    assert learning.next_retry() is None  # no worker lingers for midnight: the next hook's worker takes them
    clock.now = next_day_start(clock.now) - 1
    assert run_queue(learning, model) == []
    clock.now += 1  # the next local day
    assert [o.state for o in run_queue(learning, model)] == ["done", "done"]
    assert service.cost.spent_today().runs == 2 and service.cost.total("all").runs == 4


def test_the_token_and_dollar_caps_hold_the_queue_too(service, project, standin) -> None:
    learning = Learning(service)
    for session in ("s1", "s2"):
        assert learning.queue(ended_run(service, project, session))
    service.cost.set_budget(tokens=10_000)  # one Claude call reports 43,656
    assert len(one_by_one(learning, generator(standin, "claude"))) == 1
    hold = service.cost.hold()
    assert hold is not None and "43,656/10,000 tokens today" in hold.reason
    service.cost.set_budget(tokens=2_000_000, dollars=0.01)  # one call costs $0.019
    hold = service.cost.hold()
    assert hold is not None and "$0.02/$0.01 today" in hold.reason
    service.cost.set_budget(off=True)
    assert service.cost.hold() is None
    assert len(one_by_one(learning, generator(standin, "claude"))) == 1


def test_the_default_budget_is_on_and_bad_caps_are_refused(service) -> None:
    from orcmem.models.errors import ValidationError

    budget = service.cost.budget()
    assert (budget.runs, budget.tokens, budget.dollars, budget.enabled) == (50, 2_000_000, 5.0, True)
    with pytest.raises(ValidationError):
        service.cost.set_budget(dollars=float("nan"))
    with pytest.raises(ValidationError):
        service.cost.set_budget(runs=-1)
    assert service.cost.budget() == budget
