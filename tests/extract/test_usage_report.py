"""What the providers' real answers say of cost and rate limits (usage_report), read from the captured envelopes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orcmem.extract.claude_cli import read_claude_output
from orcmem.extract.codex_cli import read_codex_output
from orcmem.extract.runner import ProcessOutcome
from orcmem.extract.usage_report import (
    api_rate_limit,
    claude_rate_limit,
    claude_usage,
    codex_report,
    json_lines,
    rate_limit_text,
)

FIXTURES = Path(__file__).parents[1] / "fixtures"
ENVELOPES = [json.loads(line) for line in (FIXTURES / "envelopes" / "claude_print_result_envelopes.jsonl").open()]
CODEX_STREAM = (FIXTURES / "agents" / "codex_exec_json_stream_captured.jsonl").read_text()
SYNTHETIC_LIMIT = json.loads((FIXTURES / "agents" / "claude_transcript_extra_records.jsonl").open().readline())
# As Claude Code 2.1.207 prints it in stream-json (quoted in anthropics/claude-code#78476).
RATE_LIMIT_EVENT = {
    "type": "rate_limit_event",
    "rate_limit_info": {
        "status": "allowed",
        "resetsAt": 1784283600,
        "rateLimitType": "five_hour",
        "overageStatus": "allowed",
        "overageResetsAt": 1785542400,
        "isUsingOverage": False,
    },
}


def test_claudes_success_envelope_gives_its_model_tokens_cost_and_time() -> None:
    usage = claude_usage(ENVELOPES[3])
    assert usage is not None
    assert (usage.model, usage.input_tokens, usage.output_tokens) == ("claude-haiku-4-5-20251001", 18, 175)
    assert (usage.cache_read_tokens, usage.cache_creation_tokens) == (34324, 7314)
    assert usage.cost_usd == pytest.approx(0.0189534)


def test_a_failed_runs_model_usage_is_summed_and_a_refused_one_costs_nothing() -> None:
    turns = claude_usage(ENVELOPES[0])  # error_max_turns: 41 turns, $1.40
    assert turns is not None and (turns.model, turns.input_tokens, turns.cache_read_tokens) == (
        "claude-sonnet-5",
        2409,
        1617801,
    )
    assert turns.cost_usd == pytest.approx(1.4020935) and turns.duration_ms == 283992
    billing = claude_usage(ENVELOPES[1])
    assert billing is not None and (billing.tokens, billing.cost_usd) == (0, 0.0)


def test_claudes_rate_limit_is_read_from_the_stream() -> None:
    assert claude_rate_limit([], ENVELOPES[3]) is None  # nothing said: nothing recorded
    told = claude_rate_limit([RATE_LIMIT_EVENT], ENVELOPES[3])
    assert told is not None and not told.limited and not told.low and told.resets_at == 1784283600 * 1000
    warned = {**RATE_LIMIT_EVENT, "rate_limit_info": {"status": "allowed_warning", "utilization": 0.93}}
    low = claude_rate_limit([warned], ENVELOPES[3])
    assert low is not None and low.low and low.headroom == pytest.approx(0.07)
    refused = claude_rate_limit([SYNTHETIC_LIMIT], None)  # the synthetic "rate_limit" error record
    assert refused is not None and refused.limited
    billing = claude_rate_limit([], ENVELOPES[1])  # a 400 for credit is not a rate limit
    assert billing is None
    limited = claude_rate_limit([], {**ENVELOPES[1], "api_error_status": 429, "result": "Rate limited"})
    assert limited is not None and limited.limited


def test_a_stream_json_answer_is_read_as_the_json_envelope_was() -> None:
    stream = "\n".join(
        json.dumps(event)
        for event in (
            {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-haiku-4-5-20251001"},
            RATE_LIMIT_EVENT,
            {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "{}"}]}},
            {**ENVELOPES[3], "result": '{"memories": []}'},
        )
    )
    result = read_claude_output(ProcessOutcome(0, stream + "\n", ""), 5)
    assert result.text == '{"memories": []}'
    assert result.usage is not None and result.usage.output_tokens == 175
    assert result.rate_limit is not None and result.rate_limit.resets_at == 1784283600 * 1000


def test_codexs_turn_usage_puts_cached_input_apart(tmp_path: Path) -> None:
    usage, error = codex_report(CODEX_STREAM, "gpt-5.5")
    assert error is None and usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (27493 - 3840, 3840, 174)
    assert usage.tokens == 27493 + 174 and usage.model == "gpt-5.5" and usage.cost_usd is None
    failed = '{"type":"turn.failed","error":{"message":"You\'ve hit your usage limit. Try again in 2 hours."}}\n'
    result = read_codex_output(ProcessOutcome(1, failed, ""), tmp_path / "missing.txt", 5)
    assert not result.ok and result.rate_limited and "hit your usage limit" in (result.error or "")
    assert len(list(json_lines("not json\n{}\n[1]\n"))) == 1


def test_the_apis_headers_give_the_smallest_headroom_and_a_429_its_retry_after() -> None:
    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "45",
        "anthropic-ratelimit-input-tokens-limit": "50000",
        "anthropic-ratelimit-input-tokens-remaining": "5000",
        "anthropic-ratelimit-input-tokens-reset": "2030-01-01T00:00:30Z",
    }
    limit = api_rate_limit(headers, 200)
    assert limit is not None and limit.headroom == pytest.approx(0.1) and limit.low and not limit.limited
    assert limit.resets_at == 1893456030000
    refused = api_rate_limit({"retry-after": "12"}, 429)
    assert refused is not None and refused.limited and refused.retry_after_s == 12.0
    assert api_rate_limit({}, 200) is None


@pytest.mark.parametrize(
    ("text", "limited"),
    [
        ("You've reached your Fable 5 limit. Run /usage-credits to continue", True),
        ("exceeded retry limit, last status: 429 Too Many Requests", True),
        ("This request would exceed your account's rate limit.", True),
        ("Credit balance is too low", False),
        ("There's an issue with the selected model (sonnet-typo-xyz).", False),
    ],
)
def test_rate_limit_wording(text: str, limited: bool) -> None:
    assert rate_limit_text(text) is limited
