"""GeminiCliGenerator against a stand-in `gemini` that prints the real `--output-format json` objects (recorded from
@google/gemini-cli 0.61.0: tests/fixtures/envelopes/gemini_json_envelopes.jsonl)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from orcmem.extract.gemini_cli import DENY_ALL_TOOLS, GeminiCliGenerator, gemini_envelope
from orcmem.extract.parse import parse_extraction
from orcmem.extract.prompt import build_prompt
from orcmem.models.usage import Usage
from tests.extract.support import StandIn

ENVELOPES = Path(__file__).parent.parent / "fixtures" / "envelopes" / "gemini_json_envelopes.jsonl"
SUCCESS, FAILURE = (json.loads(line) for line in ENVELOPES.read_text(encoding="utf-8").splitlines())
PROMPT = build_prompt("conversation", None, "## User asked\nSECRET-PROMPT-MARKER")
ANSWER = json.dumps(
    {
        "summary": {"request": "r", "workDone": "w", "outcome": "o", "openItems": []},
        "memories": [
            {
                "type": "lesson",
                "title": "Release builds need the lockfile",
                "body": "cargo build --release fails without Cargo.lock",
                "topicKey": None,
                "files": [],
                "confidence": 0.7,
            }
        ],
    }
)

# As the real CLI: the object indented on stdout, after noise on stderr; the folder's files are recorded too.
ANSWERS = f"""
envelope = {json.dumps({**SUCCESS, "response": ANSWER})!r}
listing = {{name: open(os.path.join(root, name)).read() for root, _, names in os.walk(".") for name in names}}
with open({{record!r}}.replace(".record.json", ".folder.json"), "w") as f:
    json.dump(listing, f)
sys.stderr.write("Ripgrep is not available. Falling back to GrepTool.\\n")
print(json.dumps(json.loads(envelope), indent=2))
"""
# An API error: the report on stderr, then the error object, and exit 144.
FAILS = f"""
sys.stderr.write("Error when talking to Gemini API _ApiError: ...\\n    at throwErrorIfNotOK (chunk.js:1)\\n{{\\n")
sys.stderr.write(json.dumps({FAILURE!r}, indent=2) + "\\n")
sys.exit(144)
"""


def stand_in(make_cli: Callable[[str, str], StandIn], tmp_path: Path, body: str) -> StandIn:
    return make_cli("gemini", body.replace("{record!r}", repr(str(tmp_path / "gemini.record.json"))))


def test_the_answer_and_its_usage_come_from_the_json_object(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, tmp_path, ANSWERS)
    result = GeminiCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text == ANSWER
    parsed = parse_extraction(result.text)
    assert parsed is not None and parsed.memories[0].title == "Release builds need the lockfile"
    assert result.usage == Usage(input_tokens=10, output_tokens=4, model="gemini-2.5-flash")


def test_one_headless_turn_without_tools_hooks_mcp_or_extensions(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, tmp_path, ANSWERS)
    assert GeminiCliGenerator(str(cli.path), model="gemini-2.5-flash-lite", env=clean_env).generate(PROMPT).ok
    record = cli.record
    workdir = Path(record["cwd"])
    assert record["argv"][1:] == [
        "-p",
        "",
        "--output-format",
        "json",
        "--model",
        "gemini-2.5-flash-lite",
        "--allowed-mcp-server-names",
        "orcmem-distill-none",
        "--extensions",
        "none",
        "--policy",
        str(workdir / "deny-all-tools.toml"),
    ]
    assert record["stdin"] == PROMPT and not any("SECRET-PROMPT-MARKER" in arg for arg in record["argv"])
    assert workdir.parent == Path(tempfile.gettempdir()).resolve() and workdir.name.startswith("orcmem-distill-")
    assert not workdir.exists()
    folder = json.loads((tmp_path / "gemini.folder.json").read_text())
    assert folder["deny-all-tools.toml"] == DENY_ALL_TOOLS
    assert json.loads(folder["settings.json"]) == {"hooksConfig": {"enabled": False}, "model": {"maxSessionTurns": 1}}
    env = record["env"]
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"  # the folder's settings apply only when it is trusted
    assert env["ORCMEM_DISTILLING"] == "1" and env["KEEP_ME"] == "yes" and env["PWD"] == record["cwd"]


def test_an_api_error_is_the_error_objects_message(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, tmp_path, FAILS)
    result = GeminiCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert not result.ok and not result.rate_limited
    assert result.error is not None and result.error.startswith("Gemini CLI reported an error (code 400): ")
    assert "API key not valid" in result.error


def test_a_rate_limit_is_said_so(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    limited = {**FAILURE, "error": {"type": "Error", "message": "Resource exhausted", "code": 429}}
    cli = stand_in(make_cli, tmp_path, FAILS.replace(repr(FAILURE), repr(limited)))
    assert GeminiCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).rate_limited


def test_no_json_and_a_missing_binary_are_errors(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = stand_in(make_cli, tmp_path, 'print("Loaded cached credentials.")\nsys.exit(41)\n')
    result = GeminiCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.error is not None and result.error.startswith("Gemini CLI gave no JSON result")
    missing = GeminiCliGenerator(str(tmp_path / "nope"), env=clean_env).generate(PROMPT)
    assert missing.error is not None and missing.error.startswith("Gemini CLI could not run")


def test_the_envelope_is_the_last_object_at_the_end() -> None:
    assert gemini_envelope(json.dumps(SUCCESS, indent=2)) == SUCCESS
    assert gemini_envelope("report {not json}\n" + json.dumps(FAILURE, indent=2) + "\n") == FAILURE
    assert gemini_envelope("no object here") is None
