"""OpenCodeCliGenerator against a stand-in `opencode` that prints the real `run --format json` events (recorded from
opencode-ai 1.18.33: tests/fixtures/envelopes/opencode_run_json_events.jsonl)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from orcmem.extract.opencode_cli import OpenCodeCliGenerator, configured_servers
from orcmem.extract.parse import parse_extraction
from orcmem.extract.prompt import build_prompt
from orcmem.extract.usage_report import opencode_usage
from orcmem.models.usage import Usage
from tests.extract.support import StandIn

EVENTS = Path(__file__).parent.parent / "fixtures" / "envelopes" / "opencode_run_json_events.jsonl"
*SUCCESS, FAILURE = EVENTS.read_text(encoding="utf-8").splitlines()
PROMPT = build_prompt("conversation", None, "## User asked\nSECRET-PROMPT-MARKER")
ANSWERS = f"""
for line in {SUCCESS!r}:
    print(line)
"""
FAILS = f"""
print({FAILURE!r})
sys.exit(1)
"""


def stand_in(make_cli: Callable[[str, str], StandIn], body: str) -> StandIn:
    return make_cli("opencode", body)


def test_the_answer_and_its_usage_come_from_the_events(
    make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, ANSWERS)
    result = OpenCodeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    parsed = parse_extraction(result.text or "")
    assert parsed is not None and parsed.memories[0].title == "Print a greeting with echo"
    assert result.usage == Usage(input_tokens=10, output_tokens=5)  # the stand-in API's usage; cost 0: no price


def test_one_pure_run_of_a_tool_less_agent_without_mcp_servers_or_project_config(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    config = tmp_path / "home" / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text(json.dumps({"mcp": {"orcmem": {"type": "local"}, "docs": {}}}))
    cli = stand_in(make_cli, ANSWERS)
    assert OpenCodeCliGenerator(str(cli.path), model="standin/standin-1", env=clean_env).generate(PROMPT).ok
    record = cli.record
    assert record["argv"][1:] == [
        "run",
        "--pure",
        "--format",
        "json",
        "--agent",
        "orcmem-distill",
        "--title",
        "orcmem distillation",
        "--model",
        "standin/standin-1",
    ]
    assert record["stdin"] == PROMPT and not any("SECRET-PROMPT-MARKER" in arg for arg in record["argv"])
    workdir = Path(record["cwd"])
    assert workdir.parent == Path(tempfile.gettempdir()).resolve() and workdir.name.startswith("orcmem-distill-")
    env = record["env"]
    overlay = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    agent = overlay["agent"]["orcmem-distill"]
    assert (agent["tools"], agent["permission"], agent["steps"]) == ({"*": False}, {"*": "deny"}, 1)
    assert overlay["mcp"] == {"orcmem": {"enabled": False}, "docs": {"enabled": False}}
    assert env["OPENCODE_PURE"] == env["OPENCODE_DISABLE_PROJECT_CONFIG"] == env["OPENCODE_DISABLE_CLAUDE_CODE"] == "1"
    assert env["ORCMEM_DISTILLING"] == "1" and env["KEEP_ME"] == "yes" and env["PWD"] == record["cwd"]


def test_without_a_chosen_model_opencode_uses_its_own(
    make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, ANSWERS)
    assert OpenCodeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).ok
    assert "--model" not in cli.record["argv"]


def test_an_api_error_is_the_error_events_message(
    make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]
) -> None:
    result = OpenCodeCliGenerator(str(stand_in(make_cli, FAILS).path), env=clean_env).generate(PROMPT)
    assert not result.ok and not result.rate_limited
    assert result.error == "OpenCode reported an error: Incorrect API key provided"


def test_a_rate_limit_is_said_so(make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]) -> None:
    limited = FAILURE.replace("Incorrect API key provided", "Rate limit reached for requests (429 Too Many Requests)")
    cli = stand_in(make_cli, FAILS.replace(repr(FAILURE), repr(limited)))
    assert OpenCodeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).rate_limited


def test_no_text_and_a_missing_binary_are_errors(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, 'print("Error: no provider configured")\nsys.exit(1)\n')
    result = OpenCodeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.error is not None and result.error.startswith("OpenCode answered with no text")
    missing = OpenCodeCliGenerator(str(tmp_path / "nope"), env=clean_env).generate(PROMPT)
    assert missing.error is not None and missing.error.startswith("OpenCode could not run")


def test_unreadable_config_files_name_no_server(tmp_path: Path) -> None:
    config = tmp_path / "opencode"
    config.mkdir()
    (config / "opencode.jsonc").write_text("// a comment\n{}")
    (config / "config.json").write_text("[1]")
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"mcp": {"extra": {}}}))
    assert configured_servers({"XDG_CONFIG_HOME": str(tmp_path), "OPENCODE_CONFIG": str(extra)}) == ["extra"]


def test_usage_sums_every_finished_step_with_its_cache_reasoning_and_cost() -> None:
    finished = json.loads(SUCCESS[-1])
    finished["part"]["tokens"] = {"input": 7, "output": 3, "reasoning": 2, "cache": {"read": 40, "write": 5}}
    finished["part"]["cost"] = 0.002
    events = [json.loads(line) for line in SUCCESS] + [finished]
    assert opencode_usage(events, "anthropic/claude-haiku-4-5") == Usage(
        17, 10, 40, 5, 0.002, "anthropic/claude-haiku-4-5"
    )
    assert opencode_usage([json.loads(FAILURE)], None) is None
