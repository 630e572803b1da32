"""Learning from runs: `orcmem hook`, `worker`, `ingest`, `extract`, `jobs`, `summaries`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from orcmem.app.formatting import age_text, as_dict, memory_line
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.hooks import handlers as hooks
from orcmem.hooks import prompt_hook
from orcmem.host.profile import home_dir
from orcmem.models.usage import UsageTotal
from orcmem.models.vocabulary import HookName, JobState, UsageCall, values
from orcmem.rules.budget import describe_budget
from orcmem.service.cost import PERIODS
from orcmem.service.learning import GeneratorFactory, JobOutcome, Learning
from orcmem.service.memory_service import MemoryService
from orcmem.text.wording import cost_text, duration, plural
from orcmem.worker.control import is_alive, stop_workers, worker_lock


@click.command()
@click.argument("name", type=click.Choice(values(HookName)))
def hook(name: str) -> None:
    """Run an agent hook (reads the hook's JSON on stdin; never fails the agent)."""
    sys.exit(prompt_hook.main([name]) if name == HookName.PROMPT else hooks.main([name]))


@click.command()
@click.option("--no-linger", is_flag=True, help="Exit once the queue is empty instead of waiting for idle sessions.")
@click.option("--stop", is_flag=True, help="Stop this profile's running workers (their runs go back in the queue).")
@pass_app
def worker(app: AppContext, no_linger: bool, stop: bool) -> None:
    """Distil queued runs (two at a time at most) and sessions that went idle, then exit."""

    from orcmem.worker import loop as learning_worker

    home = home_dir()
    if stop:
        stopped = stop_workers(home)
        # A worker that could not put its runs back in time (a busy machine, a hung model call) leaves them marked
        # running: they go back to the queue now, not when the next worker claims.
        Learning(app.service()).requeue_orphans(is_alive)
        echo(f"stopped {stopped} worker{'' if stopped == 1 else 's'}")
        return
    learning_worker.interrupt_on_sigterm()
    with worker_lock(home):
        service = app.service(embed_here=True)  # the background process that makes vectors
        learning = Learning(service)
        try:
            outcomes = learning_worker.run(service, generator_factory(service), linger=not no_linger, learning=learning)
        except KeyboardInterrupt:
            learning_worker.stop(learning)
            echo("orcmem: worker stopped; the runs it was distilling are back in the queue", err=True)
            sys.exit(130)
    for outcome in outcomes:
        echo(_outcome_line(outcome))


def _why_not_now(service: MemoryService, learning: Learning, run_id: str) -> str:
    """Why `extract` distilled nothing: the day's budget, a rate limit, or another worker has the run."""
    hold = service.cost.hold()
    if hold is not None:
        return f"{run_id} waits in the queue: {hold.reason} (`orcmem memory budget` changes the budget)"
    job = learning.job(run_id)
    if job is not None and job.not_before is not None and job.not_before > service.clock():
        return f"{run_id} waits in the queue: {job.error or 'rate limited'}"
    return f"{run_id} is already being distilled by another worker"


def _outcome_line(outcome: JobOutcome) -> str:
    detail = f": {outcome.error}" if outcome.error else ""
    return f"{outcome.run_id}: {outcome.state}, {plural(outcome.written, 'memory', 'memories')}{detail}"


@click.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--ended", is_flag=True, help="The session is over: queue the run for distillation.")
@pass_app
def ingest(app: AppContext, path: Path, ended: bool) -> None:
    """Read a Claude Code or Codex transcript into the run ledger (only what is new since the last time)."""
    service = app.service()
    learning = Learning(service)
    result = learning.ingest(app.location(), path.resolve(), ended=ended)
    queued = learning.queue(result.run) if ended else False
    echo(
        f"{result.run.id}: {result.new_events} new events, {result.new_turns} new turns"
        + (f", {result.skipped_lines} unreadable lines skipped" if result.skipped_lines else "")
        + (", queued" if queued else "")
    )


@click.command()
@click.argument("target")
@pass_app
def extract(app: AppContext, target: str) -> None:
    """Distil a run now: TARGET is a run id, or a transcript file (ingested first). Retries failed runs too."""

    from orcmem.worker import loop as learning_worker

    service = app.service()
    learning = Learning(service)
    path = Path(target).expanduser()
    run_id = learning.ingest(app.location(), path.resolve(), ended=True).run.id if path.is_file() else target
    learning.retry(run_id)
    learning_worker.interrupt_on_sigterm()
    try:
        outcomes = [o for o in learning_worker.drain(learning, generator_factory(service)) if o.run_id == run_id]
    except KeyboardInterrupt:
        learning_worker.stop(learning)
        echo(f"orcmem: stopped; {run_id} is back in the queue for the next worker", err=True)
        sys.exit(130)
    if not outcomes:
        raise click.ClickException(_why_not_now(service, learning, run_id))
    outcome = outcomes[-1]
    echo(_outcome_line(outcome))
    summary = learning.summary(run_id)
    if summary is not None and outcome.state == JobState.DONE:
        echo(f"  asked: {summary.request}\n  done: {summary.work_done}\n  outcome: {summary.outcome}")
        for item in summary.open_items:
            echo(f"  open: {item}")
    now = service.clock()
    for memory in service.memories_by_id(outcome.memory_ids):
        echo(memory_line(memory, now, service.settings.own_ids() or service.settings.person()))
    if outcome.state == JobState.FAILED:
        sys.exit(1)


@click.command()
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@json_option
@pass_app
def jobs(app: AppContext, limit: int, as_json: bool) -> None:
    """List extraction jobs of this project, newest first, with their state, cost and error."""
    service = app.service()
    project = app.project()
    rows = Learning(service).jobs(project, limit)
    costs = service.cost.for_runs([job.run_id for job, _run in rows])
    hold = service.cost.hold()
    if as_json:
        echo_json(
            [
                {
                    **as_dict(job),
                    "agent": run.agent,
                    "cost": as_dict(costs[job.run_id]) if job.run_id in costs else None,
                }
                for job, run in rows
            ]
        )
        return
    if hold is not None:
        echo(f"learning waits: {hold.reason}")
    if not rows:
        echo("No extraction jobs for this project yet.")
        return
    now = service.clock()
    for job, run in rows:
        error = f" - {job.error}" if job.error else ""
        spent = costs.get(job.run_id)
        cost = (
            f"  {cost_text(spent.tokens, spent.dollars)}{_judged(spent)}, {duration(spent.wall_ms / 1000)}"
            if spent
            else ""
        )
        echo(
            f"{job.run_id}  {job.state:<8} {plural(job.memories_written, 'memory', 'memories')}  {run.agent}, queued "
            f"{age_text(job.queued_at, now)}{cost}{error}"
        )


@click.command()
@click.option(
    "--period",
    type=click.Choice(["day", "week", "month", "all"]),
    default=None,
    help="Only the totals of this period (this local day, week from Monday, month, or all time).",
)
@click.option("--limit", type=click.IntRange(0, 500), default=10, show_default=True, help="Calls listed, newest first.")
@click.option("--all-projects", is_flag=True, help="Every project's calls, not only this project's.")
@json_option
@pass_app
def usage(app: AppContext, period: str | None, limit: int, all_projects: bool, as_json: bool) -> None:
    """What learning cost: each call (distillations and their contradiction judgements), and the totals per day, week
    and month, per project and overall."""
    service = app.service()
    project = None if all_projects else app.project()
    project_id = project.id if project else None
    periods = (period,) if period else PERIODS
    calls = service.cost.recent(project_id, limit)
    totals = {name: service.cost.total(name, project_id) for name in periods}
    overall = {name: service.cost.total(name) for name in periods}
    per_project = {name: service.cost.by_project(name) for name in periods}
    names = {p.id: p.name for p, _count in service.projects()}
    budget = service.cost.budget()
    hold = service.cost.hold()
    if as_json:
        echo_json(
            {
                "project": project.name if project else None,
                "calls": [{**as_dict(row), "tokens": row.tokens} for row in calls],
                "totals": {name: {**as_dict(total), "tokens": total.tokens} for name, total in totals.items()},
                "overall": {name: {**as_dict(total), "tokens": total.tokens} for name, total in overall.items()},
                "per_project": {
                    name: [
                        {**as_dict(total), "project": names.get(total.project_id or ""), "tokens": total.tokens}
                        for total in rows
                    ]
                    for name, rows in per_project.items()
                },
                "budget": as_dict(budget),
                "spent_today": as_dict(service.cost.spent_today()),
                "learning_waits": hold.reason if hold else None,
            }
        )
        return

    now = service.clock()
    where = f"project {project.name}" if project else "every project"
    echo(f"learning cost of {where}:")
    for name in periods:
        total = totals[name]
        label = {"day": "today", "week": "this week", "month": "this month", "all": "all time"}[name]
        line = f"  {label:<10} {plural(total.runs, 'run')}, {cost_text(total.tokens, total.dollars)}{_judged(total)}"
        if project is not None and overall[name].runs != total.runs:
            line += f" (all projects: {plural(overall[name].runs, 'run')}, "
            line += f"{cost_text(overall[name].tokens, overall[name].dollars)})"
        echo(line)
    if project is None:
        for name in periods:
            for total in per_project[name]:
                echo(
                    f"  {name:<10} {names.get(total.project_id or '', total.project_id)}: {plural(total.runs, 'run')}, "
                    f"{cost_text(total.tokens, total.dollars)}{_judged(total)}"
                )
    echo(f"daily budget: {describe_budget(budget)}")
    if hold is not None:
        echo(f"learning waits: {hold.reason}")
    if not calls:
        if limit:
            echo("No distillation calls yet.")
        return
    echo("calls, newest first:")
    for row in calls:
        model = f" {row.model}" if row.model else ""
        model += " (judgement)" if row.call == UsageCall.JUDGEMENT else ""
        cache = ""
        if row.cache_read_tokens or row.cache_creation_tokens:
            cache = f" (cache read {row.cache_read_tokens:,}, written {row.cache_creation_tokens:,})"
        echo(
            f"  {row.run_id}  {age_text(row.started_at, now)}  {row.provider}{model}  {row.status:<12} "
            f"in {row.input_tokens:,}, out {row.output_tokens:,}{cache}, "
            f"{'$' + format(row.cost_usd, '.4f') if row.cost_usd is not None else 'no price reported'}, "
            f"{duration(row.wall_ms / 1000)}"
        )


def _judged(total: UsageTotal) -> str:
    """The contradiction judgement's share of a total, when it made any call."""
    if not total.judgements:
        return ""
    return f" (judgement: {cost_text(total.judgement_tokens, total.judgement_dollars)})"


@click.command()
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@json_option
@pass_app
def summaries(app: AppContext, limit: int, as_json: bool) -> None:
    """List run summaries of this project: what was asked, done, how it ended, what is left open."""
    service = app.service()
    project = app.project()
    rows = Learning(service).summaries(project, limit)
    if as_json:
        echo_json([{**as_dict(summary), "open_items": list(summary.open_items)} for summary in rows])
        return
    if not rows:
        echo("No run summaries for this project yet.")
        return
    now = service.clock()
    for summary in rows:
        echo(f"{summary.run_id} ({age_text(summary.created_at, now)}): {summary.request}")
        echo(f"    done: {summary.work_done}\n    outcome: {summary.outcome}")
        for item in summary.open_items:
            echo(f"    open: {item}")


def generator_factory(service: MemoryService) -> GeneratorFactory:
    """The extraction generator for each run, from the settings, the environment and the OS keyring."""

    from orcmem.app.distilling import generator_factory as factory

    return factory(service)
