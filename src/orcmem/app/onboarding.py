"""`orcmem init`: memory on, every installed agent wired, the model installed, and a recall that proves it works.

The command line asks and prints; this module finds the agents, carries out each step and checks recall. Its
`--remove` takes the agents' wiring out again and turns memory off, keeping memories and the model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orcmem.extract.constants import AGENT_NAMES
from orcmem.host.workspace import Location
from orcmem.models.env_names import HOME_ENV_VAR
from orcmem.models.types import NewMemory, Source
from orcmem.models.vocabulary import Agent
from orcmem.service.memory_service import MemoryService
from orcmem.setup_agents.claude import claude_paths, setup_claude
from orcmem.setup_agents.codex import setup_codex
from orcmem.setup_agents.copilot import copilot_paths, setup_copilot
from orcmem.setup_agents.cursor import cursor_installed, cursor_paths, setup_cursor
from orcmem.setup_agents.gemini import gemini_settings_path, setup_gemini
from orcmem.setup_agents.opencode import opencode_paths, setup_opencode
from orcmem.setup_agents.report import Scope, SetupOptions, SetupReport

# The memory the recall check saves and deletes again; the prompt asks for it by its words, the question by meaning.
PROBE_TITLE = "orcmem init check: recall of project memory"
PROBE_BODY = "Saved and deleted again by orcmem init, to show that the prompt hook recalls this project's memory."
PROBE_PROMPT = "Does the orcmem init check show recall of project memory?"
PROBE_QUESTION = "a test note proving that saved knowledge comes back to the agent automatically"
HOOK_TIMEOUT_S = 30.0  # a cold first run of the hook (imports, page cache) on a slow disk
EMBED_WAIT_S = 60.0  # the first embedding loads the model


def installed_agents(environ: Mapping[str, str], home: Path | None = None) -> list[Agent]:
    """The coding agents whose command is on PATH (Cursor: also its config folder in `home`)."""
    path = environ.get("PATH", os.defpath)
    found: list[Agent] = [a for a in Agent if a is not Agent.CURSOR and shutil.which(a.value, path=path)]
    if cursor_installed(environ, Path.home() if home is None else home):
        found.append(Agent.CURSOR)
    return found


def agent_label(agent: Agent) -> str:
    """`Claude Code`, `Codex`, `Gemini CLI`, `Copilot CLI`, `OpenCode`, `Cursor`."""
    return AGENT_NAMES.get(agent, agent.value)


@dataclass(frozen=True)
class AgentWiring:
    """Where `init` and `setup AGENT` wire the agents: the user's home (Claude Code's and Cursor's user scope), the
    project, Codex's, Gemini CLI's, Copilot CLI's and OpenCode's folders, the backups."""

    home: Path
    project_dir: Path
    backup_dir: Path
    codex_home: Path | None = None
    gemini_home: Path | None = None  # $GEMINI_CLI_HOME when set: Gemini CLI keeps .gemini there instead of in home
    copilot_dir: Path | None = None  # $COPILOT_HOME when set: Copilot CLI's folder instead of ~/.copilot
    opencode_config: Path | None = None  # $XDG_CONFIG_HOME/opencode when set: OpenCode's config folder
    allow_ephemeral: bool = False
    profile_home: Path | None = None  # $ORCMEM_HOME when set: Codex's MCP server gets it, its environment is minimal

    def files(self, agent: Agent) -> list[Path]:
        """The config files `setup` edits for an agent."""
        if agent is Agent.CLAUDE:
            return list(claude_paths("user", home=self.home, project_dir=self.project_dir))
        if agent is Agent.GEMINI:
            return [gemini_settings_path("user", home=self.gemini_home or self.home, project_dir=self.project_dir)]
        if agent is Agent.COPILOT:
            return list(copilot_paths("user", state_dir=self._copilot_dir(), project_dir=self.project_dir))
        if agent is Agent.OPENCODE:
            return list(opencode_paths("user", config_dir=self._opencode_config(), project_dir=self.project_dir))
        if agent is Agent.CURSOR:
            return list(cursor_paths("user", home=self.home, project_dir=self.project_dir))
        folder = self.codex_home if self.codex_home is not None else self.home / ".codex"
        return [folder / "config.toml", folder / "hooks.json"]

    def _copilot_dir(self) -> Path:
        return self.copilot_dir if self.copilot_dir is not None else self.home / ".copilot"

    def _opencode_config(self) -> Path:
        return self.opencode_config if self.opencode_config is not None else self.home / ".config" / "opencode"

    def apply(self, agent: Agent, *, remove: bool, dry_run: bool, scope: Scope = "user") -> SetupReport:
        """`orcmem setup <agent>` (`init` wires the user scope), or its `--remove`: every agent's setup takes the
        same SetupOptions, and this table says where each keeps its files."""
        options = SetupOptions(
            self.project_dir, self.backup_dir, None, remove, dry_run, self.allow_ephemeral, self.profile_home
        )
        if agent is Agent.CLAUDE:
            return setup_claude(scope, home=self.home, options=options)
        if agent is Agent.GEMINI:
            return setup_gemini(scope, home=self.gemini_home or self.home, options=options)
        if agent is Agent.COPILOT:
            return setup_copilot(scope, state_dir=self._copilot_dir(), options=options)
        if agent is Agent.OPENCODE:
            return setup_opencode(scope, config_dir=self._opencode_config(), options=options)
        if agent is Agent.CURSOR:
            return setup_cursor(scope, home=self.home, options=options)
        return setup_codex(home=self.home, codex_home=self.codex_home, options=options)


@dataclass(frozen=True)
class RecallCheck:
    """What the recall check saw: the prompt hook's answer and, with a model, search by meaning."""

    by_words: bool
    hook_ms: float
    by_meaning: bool | None  # None: no model to search by meaning with
    problem: str = ""

    def lines(self) -> list[str]:
        """What to tell the person."""
        if not self.by_words:
            return [f"recall check failed: {self.problem or 'the prompt hook did not recall the test memory'}"]
        words = f"the prompt hook recalled a test memory by its words in {self.hook_ms:.0f} ms"
        if self.by_meaning is None:
            meaning = "search by meaning waits for the embedding model (`orcmem model install`)"
        elif self.by_meaning:
            meaning = "search found it by meaning from other words"
        else:
            meaning = "search by meaning did not find it (`orcmem doctor` says why)"
        return [f"recall works: {words}; {meaning}; the test memory is deleted again"]


