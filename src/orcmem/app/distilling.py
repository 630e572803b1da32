"""Which agent and model distil a run on this machine: the generator for each run, and the sentence that says so.

Apart from runtime (which opens the service), so that commands that never distil do not import the extraction
machinery.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from orcmem.extract.agent_cli import AgentCli
from orcmem.extract.resolve import GeneratorChoice, resolve_generator
from orcmem.extract.resolve import describe_extraction as describe
from orcmem.host.keystore import load_api_key
from orcmem.models.constants import GENERATOR_TIMEOUT_S
from orcmem.service.learning import GeneratorFactory
from orcmem.service.memory_service import MemoryService
from orcmem.store.runs import Run

CLAUDE_BIN_ENV = "ORCMEM_CLAUDE_BIN"  # the claude command to run for distillation (default: `claude` on PATH)
CODEX_BIN_ENV = "ORCMEM_CODEX_BIN"
TIMEOUT_ENV = "ORCMEM_DISTILL_TIMEOUT"  # seconds one distillation call may take (default: GENERATOR_TIMEOUT_S)


def _timeout(env: Mapping[str, str]) -> float:
    try:
        value = float(env.get(TIMEOUT_ENV, ""))
    except ValueError:
        return GENERATOR_TIMEOUT_S
    return value if value > 0 else GENERATOR_TIMEOUT_S


AGENT_CLI_CACHE = "agent-cli.json"  # what claude and codex said about sign-in and models, cached


def agent_probe(service: MemoryService, env: Mapping[str, str]) -> AgentCli:
    """Asks the agent CLIs about sign-in and models, caching the answers beside the profile database."""
    return AgentCli(service.home / AGENT_CLI_CACHE, env)


def _found_running(run: Run) -> list[str]:
    """The agent command seen running the run's hooks (a JSON argv), or []."""
    try:
        command = json.loads(run.agent_command or "[]")
    except ValueError:
        return []
    return [str(part) for part in command] if isinstance(command, list) else []


def generator_factory(service: MemoryService, environ: Mapping[str, str] | None = None) -> GeneratorFactory:
    """Resolve each run's generator from the settings, the agent that ran it, and this machine's environment."""
    env = dict(os.environ if environ is None else environ)
    settings = service.settings.current()
    timeout = _timeout(env)
    probe = agent_probe(service, env)

    def for_run(run: Run) -> GeneratorChoice:
        key = load_api_key(env) if settings.provider == "apikey" else None
        return resolve_generator(
            enabled=service.is_enabled(),
            provider=settings.provider,
            models=settings.models,
            agent=run.agent,
            api_key=key.api_key if key else None,
            api_key_error=key.error if key else None,
            claude_bin=env.get(CLAUDE_BIN_ENV) or None,
            codex_bin=env.get(CODEX_BIN_ENV) or None,
            env=env,
            timeout=timeout,
            found_running=_found_running(run),
            probe=probe,
        )

    return for_run


def describe_extraction(service: MemoryService, environ: Mapping[str, str] | None = None) -> str:
    """The sentence that says which agent and model summarize runs, or why none."""
    env = dict(os.environ if environ is None else environ)
    settings = service.settings.current()
    key = load_api_key(env) if settings.provider == "apikey" else None
    return describe(
        enabled=settings.enabled,
        provider=settings.provider,
        models=settings.models,
        has_api_key=bool(key and key.api_key),
        api_key_error=key.error if key else None,
        claude_bin=env.get(CLAUDE_BIN_ENV) or None,
        codex_bin=env.get(CODEX_BIN_ENV) or None,
        probe=agent_probe(service, env),
    )
