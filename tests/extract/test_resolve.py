"""Which generator summarizes a run under each provider setting, and the sentence for `orcmem memory status`."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.extract import resolve as resolve_module
from orcmem.extract.anthropic_api import AnthropicApiGenerator
from orcmem.extract.claude_cli import ClaudeCliGenerator
from orcmem.extract.codex_cli import CodexCliGenerator
from orcmem.extract.gemini_cli import GeminiCliGenerator
from orcmem.extract.opencode_cli import OpenCodeCliGenerator
from orcmem.extract.resolve import GeneratorChoice, describe_extraction, resolve_generator


def install(folder: Path, *names: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = folder / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)


@pytest.fixture
def path_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only this (initially empty) folder."""
    folder = tmp_path / "path"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def resolve(**kw) -> GeneratorChoice:
    kw.setdefault("enabled", True)
    return resolve_generator(**kw)


def describe(**kw) -> str:
    kw.setdefault("enabled", True)
    return describe_extraction(**kw)


# --- resolution ------------------------------------------------------------------------------------------------
def test_memory_off_or_provider_off_gives_nothing_and_no_reason(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    assert resolve(enabled=False, provider="claude", agent="claude") == GeneratorChoice(None, None, None)
    assert resolve(provider="off", agent="claude") == GeneratorChoice(None, None, None)


def test_auto_uses_the_agent_that_ran(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    claude = resolve(provider="auto", agent="claude")
    assert isinstance(claude.generator, ClaudeCliGenerator)
    assert claude.generator.binary == str(path_dir / "claude")
    assert claude.generator.model == "claude-haiku-4-5-20251001"
    assert claude.generator.api_key is None
    assert (claude.reason, claude.label) == (None, "Claude Haiku 4.5")
    codex = resolve(provider=None, agent="codex")
    assert isinstance(codex.generator, CodexCliGenerator)
    assert codex.generator.binary == str(path_dir / "codex")
    assert codex.generator.model is None
    assert codex.label == "the account's default Codex model"


def test_auto_picks_a_small_codex_model_or_the_chosen_one(path_dir: Path) -> None:
    install(path_dir, "codex")
    picked = resolve(provider="auto", agent="codex", codex_models=["gpt-5", "gpt-5-codex-mini"])
    assert isinstance(picked.generator, CodexCliGenerator)
    assert picked.generator.model == "gpt-5-codex-mini" and picked.label == "gpt-5-codex-mini"
    chosen = resolve(provider="auto", agent="codex", models={"codex": "o3"}, codex_models=["gpt-5-mini"])
    assert chosen.generator is not None and chosen.generator.model == "o3"


def test_auto_when_the_agents_cli_is_missing(path_dir: Path) -> None:
    install(path_dir, "claude")
    choice = resolve(provider="auto", agent="codex")
    assert choice == GeneratorChoice(None, "Codex is not installed: `codex` was not found.")


def test_auto_never_sends_a_run_to_another_agent(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    choice = resolve(provider="auto", agent="copilot")
    assert choice.generator is None
    assert choice.reason == "Copilot CLI runs are not summarized automatically. Choose a provider to include them."
    assert resolve(provider="auto", agent="opencode").reason == "OpenCode is not installed: `opencode` was not found."
    unknown = resolve(provider="auto", agent=None)
    assert unknown.generator is None and unknown.reason is not None


def test_a_chosen_cli_summarizes_every_agents_runs(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    choice = resolve(provider="claude", agent="codex", models={"claude": "claude-sonnet-5"})
    assert isinstance(choice.generator, ClaudeCliGenerator)
    assert choice.generator.model == "claude-sonnet-5" and choice.label == "claude-sonnet-5"
    choice = resolve(provider="codex", agent="claude")
    assert isinstance(choice.generator, CodexCliGenerator)


def test_gemini_cli_summarizes_its_own_runs_and_any_run_when_chosen(path_dir: Path) -> None:
    install(path_dir, "gemini")
    own = resolve(provider="auto", agent="gemini")
    assert isinstance(own.generator, GeminiCliGenerator)
    assert own.generator.binary == str(path_dir / "gemini") and own.generator.model == "gemini-2.5-flash"
    chosen = resolve(provider="gemini", agent="claude", models={"gemini": "gemini-2.5-pro"})
    assert isinstance(chosen.generator, GeminiCliGenerator) and chosen.label == "gemini-2.5-pro"
    assert describe(provider="gemini") == (
        "Every finished run, whichever agent did the work, is summarized by gemini-2.5-flash through Gemini CLI."
    )
    assert describe(provider="auto") == (
        "Each finished run is summarized by the agent that ran it: Gemini CLI runs by gemini-2.5-flash. "
        "Claude Code runs are not summarized because Claude Code is not installed. "
        "Codex runs are not summarized because Codex is not installed."
    )


def test_opencode_summarizes_its_own_runs_and_any_run_when_chosen(path_dir: Path) -> None:
    install(path_dir, "opencode")
    own = resolve(provider="auto", agent="opencode")
    assert isinstance(own.generator, OpenCodeCliGenerator)
    assert own.generator.binary == str(path_dir / "opencode") and own.generator.model is None
    chosen = resolve(provider="opencode", agent="claude", models={"opencode": "anthropic/claude-haiku-4-5"})
    assert isinstance(chosen.generator, OpenCodeCliGenerator) and chosen.label == "anthropic/claude-haiku-4-5"
    assert chosen.generator.model == "anthropic/claude-haiku-4-5"
    assert describe(provider="opencode") == (
        "Every finished run, whichever agent did the work, is summarized by OpenCode's configured model "
        "through OpenCode."
    )
    assert describe(provider="auto") == (
        "Each finished run is summarized by the agent that ran it: OpenCode runs by OpenCode's configured model. "
        "Claude Code runs are not summarized because Claude Code is not installed. "
        "Codex runs are not summarized because Codex is not installed."
    )


def test_a_chosen_cli_that_is_missing(path_dir: Path) -> None:
    choice = resolve(provider="claude", agent="claude")
    assert choice == GeneratorChoice(None, "Claude Code is not installed: `claude` was not found.")
    assert resolve(provider="copilot", agent="claude").reason == "Copilot CLI cannot summarize runs yet."
    assert resolve(provider="gemini", agent="claude").reason == "Gemini CLI is not installed: `gemini` was not found."
    assert resolve(provider="llama", agent="claude").reason == (
        "Unknown extraction provider 'llama'; choose auto, claude, codex, gemini, opencode, apikey or off."
    )


def test_binary_overrides(path_dir: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    install(elsewhere, "my-claude", "my-codex")
    claude = resolve(provider="auto", agent="claude", claude_bin=str(elsewhere / "my-claude"))
    assert claude.generator is not None and claude.generator.binary == str(elsewhere / "my-claude")
    codex = resolve(provider="codex", agent="claude", codex_bin=str(elsewhere / "my-codex"))
    assert codex.generator is not None and codex.generator.binary == str(elsewhere / "my-codex")
    missing = resolve(provider="claude", agent="claude", claude_bin=str(tmp_path / "nope"))
    assert missing.reason == f"Claude Code is not installed: `{tmp_path / 'nope'}` was not found."


def test_settings_pass_through_to_the_generator(path_dir: Path) -> None:
    install(path_dir, "claude")
    env = {"PATH": "/bin"}
    choice = resolve(provider="claude", agent="claude", env=env, timeout=30)
    assert isinstance(choice.generator, ClaudeCliGenerator)
    assert choice.generator.env is env and choice.generator.timeout == 30


def test_apikey_uses_the_api_with_the_claude_model(path_dir: Path) -> None:
    choice = resolve(provider="apikey", agent="codex", api_key="  sk-ant-key  ", models={"claude": "claude-opus-5"})
    assert isinstance(choice.generator, AnthropicApiGenerator)
    assert choice.generator.api_key == "sk-ant-key"
    assert choice.generator.model == "claude-opus-5" and choice.label == "claude-opus-5"


def test_apikey_without_a_key(path_dir: Path) -> None:
    assert resolve(provider="apikey", agent="claude") == GeneratorChoice(
        None, "Add an Anthropic API key, or pick another provider."
    )
    assert resolve(provider="apikey", agent="claude", api_key="  ").generator is None
    stored = resolve(provider="apikey", agent="claude", api_key_error="Cannot access protected memory storage.")
    assert stored.reason == "Cannot access protected memory storage."


def test_apikey_without_the_anthropic_package_falls_back_to_claude_code(
    path_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolve_module, "anthropic_available", lambda: False)
    assert resolve(provider="apikey", agent="claude", api_key="sk-ant-key").reason == (
        "The Anthropic API key needs the anthropic package (pip install anthropic, in orcmem's environment) "
        "or Claude Code installed."
    )
    install(path_dir, "claude")
    choice = resolve(provider="apikey", agent="codex", api_key="sk-ant-key")
    assert isinstance(choice.generator, ClaudeCliGenerator)
    assert choice.generator.api_key == "sk-ant-key" and choice.label == "Claude Haiku 4.5"


# --- the sentence ----------------------------------------------------------------------------------------------
def test_sentence_when_memory_is_off(path_dir: Path) -> None:
    assert describe(enabled=False, provider="auto") == (
        "Learning is paused while orcmem memory is off. Your provider choice is kept."
    )


def test_sentence_when_extraction_is_off(path_dir: Path) -> None:
    assert describe(provider="off") == "Finished runs are not summarized. Agents can still save memories."


def test_sentence_for_auto(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    assert describe(provider="auto") == (
        "Each finished run is summarized by the agent that ran it: "
        "Claude Code runs by Claude Haiku 4.5 and Codex runs by its default model."
    )
    assert describe(provider="auto", models={"codex": "gpt-5-mini", "claude": "claude-sonnet-5"}) == (
        "Each finished run is summarized by the agent that ran it: "
        "Claude Code runs by claude-sonnet-5 and Codex runs by gpt-5-mini."
    )


def test_sentence_for_auto_with_a_cli_missing(path_dir: Path) -> None:
    install(path_dir, "claude")
    assert describe(provider="auto") == (
        "Each finished run is summarized by the agent that ran it: Claude Code runs by Claude Haiku 4.5. "
        "Codex runs are not summarized because Codex is not installed."
    )


def test_sentence_for_auto_with_no_cli(path_dir: Path) -> None:
    assert describe(provider="auto") == (
        "No finished run is summarized: neither Claude Code nor Codex is installed. "
        "Install one, or add an Anthropic API key and choose it as the provider."
    )


def test_sentence_for_a_chosen_provider(path_dir: Path) -> None:
    install(path_dir, "claude", "codex")
    assert describe(provider="claude") == (
        "Every finished run, whichever agent did the work, is summarized by Claude Haiku 4.5 through Claude Code."
    )
    assert describe(provider="codex", models={"codex": "gpt-5-nano"}) == (
        "Every finished run, whichever agent did the work, is summarized by gpt-5-nano through Codex."
    )
    assert describe(provider="codex") == (
        "Every finished run, whichever agent did the work, is summarized by the account's default Codex model "
        "through Codex."
    )
    assert describe(provider="apikey", has_api_key=True) == (
        "Every finished run, whichever agent did the work, is summarized by Claude Haiku 4.5 "
        "through your Anthropic API key."
    )


def test_sentence_for_a_chosen_provider_that_cannot_run(path_dir: Path) -> None:
    assert describe(provider="claude") == "Claude Code is not installed: `claude` was not found."
    assert describe(provider="apikey") == "Add an Anthropic API key, or pick another provider."