def check_recall(
    service: MemoryService, location: Location, orcmem_command: Sequence[str], environ: Mapping[str, str]
) -> RecallCheck:
    """Save a test memory, ask the real prompt hook (`orcmem hook prompt`) for it, search for it by meaning when a
    model is there, and delete it again whatever happened."""
    project = service.project(location)
    assert project is not None
    probe = service.record(project, NewMemory(type="command", title=PROBE_TITLE, body=PROBE_BODY, source=Source.TOOL))
    try:
        payload = {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "orcmem-init",
            "cwd": location.worktree_root,
            "prompt": PROBE_PROMPT,
        }
        env = {**environ, HOME_ENV_VAR: str(service.home)}
        started = time.perf_counter()
        try:
            answer = subprocess.run(
                [*orcmem_command, "hook", "prompt"],
                input=json.dumps(payload),
                capture_output=True,
                text=True,
                env=env,
                timeout=HOOK_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return RecallCheck(False, 0.0, None, f"the prompt hook did not run: {exc}")
        hook_ms = (time.perf_counter() - started) * 1000
        by_words = PROBE_TITLE in answer.stdout
        by_meaning = None
        if service.semantic_ready and service.pump is not None:
            service.pump.wait(EMBED_WAIT_S)
            found = service.search.meaning(project, PROBE_QUESTION)
            by_meaning = probe.memory.id in [memory.id for memory in found]
        problem = "" if by_words else f"the prompt hook answered {answer.stdout.strip()[:200]!r}"
        return RecallCheck(by_words, hook_ms, by_meaning, problem)
    finally:
        service.forget(project, probe.memory.id, actor=Source.USER)
