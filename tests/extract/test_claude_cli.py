"""ClaudeCliGenerator against a stand-in `claude` that prints the recorded envelopes."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orcmem.extract.claude_cli import ClaudeCliGenerator
from orcmem.extract.parse import parse_extraction
from orcmem.extract.prompt import build_prompt
from orcmem.extract.runner import ProcessOutcome
from tests.extract.support import StandIn, alive, group_alive

EXPECTED_ARGS = [
    "-p",
    "--model",
    "claude-haiku-4-5-20251001",
    "--output-format",
    "stream-json",
    "--verbose",
    "--max-turns",
    "1",
    "--strict-mcp-config",
    "--disallowed-tools",
    "Bash",
    "Edit",
    "Write",
    "WebFetch",
    "WebSearch",
    "--settings",
    '{"disableAllHooks": true}',
    "--no-session-persistence",
]

ANSWER = {
    "summary": {"request": "fix the pool", "workDone": "forks", "outcome": "green", "openItems": []},
    "memories": [
        {
            "type": "lesson",
            "title": "Use the forks pool",
            "body": "threads crash",
            "topicKey": "test/pool",
            "files": [],
            "confidence": 0.8,
        }
    ],
}
PROSE_RESULT = (
    "Here is the distilled memory:\n\n```json\n" + json.dumps(ANSWER) + "\n```\n\nLet me know if you need more."
)
PROMPT = build_prompt("Fix the pool", None, "## User asked\nSECRET-PROMPT-MARKER please fix")


def printing(envelope: dict[str, Any], *, exit_code: int = 0, stderr: str = "") -> str:
    """A stand-in body that prints `envelope` as one JSON line, an optional warning on stderr, and exits."""
    return f"""
