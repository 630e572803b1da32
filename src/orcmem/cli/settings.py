"""`orcmem memory on|off|status|provider|idle|budget`, `projects` and `grants`."""

from __future__ import annotations

import time
from typing import Any

import click

from orcmem.app.formatting import age_text, as_dict
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.models.constants import (
    EXTRACTION_PROVIDERS,
    IDLE_MINUTES_DEFAULT,
)
from orcmem.rules.budget import describe_budget
from orcmem.text.wording import cost_text, plural


# --- settings and projects -------------------------------------------------------------------------------------------
@click.group()
def memory() -> None:
    """Turn memory on or off, and choose who distils finished runs."""


def _echo_settings(app: AppContext, as_json: bool) -> None:

    from orcmem.app.distilling import describe_extraction

    service = app.service()
    settings = service.settings.current()
    sentence = describe_extraction(service)
    waiting = service.review.count(app.project())
    spent = service.cost.spent_today()
    budget = service.cost.budget()
    hold = service.cost.hold()
    if as_json:
        echo_json(
            {
                **settings.to_dict(),
                "extraction": sentence,
                "waiting_for_review": waiting,
                "spent_today": as_dict(spent),
                "budget": as_dict(budget),
                "context_budget_tokens": service.context.session_budget(),
                "learning_waits": hold.reason if hold else None,
            }
        )
        return
    echo(f"memory: {'on' if settings.enabled else 'off'}")
    echo(f"extraction provider: {settings.provider}")
    for harness, model in sorted(settings.models.items()):
        echo(f"extraction model for {harness}: {model}")
    echo(sentence)
    echo(_cost_line(spent, budget))
    week, month = service.cost.total("week"), service.cost.total("month")
    echo(
        f"learning cost this week: {plural(week.runs, 'run')}, {cost_text(week.tokens, week.dollars)}; "
        f"this month: {plural(month.runs, 'run')}, {cost_text(month.tokens, month.dollars)} (`orcmem usage`)"
    )
    echo(f"context orcmem adds to a session: at most {service.context.session_budget():,} tokens")
    if hold is not None:
        echo(f"learning waits: {hold.reason}")
    if waiting:
        echo(f"review inbox: {plural(waiting, 'learned memory', 'learned memories')} waiting here (orcmem review)")


def _cost_line(spent: Any, budget: Any) -> str:
    """Today's learning cost against the daily budget, in one line."""
    used = f"{plural(spent.runs, 'run')}, {cost_text(spent.tokens, spent.dollars or None)}"
    return f"learning cost today: {used} (budget: {describe_budget(budget)})"


@memory.command(name="on")
@click.option(
    "--if-unset",
    is_flag=True,
    help="Only if memory was never turned on or off in this profile (what the Claude Code plugin's install does).",
)
@pass_app
def memory_on(app: AppContext, if_unset: bool) -> None:
    """Turn memory on for every project."""
    if if_unset and not app.service().settings.enable_unless_chosen():
        echo("memory: off (it was turned off before: `orcmem memory on` turns it on)")
        return
    if not if_unset:
        app.service().settings.set_enabled(True)
    echo("memory: on")


@memory.command(name="off")
@pass_app
def memory_off(app: AppContext) -> None:
    """Turn memory off: nothing is extracted, embedded, briefed or recalled; saved memories stay."""
    app.service().settings.set_enabled(False)
    echo("memory: off")


@memory.command(name="status")
@json_option
@pass_app
def memory_status(app: AppContext, as_json: bool) -> None:
    """Show whether memory is on, and the extraction provider and model."""
    _echo_settings(app, as_json)


@memory.command(name="provider")
@click.argument("provider", type=click.Choice(list(EXTRACTION_PROVIDERS)))
@click.option("--model", help="The model that provider uses; an empty value restores its default.")
@pass_app
def memory_provider(app: AppContext, provider: str, model: str | None) -> None:
    """Choose who distils finished runs: auto, claude, codex, gemini, opencode, apikey or off."""
    app.service().settings.set_provider(provider, model)
    _echo_settings(app, as_json=False)


