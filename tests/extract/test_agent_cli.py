"""Asking the agent CLIs whether someone is signed in and which models Codex offers, as the real CLIs answer."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from orcmem.extract.agent_cli import AgentCli
from orcmem.extract.resolve import describe_extraction, resolve_generator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"

# What claude 2.1.197 and codex-cli 0.171.0 print (seen on the real CLIs from npm); the stand-ins count their calls.
CLAUDE = """#!{python}
import json, os, sys
open(os.environ["CALLS"], "a").write("claude " + " ".join(sys.argv[1:]) + "\\n")
signed_in = os.path.exists(os.environ["SIGNED_IN"])
if sys.argv[1:3] == ["auth", "status"]:
    status = {{"loggedIn": signed_in, "authMethod": "claude.ai" if signed_in else "none", "apiProvider": "firstParty"}}
    print(json.dumps(status, indent=2))
    sys.exit(0 if signed_in else 1)
"""
CODEX = """#!{python}
import os, sys
open(os.environ["CALLS"], "a").write("codex " + " ".join(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["login", "status"]:
    if os.path.exists(os.environ["SIGNED_IN"]):
        print("API key configured - ***\\nAuthentication is checked when you send a request.", file=sys.stderr)
        sys.exit(0)
    print("Not logged in", file=sys.stderr)
    sys.exit(1)
if sys.argv[1:3] == ["debug", "models"]:
    print(open(os.environ["MODELS"]).read())
"""


@pytest.fixture
def agents(tmp_path: Path) -> dict[str, str]:
    """Stand-in claude and codex in a folder, and the environment that finds them."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, script in (("claude", CLAUDE), ("codex", CODEX)):
        path = folder / name
        path.write_text(script.format(python=sys.executable))
        path.chmod(0o755)
    return {
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "CALLS": str(tmp_path / "calls.txt"),
        "SIGNED_IN": str(tmp_path / "signed-in"),
        "MODELS": str(FIXTURES / "codex_debug_models_0.171.json"),
        "BIN": str(folder),
    }


def calls(env: dict[str, str]) -> list[str]:
    path = Path(env["CALLS"])
    return path.read_text().splitlines() if path.exists() else []


def test_sign_in_is_asked_once_then_cached(agents, tmp_path: Path) -> None:
    probe = AgentCli(tmp_path / "cache.json", agents)
    claude = [f"{agents['BIN']}/claude"]
    assert probe.signed_in("claude", claude) is False
    Path(agents["SIGNED_IN"]).touch()
    assert probe.signed_in("claude", claude) is False  # "signed out" is kept a minute
    assert calls(agents) == ["claude auth status --json"]
    fresh = AgentCli(tmp_path / "other-cache.json", agents)
    assert fresh.signed_in("claude", claude) is True
    assert fresh.signed_in("codex", [f"{agents['BIN']}/codex"]) is True
    assert AgentCli(tmp_path / "other-cache.json", agents).signed_in("claude", claude) is True  # from the file
    assert calls(agents).count("claude auth status --json") == 2
    assert oct((tmp_path / "cache.json").stat().st_mode & 0o777) == "0o600"


def test_a_cli_that_cannot_tell_gives_unknown(tmp_path: Path) -> None:
    old = tmp_path / "claude"
    old.write_text(f"#!{sys.executable}\nprint('error: unknown command auth')\n")
    old.chmod(0o755)
    assert AgentCli(None).signed_in("claude", [str(old)]) is None
    assert AgentCli(None).signed_in("claude", [str(tmp_path / "missing")]) is None


def test_codex_models_come_from_its_catalog(agents, tmp_path: Path) -> None:
    probe = AgentCli(tmp_path / "cache.json", agents)
    models = probe.codex_models([f"{agents['BIN']}/codex"])
    catalog = json.loads(Path(agents["MODELS"]).read_text())["models"]
    assert models == [m["slug"] for m in catalog if m["visibility"] == "list" and m["supported_in_api"]]
    assert probe.codex_models([f"{agents['BIN']}/codex"]) == models and calls(agents) == ["codex debug models"]


def test_codex_distils_with_the_first_small_model_it_lists(agents, tmp_path: Path) -> None:
    Path(agents["SIGNED_IN"]).touch()
    catalog = {"models": [{"slug": "gpt-6.2-sol", "visibility": "list"}, {"slug": "gpt-6-mini", "visibility": "list"}]}
    small = tmp_path / "models.json"
    small.write_text(json.dumps(catalog))
    env = {**agents, "MODELS": str(small)}
    probe = AgentCli(None, env)
    choice = resolve_generator(
        enabled=True, provider="auto", agent="codex", codex_bin=f"{agents['BIN']}/codex", probe=probe
    )
    assert choice.generator is not None and choice.generator.model == "gpt-6-mini"
    assert "--model" in choice.generator.argv("/tmp") and "gpt-6-mini" in choice.generator.argv("/tmp")
    # The real 0.171 catalog names no small model: the account's default is used, and said so.
    real = resolve_generator(
        enabled=True, provider="codex", agent="codex", codex_bin=f"{agents['BIN']}/codex", probe=AgentCli(None, agents)
    )
    assert real.generator is not None and real.generator.model is None and "--model" not in real.generator.argv("/t")


def test_installed_but_signed_out_asks_the_person_to_log_in(agents) -> None:
    probe = AgentCli(None, agents)
    claude = resolve_generator(
        enabled=True, provider="auto", agent="claude", claude_bin=f"{agents['BIN']}/claude", probe=probe
    )
    assert claude.generator is None and "not signed in" in claude.reason and "/login" in claude.reason
    sentence = describe_extraction(
        enabled=True,
        provider="auto",
        claude_bin=f"{agents['BIN']}/claude",
        codex_bin=f"{agents['BIN']}/codex",
        probe=probe,
    )
    assert "not installed" not in sentence and "codex login" in sentence and "sign in" in sentence


def test_the_agent_seen_running_the_hooks_distils_when_it_is_not_on_path(agents, tmp_path: Path) -> None:
    Path(agents["SIGNED_IN"]).touch()
    script = f"{agents['BIN']}/claude"
    found = [sys.executable, script]  # node and cli.js, as an npm install of Claude Code runs
    choice = resolve_generator(
        enabled=True,
        provider="auto",
        agent="claude",
        claude_bin="no-such-claude",
        found_running=found,
        probe=AgentCli(None, agents),
    )
    assert choice.generator is not None
    assert choice.generator.argv()[:3] == [sys.executable, script, "-p"]
    gone = resolve_generator(
        enabled=True,
        provider="auto",
        agent="claude",
        claude_bin="no-such-claude",
        found_running=[str(tmp_path / "gone")],
    )
    assert gone.generator is None and "not installed" in gone.reason