sys.stderr.write({stderr!r})
print(json.dumps({envelope!r}))
sys.exit({exit_code})
"""


def success_envelope(envelopes: dict[str, dict[str, Any]], result: str = PROSE_RESULT) -> dict[str, Any]:
    envelope = dict(envelopes["success"])
    envelope["result"] = result
    return envelope


def test_success_returns_the_result_and_it_parses(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(success_envelope(envelopes), stderr="Warning: something harmless\n"))
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.ok and result.error is None
    assert result.text == PROSE_RESULT
    parsed = parse_extraction(result.text)
    assert parsed is not None
    assert parsed.summary.request == "fix the pool"
    assert [m.title for m in parsed.memories] == ["Use the forks pool"]


def test_exact_command_line_stdin_cwd_and_environment(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(success_envelope(envelopes, "ok")))
    assert ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).text == "ok"
    record = cli.record
    assert record["argv"][1:] == EXPECTED_ARGS
    assert not any("SECRET-PROMPT-MARKER" in arg for arg in record["argv"])
    assert record["stdin"] == PROMPT
    cwd = Path(record["cwd"])
    assert cwd.parent == Path(tempfile.gettempdir()).resolve()
    assert cwd.name.startswith("orcmem-distill-")
    assert record["files"] == []  # a fresh, empty folder
    assert not cwd.exists()  # removed afterwards
    env = record["env"]
    assert "CLAUDECODE" not in env
    assert "ANTHROPIC_API_KEY" not in env
    assert env["KEEP_ME"] == "yes" and env["HOME"] == clean_env["HOME"]
    assert env["PWD"] == record["cwd"]
    assert env["ORCMEM_DISTILLING"] == "1"
    assert record["pgid"] == record["pid"]  # its own process group
    assert clean_env["CLAUDECODE"] == "1"  # the caller's mapping is not changed


def test_model_and_api_key(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(success_envelope(envelopes, "ok")))
    generator = ClaudeCliGenerator(str(cli.path), model="claude-sonnet-5", env=clean_env, api_key="sk-ant-test-key")
    assert generator.generate(PROMPT).text == "ok"
    record = cli.record
    assert record["argv"][1:4] == ["-p", "--model", "claude-sonnet-5"]
    assert record["env"]["ANTHROPIC_API_KEY"] == "sk-ant-test-key"
    assert "sk-ant" not in repr(generator)


def test_environment_defaults_to_this_process(
    make_cli: Callable[[str, str], StandIn],
    envelopes: dict[str, dict[str, Any]],
    monkeypatch: Any,
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("ORCMEM_TEST_MARK", "here")
    cli = make_cli("claude", printing(success_envelope(envelopes, "ok")))
    assert ClaudeCliGenerator(str(cli.path)).generate(PROMPT).ok
    assert cli.record["env"]["ORCMEM_TEST_MARK"] == "here"
    assert "CLAUDECODE" not in cli.record["env"]


def test_billing_failure_comes_as_success_subtype_with_is_error(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(envelopes["billing"], exit_code=1))
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error == "Claude Code reported an error (API status 400): Credit balance is too low"


def test_not_logged_in(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(envelopes["logged_out"], exit_code=0))  # exit code is not relied on
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error == "Claude Code reported an error: Not logged in · Please run /login"


def test_max_turns_has_errors_and_no_result(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    assert "result" not in envelopes["max_turns"]
    cli = make_cli("claude", printing(envelopes["max_turns"], exit_code=1))
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error == "Claude Code reported an error (error_max_turns): Reached maximum number of turns (40)"
    tolerant = dict(envelopes["max_turns"], result="")  # some fakes add an empty result
    cli = make_cli("claude", printing(tolerant, exit_code=1))
    assert ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).error == result.error


def test_error_text_is_redacted(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    leaked = dict(envelopes["billing"], result="Invalid API key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123")
    cli = make_cli("claude", printing(leaked, exit_code=1))
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.error is not None
    assert "abcdefghijklmnop" not in result.error
    assert "[redacted:anthropic-key]" in result.error


def test_garbage_stdout(make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]) -> None:
    cli = make_cli("claude", 'print("Welcome to Claude Code! api_key=abcdefghijklmnopqrstuvwx")\n')
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error is not None
    assert result.error.startswith("Claude Code gave output that is not its JSON result: Welcome to Claude Code!")
    assert "exited with code 0" in result.error
    assert "abcdefghijklmnop" not in result.error


def test_envelope_after_a_warning_line_on_stdout(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    envelope = success_envelope(envelopes, "ok")
    cli = make_cli("claude", f'print("Warning: no stdin data received")\nprint(json.dumps({envelope!r}))\n')
    assert ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).text == "ok"


def test_non_zero_exit_without_output(make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]) -> None:
    cli = make_cli("claude", 'sys.stderr.write("error: unknown option --no-session-persistence\\n")\nsys.exit(2)\n')
    result = ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error == (
        "Claude Code gave no output (it exited with code 2); stderr: error: unknown option --no-session-persistence"
    )


def test_empty_result_is_an_error(
    make_cli: Callable[[str, str], StandIn], envelopes: dict[str, dict[str, Any]], clean_env: dict[str, str]
) -> None:
    cli = make_cli("claude", printing(success_envelope(envelopes, "   ")))
    assert ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).error == (
        "Claude Code answered with empty text"
    )


def test_missing_binary(tmp_path: Path, clean_env: dict[str, str]) -> None:
    result = ClaudeCliGenerator(str(tmp_path / "no-such-claude"), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error is not None and result.error.startswith("Claude Code could not run: it could not be started")


def test_a_hang_is_stopped_with_its_whole_process_group(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    child_pid_file = tmp_path / "child.pid"
    body = f"""
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(child_pid_file)!r}, "w").write(str(child.pid))
time.sleep(60)
"""
    cli = make_cli("claude", body)
    started = time.monotonic()
    result = ClaudeCliGenerator(str(cli.path), timeout=1, env=clean_env).generate(PROMPT)
    elapsed = time.monotonic() - started
    assert result.text is None
    assert result.error == "Claude Code gave no answer within 1 s and was stopped"
    assert elapsed < 10
    record = cli.record
    child_pid = int(child_pid_file.read_text())
    deadline = time.monotonic() + 5
    while (alive(child_pid) or group_alive(record["pgid"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(record["pid"])
    assert not alive(child_pid)
    assert not group_alive(record["pgid"])
    assert not Path(record["cwd"]).exists()


def test_a_child_left_behind_after_a_normal_exit_is_killed(
    make_cli: Callable[[str, str], StandIn],
    envelopes: dict[str, dict[str, Any]],
    tmp_path: Path,
    clean_env: dict[str, str],
) -> None:
    child_pid_file = tmp_path / "child.pid"
    envelope = success_envelope(envelopes, "ok")
    body = f"""
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
open({str(child_pid_file)!r}, "w").write(str(child.pid))
print(json.dumps({envelope!r}))
"""
    cli = make_cli("claude", body)
    assert ClaudeCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).text == "ok"
    child_pid = int(child_pid_file.read_text())
    deadline = time.monotonic() + 5
    while alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child_pid)
    assert not group_alive(cli.record["pgid"])


def test_the_answer_reader_on_its_own() -> None:
    from orcmem.extract.claude_cli import read_claude_output

    def outcome(stdout: str) -> ProcessOutcome:
        return ProcessOutcome(0, stdout, "")

    assert read_claude_output(outcome('{"type":"result","is_error":false,"result":"x"}'), 1).text == "x"
    assert read_claude_output(outcome('{"type":"result","is_error":false,"result":5}'), 1).text is None
    assert read_claude_output(outcome('{"type":"result","subtype":"error_during_execution"}'), 1).error == (
        "Claude Code reported an error (error_during_execution): no error text"
    )
    assert read_claude_output(outcome("[1,2]"), 1).text is None
    assert read_claude_output(ProcessOutcome(None, "", "", timed_out=True), 2.5).error == (
        "Claude Code gave no answer within 2.5 s and was stopped"
    )