@click.command()
@json_option
@pass_app
def projects(app: AppContext, as_json: bool) -> None:
    """List the projects orcmem knows, with their memory counts."""
    rows = app.service().projects()
    if as_json:
        echo_json([{**project.to_dict(), "memories": count} for project, count in rows])
        return
    if not rows:
        echo("No projects yet: `orcmem add` in a project's folder creates one.")
        return
    for project, count in rows:
        echo(f"{project.name}  {plural(count, 'memory', 'memories')}  {project.root_path}")


# --- grants ----------------------------------------------------------------------------------------------------------
@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def grants(ctx: click.Context, as_json: bool) -> None:
    """List the "allow for this session / workspace" answers agents write under (revoke with `grants revoke ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    app: AppContext = ctx.obj
    found = app.service().grants()
    if as_json:
        echo_json([{**as_dict(grant), "project": project.root_path if project else None} for grant, project in found])
        return
    if not found:
        echo("No grants: every write an agent makes in review mode asks you first.")
    now = int(time.time() * 1000)
    for grant, project in found:
        where = project.root_path if project else grant.project_id
        session = f" (session {grant.session_id})" if grant.session_id else ""
        echo(f"{grant.pk}  {grant.scope}{session}  {grant.action}  {where}  {age_text(grant.created_at, now)}")


@grants.command(name="revoke")
@click.argument("grant_id", type=int)
@pass_app
def grants_revoke(app: AppContext, grant_id: int) -> None:
    """Delete one grant: the next write it covered asks you again."""
    grant = app.service().revoke_grant(grant_id)
    echo(f"revoked grant {grant.pk} ({grant.scope})")


@memory.command(
    name="idle",
    help=f"Distil a session left open after MINUTES without a turn (0 to 1440; default {IDLE_MINUTES_DEFAULT}).",
)
@click.argument("minutes", type=click.FloatRange(0, 24 * 60))
@pass_app
def memory_idle(app: AppContext, minutes: float) -> None:
    """Set the idle minutes (the help text above is the command's own)."""
    minutes = app.service().settings.set_idle_minutes(minutes)
    echo(f"sessions left open are distilled after {minutes:g} idle minutes")


@memory.command(name="budget")
@click.option("--runs", type=click.IntRange(0), help="Distillation calls a day.")
@click.option("--tokens", type=click.IntRange(0), help="Tokens a day (cached ones included).")
@click.option("--dollars", type=click.FloatRange(0), help="Dollars a day, where the provider reports them.")
@click.option("--off", is_flag=True, help="No daily cap at all (any of --runs, --tokens, --dollars turns it on again).")
@click.option(
    "--context", "context_tokens", type=click.IntRange(0, 1_000_000), help="Tokens orcmem may add to one session."
)
@json_option
@pass_app
def memory_budget(
    app: AppContext,
    runs: int | None,
    tokens: int | None,
    dollars: float | None,
    off: bool,
    context_tokens: int | None,
    as_json: bool,
) -> None:
    """Show or set the daily budget of learning (runs, tokens, dollars) and a session's context budget.

    Past the day's budget, runs wait in the queue until the next local day; none is lost.
    """
    service = app.service()
    if off and (runs is not None or tokens is not None or dollars is not None):
        raise click.UsageError("--off lifts every cap; give it alone, or give the caps without it.")
    budget = service.cost.budget()
    if off or runs is not None or tokens is not None or dollars is not None:
        budget = service.cost.set_budget(runs=runs, tokens=tokens, dollars=dollars, off=off)
    if context_tokens is not None:
        service.context.set_session_budget(context_tokens)
    spent = service.cost.spent_today()
    hold = service.cost.hold()
    if as_json:
        echo_json(
            {
                "budget": as_dict(budget),
                "spent_today": as_dict(spent),
                "context_budget_tokens": service.context.session_budget(),
                "learning_waits": hold.reason if hold else None,
            }
        )
        return
    echo(f"daily budget of learning: {describe_budget(budget)}")
    echo(_cost_line(spent, budget))
    echo(f"context orcmem adds to a session: at most {service.context.session_budget():,} tokens")
    if hold is not None:
        echo(f"learning waits: {hold.reason}")
