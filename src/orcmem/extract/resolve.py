"""Which agent and model summarize a run under the current settings, and the sentence that says so."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from orcmem.extract.agent_cli import LOGIN_HINTS
from orcmem.extract.anthropic_api import AnthropicApiGenerator, anthropic_available
from orcmem.extract.claude_cli import ClaudeCliGenerator
from orcmem.extract.codex_cli import CodexCliGenerator, pick_codex_model
from orcmem.extract.constants import (
    AGENT_NAMES,
    CLAUDE_BINARY,
    CODEX_BINARY,
    DEFAULT_CLAUDE_MODEL_LABEL,
    GEMINI_BINARY,
    OPENCODE_BINARY,
)
from orcmem.extract.gemini_cli import GeminiCliGenerator
from orcmem.extract.generator import Generator
from orcmem.extract.opencode_cli import OpenCodeCliGenerator
from orcmem.models.constants import DEFAULT_CLAUDE_MODEL, DEFAULT_GEMINI_MODEL, GENERATOR_TIMEOUT_S
from orcmem.models.vocabulary import Agent

# The agents whose CLI can summarize a run; `auto`'s sentence names the optional ones only where installed.
DISTILLING_AGENTS = (Agent.CLAUDE.value, Agent.CODEX.value, Agent.GEMINI.value, Agent.OPENCODE.value)
OPTIONAL_AGENTS = (Agent.GEMINI.value, Agent.OPENCODE.value)
NO_API_KEY_REASON = "Add an Anthropic API key, or pick another provider."
API_KEY_NEEDS_CLIENT_REASON = (
    "The Anthropic API key needs the anthropic package (pip install anthropic, in orcmem's environment) "
    "or Claude Code installed."
)
CODEX_DEFAULT_MODEL_LABEL = "the account's default Codex model"
OPENCODE_DEFAULT_MODEL_LABEL = "OpenCode's configured model"
OFF_SENTENCE = "Finished runs are not summarized. Agents can still save memories."
PAUSED_SENTENCE = "Learning is paused while orcmem memory is off. Your provider choice is kept."


class AgentProbe(Protocol):
    """What an installed agent CLI can be asked (orcmem.extract.agent_cli.AgentCli, or a test's stand-in)."""

    def signed_in(self, agent: str, command: Sequence[str]) -> bool | None:
        """Whether someone is signed in to the CLI; None when it cannot tell."""
        ...

    def codex_models(self, command: Sequence[str]) -> list[str]:
        """The models Codex offers, in its order."""
        ...


@dataclass(frozen=True, slots=True)
class GeneratorChoice:
    """The generator for a run, or None and why not (no reason when memory or extraction is simply off)."""

    generator: Generator | None
    reason: str | None = None
    label: str | None = None  # the model, for humans: "Claude Haiku 4.5", "gpt-5-mini"


@dataclass(frozen=True, slots=True)
class _Plan:
    """A resolved provider before any generator is built."""

    provider: str  # "claude", "codex", "gemini", "opencode" or "apikey"
    model: str | None
    label: str
    binary: str | None = None  # the CLI to run; None for the API
    launcher: tuple[str, ...] = ()  # what runs the binary when it is a script (node for Claude Code's cli.js)


def agent_name(agent: str) -> str:
    """The agent's name for people: "Claude Code", "Codex", "OpenCode", or the id itself."""
    return AGENT_NAMES.get(agent, agent)


def claude_label(model: str) -> str:
    """A Claude model for people: the default's name, or the raw id."""
    return DEFAULT_CLAUDE_MODEL_LABEL if model == DEFAULT_CLAUDE_MODEL else model


def find_binary(command: str) -> str | None:
    """The full path of `command` (a name looked up on PATH, or a path), or None when it cannot be run."""
    return shutil.which(command)


def _not_installed(agent: str, command: str) -> str:
    return f"{agent_name(agent)} is not installed: `{command}` was not found."


def _not_signed_in(agent: str) -> str:
    return f"{agent_name(agent)} is installed but not signed in: {LOGIN_HINTS.get(agent, 'sign in to it')}."


def _locate(command: str, found_running: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """The binary and its launcher: `command` on PATH, else the agent CLI seen running the session's hooks."""
    binary = find_binary(command)
    if binary is not None:
        return binary, ()
    runnable = found_running and all(os.path.isfile(part) for part in found_running)
    if runnable and os.access(found_running[0], os.X_OK):
        return found_running[-1], tuple(found_running[:-1])
    return None


def _cli_plan(
    agent: str,
    models: Mapping[str, str],
    claude_bin: str | None,
    codex_bin: str | None,
    codex_models: Sequence[str],
    found_running: Sequence[str] = (),
    probe: AgentProbe | None = None,
) -> _Plan | str:
    """The plan for running `agent`'s own CLI, or why it cannot run (not installed, or nobody signed in)."""
    if agent not in DISTILLING_AGENTS:
        return f"{agent_name(agent)} cannot summarize runs yet."
    commands = {
        "claude": claude_bin or CLAUDE_BINARY,
        "codex": codex_bin or CODEX_BINARY,
        "gemini": GEMINI_BINARY,
        "opencode": OPENCODE_BINARY,
    }
    command = commands[agent]
    located = _locate(command, found_running)
    if located is None:
        return _not_installed(agent, command)
    binary, launcher = located
    argv = [*launcher, binary]
    if probe is not None and probe.signed_in(agent, argv) is False:
        return _not_signed_in(agent)
    if agent == "claude":
        model = models.get("claude") or DEFAULT_CLAUDE_MODEL
        return _Plan("claude", model, claude_label(model), binary, launcher)
    if agent == "gemini":
        model = models.get("gemini") or DEFAULT_GEMINI_MODEL
        return _Plan("gemini", model, model, binary, launcher)
    if agent == "opencode":
        chosen_model = models.get("opencode") or None
        return _Plan("opencode", chosen_model, chosen_model or OPENCODE_DEFAULT_MODEL_LABEL, binary, launcher)
    listed = codex_models or (probe.codex_models(argv) if probe is not None and not models.get("codex") else ())
    chosen = models.get("codex") or pick_codex_model(listed)
    return _Plan("codex", chosen, chosen or CODEX_DEFAULT_MODEL_LABEL, binary, launcher)


def _api_plan(
    has_key: bool, api_key_error: str | None, models: Mapping[str, str], claude_bin: str | None
) -> _Plan | str:
    """The plan for the Anthropic API key: the API client when installed, else Claude Code with the key."""
    if not has_key:
        return api_key_error or NO_API_KEY_REASON
    model = models.get("claude") or DEFAULT_CLAUDE_MODEL
    if anthropic_available():
        return _Plan("apikey", model, claude_label(model))
    binary = find_binary(claude_bin or CLAUDE_BINARY)
    if binary is None:
        return API_KEY_NEEDS_CLIENT_REASON
    return _Plan("apikey", model, claude_label(model), binary)


def _plan(
    *,
    provider: str,
    models: Mapping[str, str],
    agent: str | None,
    has_key: bool,
    api_key_error: str | None,
    claude_bin: str | None,
    codex_bin: str | None,
    codex_models: Sequence[str],
    found_running: Sequence[str] = (),
    probe: AgentProbe | None = None,
) -> _Plan | str | None:
    """A plan, a reason there is none, or None when extraction is off."""
    if provider == "off":
        return None
    if provider == "apikey":
        return _api_plan(has_key, api_key_error, models, claude_bin)
    if provider == "auto":
        if agent is None:
            return "The run's agent is not known, so it is not summarized automatically. Choose a provider."
        if agent not in DISTILLING_AGENTS:
            return f"{agent_name(agent)} runs are not summarized automatically. Choose a provider to include them."
        return _cli_plan(agent, models, claude_bin, codex_bin, codex_models, found_running, probe)
    if provider in DISTILLING_AGENTS or provider in AGENT_NAMES:
        running = found_running if provider == agent else ()
        return _cli_plan(provider, models, claude_bin, codex_bin, codex_models, running, probe)
    return f"Unknown extraction provider {provider!r}; choose auto, claude, codex, gemini, opencode, apikey or off."


def resolve_generator(
    *,
    enabled: bool,
    provider: str | None,
    models: Mapping[str, str] | None = None,
    agent: str | None = None,
    api_key: str | None = None,
    api_key_error: str | None = None,
    claude_bin: str | None = None,
    codex_bin: str | None = None,
    codex_models: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = GENERATOR_TIMEOUT_S,
    found_running: Sequence[str] = (),
    probe: AgentProbe | None = None,
) -> GeneratorChoice:
    """The generator that summarizes a run by `agent` ("claude"/"codex"/"gemini"/"opencode"), or why there is none.

    `provider` is auto, claude, codex, gemini, opencode, apikey or off (None: auto); `models` maps each agent to a
    chosen model (apikey uses the "claude" entry); `claude_bin`/`codex_bin` override the commands looked up on
    PATH; `codex_models` lists Codex's models when known, to pick a small one (else `probe` is asked).
    `found_running` is the argv of the agent CLI seen running the run's hooks, used when the command is not on PATH;
    `probe` tells whether someone is signed in. Memory off or provider off gives no generator and no reason.
    """
    if not enabled:
        return GeneratorChoice(None)
    key = (api_key or "").strip()
    plan = _plan(
        provider=(provider or "auto").strip().lower(),
        models=models or {},
        agent=agent,
        has_key=bool(key),
        api_key_error=api_key_error,
        claude_bin=claude_bin,
        codex_bin=codex_bin,
        codex_models=codex_models,
        found_running=found_running,
        probe=probe,
    )
    if plan is None:
        return GeneratorChoice(None)
    if isinstance(plan, str):
        return GeneratorChoice(None, plan)
    generator: Generator
    if plan.provider == "apikey" and plan.binary is None:
        generator = AnthropicApiGenerator(key, model=plan.model or DEFAULT_CLAUDE_MODEL, timeout=timeout)
    elif plan.provider in ("apikey", "claude"):
        assert plan.binary is not None
        generator = ClaudeCliGenerator(
            plan.binary,
            model=plan.model or DEFAULT_CLAUDE_MODEL,
            timeout=timeout,
            env=env,
            api_key=key if plan.provider == "apikey" else None,
            launcher=plan.launcher,
        )
    elif plan.provider == "gemini":
        assert plan.binary is not None
        generator = GeminiCliGenerator(plan.binary, model=plan.model, timeout=timeout, env=env, launcher=plan.launcher)
    elif plan.provider == "opencode":
        assert plan.binary is not None
        generator = OpenCodeCliGenerator(plan.binary, plan.model, timeout, env, plan.launcher)
    else:
        assert plan.binary is not None
        generator = CodexCliGenerator(plan.binary, model=plan.model, timeout=timeout, env=env, launcher=plan.launcher)
    return GeneratorChoice(generator, None, plan.label)


def _join(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + ", and " + items[-1]


def describe_extraction(
    *,
    enabled: bool,
    provider: str | None,
    models: Mapping[str, str] | None = None,
    has_api_key: bool = False,
    api_key_error: str | None = None,
    claude_bin: str | None = None,
    codex_bin: str | None = None,
    codex_models: Sequence[str] = (),
    probe: AgentProbe | None = None,
) -> str:
    """One sentence for `orcmem memory status`: which agent and model summarize finished runs, or why none does."""
    if not enabled:
        return PAUSED_SENTENCE
    chosen = (provider or "auto").strip().lower()

    def plan_of(provider: str, agent: str | None) -> _Plan | str | None:
        return _plan(
            provider=provider,
            agent=agent,
            models=models or {},
            has_key=has_api_key,
            api_key_error=api_key_error,
            claude_bin=claude_bin,
            codex_bin=codex_bin,
            codex_models=codex_models,
            probe=probe,
        )

    if chosen == "auto":
        covered: list[str] = []
        missing: list[str] = []
        reasons: list[str] = []
        for agent in DISTILLING_AGENTS:
            plan = plan_of("auto", agent)
            if agent in OPTIONAL_AGENTS and isinstance(plan, str) and "not installed" in plan:
                continue
            if isinstance(plan, _Plan):
                label = (plan.model or "its default model") if agent == "codex" else plan.label
                covered.append(f"{agent_name(agent)} runs by {label}")
            else:
                missing.append(agent_name(agent))
                reasons.append(plan if isinstance(plan, str) else "")
        signed_out = [reason for reason in reasons if "not signed in" in reason]
        if not covered and not signed_out:
            return (
                f"No finished run is summarized: neither {' nor '.join(missing)} is installed. "
                "Install one, or add an Anthropic API key and choose it as the provider."
            )
        if not covered:
            return "No finished run is summarized. " + " ".join(reasons)
        sentence = f"Each finished run is summarized by the agent that ran it: {_join(covered)}."
        for name, reason in zip(missing, reasons, strict=True):
            if "not signed in" in reason:
                sentence += f" {name} runs are not summarized until you sign in: {reason}"
            else:
                sentence += f" {name} runs are not summarized because {name} is not installed."
        return sentence
    plan = plan_of(chosen, None)
    if plan is None:
        return OFF_SENTENCE
    if isinstance(plan, str):
        return plan
    through = "your Anthropic API key" if plan.provider == "apikey" else agent_name(plan.provider)
    return f"Every finished run, whichever agent did the work, is summarized by {plan.label} through {through}."
