"""CodexCliGenerator against a stand-in `codex` that writes (or does not write) its -o file."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orcmem.extract.codex_cli import CodexCliGenerator, pick_codex_model
from orcmem.extract.parse import parse_extraction
from orcmem.extract.prompt import OUTPUT_SCHEMA, build_prompt
from tests.extract.support import StandIn, alive, group_alive

PROMPT = build_prompt("conversation", None, "## User asked\nSECRET-PROMPT-MARKER")
ANSWER = json.dumps(
    {
        "summary": {"request": "r", "workDone": "w", "outcome": "o", "openItems": ["next"]},
        "memories": [
            {
                "type": "command",
                "title": "Run tests with make check",
                "body": "make check runs ruff and pytest",
                "topicKey": None,
                "files": ["Makefile"],
                "confidence": 0.7,
            }
        ],
    }
)

# Codex prints progress on stderr and the final message on stdout, and writes it to the -o file.
WRITES_ANSWER = f"""
out = sys.argv[sys.argv.index("-o") + 1]
schema = sys.argv[sys.argv.index("--output-schema") + 1]
with open({{record!r}}.replace(".record.json", ".schema.json"), "w") as f:
    f.write(open(schema).read())
sys.stderr.write("[codex] thinking...\\n")
print({ANSWER!r})
open(out, "w").write("\\n" + {ANSWER!r} + "\\n\\n")
"""


def body_with_record(stand_in_body: str, tmp_path: Path) -> str:
    return stand_in_body.replace("{record!r}", repr(str(tmp_path / "codex.record.json")))


def test_answer_comes_from_the_last_message_file(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = make_cli("codex", body_with_record(WRITES_ANSWER, tmp_path))
    result = CodexCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text == ANSWER  # trimmed
    parsed = parse_extraction(result.text)
    assert parsed is not None and parsed.memories[0].type == "command"


def test_exact_command_line_files_stdin_and_environment(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = make_cli("codex", body_with_record(WRITES_ANSWER, tmp_path))
    assert CodexCliGenerator(str(cli.path), env=clean_env).generate(PROMPT).ok
    record = cli.record
    workdir = Path(record["cwd"])
    assert record["argv"][1:] == [
        "exec",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
        "--ephemeral",
        "-c",
        "mcp_servers={}",
        "-c",
        "features.hooks=false",
        "--output-schema",
        str(workdir / "schema.json"),
        "-o",
        str(workdir / "last.txt"),
        "--json",
        "-",
    ]
    assert not any("SECRET-PROMPT-MARKER" in arg for arg in record["argv"])
    assert record["stdin"] == PROMPT
    assert workdir.parent == Path(tempfile.gettempdir()).resolve()
    assert workdir.name.startswith("orcmem-distill-")
    assert record["files"] == ["schema.json"]
    assert not workdir.exists()
    assert json.loads((tmp_path / "codex.schema.json").read_text()) == OUTPUT_SCHEMA
    env = record["env"]
    assert env["NO_COLOR"] == "1"
    assert env["KEEP_ME"] == "yes"
    assert env["PWD"] == record["cwd"]
    assert env["ORCMEM_DISTILLING"] == "1"


def test_model_goes_before_the_other_flags(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = make_cli("codex", body_with_record(WRITES_ANSWER, tmp_path))
    assert CodexCliGenerator(str(cli.path), model="gpt-5-mini", env=clean_env).generate(PROMPT).ok
    assert cli.record["argv"][1:5] == ["exec", "--model", "gpt-5-mini", "--skip-git-repo-check"]


def test_the_hooks_switch_can_be_left_out(
    make_cli: Callable[[str, str], StandIn], tmp_path: Path, clean_env: dict[str, str]
) -> None:
    cli = make_cli("codex", body_with_record(WRITES_ANSWER, tmp_path))
    assert CodexCliGenerator(str(cli.path), env=clean_env, disable_hooks=False).generate(PROMPT).ok
    argv = cli.record["argv"]
    assert "features.hooks=false" not in argv
    assert argv[argv.index("mcp_servers={}") + 1] == "--output-schema"


@pytest.mark.parametrize("written", [None, "", "  \n\t "])
def test_no_final_message_is_an_error(
    make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str], written: str | None
) -> None:
    write = "" if written is None else f'open(sys.argv[sys.argv.index("-o") + 1], "w").write({written!r})\n'
    body = write + 'print("partial answer on stdout")\nsys.stderr.write("ERROR: stream disconnected\\n")\nsys.exit(1)\n'
    cli = make_cli("codex", body)
    result = CodexCliGenerator(str(cli.path), env=clean_env).generate(PROMPT)
    assert result.text is None
    assert result.error == "Codex wrote no final message (it exited with code 1); stderr: ERROR: stream disconnected"
    assert not Path(cli.record["cwd"]).exists()


def test_a_hang_is_stopped(make_cli: Callable[[str, str], StandIn], clean_env: dict[str, str]) -> None:
    cli = make_cli("codex", "time.sleep(60)\n")
    started = time.monotonic()
    result = CodexCliGenerator(str(cli.path), timeout=1, env=clean_env).generate(PROMPT)
    assert result.error == "Codex gave no answer within 1 s and was stopped"
    assert time.monotonic() - started < 10
    record = cli.record
    assert not alive(record["pid"]) and not group_alive(record["pgid"])
    assert not Path(record["cwd"]).exists()


def test_missing_binary(tmp_path: Path) -> None:
    result = CodexCliGenerator(str(tmp_path / "no-codex")).generate(PROMPT)
    assert result.error is not None and result.error.startswith("Codex could not run: it could not be started")


def test_pick_codex_model() -> None:
    assert pick_codex_model(["gpt-5", "gpt-5-codex-Mini", "gpt-5-nano"]) == "gpt-5-codex-Mini"
    assert pick_codex_model(["gpt-5.3-codex-spark", "gpt-5-mini"]) == "gpt-5.3-codex-spark"
    assert pick_codex_model(["o3", "NANO-1"]) == "NANO-1"
    assert pick_codex_model(["gpt-5", "o3"]) is None
    assert pick_codex_model([]) is None


def test_every_configured_mcp_server_is_switched_off_by_name(tmp_path) -> None:
    from orcmem.extract.codex_cli import codex_argv, configured_mcp_servers

    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\n[mcp_servers.orcmem]\ncommand = "orcmem"\n[mcp_servers.docs-search]\ncommand = "d"\n'
        '[mcp_servers."odd.name"]\ncommand = "x"\n'
    )
    servers = configured_mcp_servers({"CODEX_HOME": str(codex_home)})
    assert servers == ["orcmem", "docs-search"]  # a name a dotted -c path cannot hold is left out
    argv = codex_argv("codex", None, "/w", mcp_servers=servers)
    assert "mcp_servers.orcmem.enabled=false" in argv and "mcp_servers.docs-search.enabled=false" in argv
    assert "mcp_servers={}" not in argv
    assert configured_mcp_servers({"CODEX_HOME": str(tmp_path / "none")}) == []
