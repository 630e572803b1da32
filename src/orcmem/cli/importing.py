"""`orcmem import`: bring in what the user already has; `import sessions` distils this project's past sessions."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.cli.formatting import age_text
from orcmem.text.wording import duration, plural


@click.group(name="import")
def import_group() -> None:
    """Bring in what you already have: past agent sessions."""


@import_group.command()
@click.option("--yes", is_flag=True, help="Distil without asking first.")
@click.option("--dry-run", is_flag=True, help="Only find the sessions and estimate; distil nothing.")
@click.option("--max-runs", type=click.IntRange(1), help="Distil at most N runs this time.")
@click.option("--max-tokens", type=click.IntRange(1), help="Distil runs until their estimated prompts reach N tokens.")
@click.option(
    "--order", type=click.Choice(("oldest", "newest")), default="oldest", show_default=True, help="Which runs first."
)
@click.option("--list", "list_only", is_flag=True, help="List the sessions imported into this project.")
@click.option("--undo", is_flag=True, help="Erase the memories the imports created, and the imported runs.")
@json_option
@pass_app
def sessions(
    app: AppContext,
    yes: bool,
    dry_run: bool,
    max_runs: int | None,
    max_tokens: int | None,
    order: str,
    list_only: bool,
    undo: bool,
    as_json: bool,
) -> None:
    """Distil this project's past Claude Code and Codex sessions (its root and every git worktree) into memories.

    Says how many runs, the estimated tokens and time first, and asks. A run already learned is skipped; Ctrl-C
    keeps the runs done, and running the command again resumes.
    """
    from orcmem.service.learning import Learning
    from orcmem.service.session_import import SessionImports

    imports = SessionImports(Learning(app.service()))
    if list_only or undo:
        _list_or_undo(app, imports, undo=undo, as_json=as_json)
        return
    _import(
        app, imports, yes=yes, dry_run=dry_run, max_runs=max_runs, max_tokens=max_tokens, order=order, as_json=as_json
    )


def _list_or_undo(app: AppContext, imports: Any, *, undo: bool, as_json: bool) -> None:
    project = app.project()
    if project is None:
        echo("Nothing imported into this project.")
        return
    if undo:
        result = imports.undo(project)
        if as_json:
            echo_json({"runs": result.runs, "memories": result.memories})
            return
        echo(f"Erased {plural(result.memories, 'memory', 'memories')} and {plural(result.runs, 'imported run')}.")
        return
    rows = imports.imported(project)
    if as_json:
        echo_json(
            [
                {
                    "run_id": item.run.id,
                    "agent": item.run.agent,
                    "session_file": item.run.transcript_path,
                    "imported_at": item.imported_at,
                    "state": item.job.state if item.job else "not queued",
                    "memory_ids": list(item.memory_ids),
                }
                for item in rows
            ]
        )
        return
    if not rows:
        echo("Nothing imported into this project.")
        return
    now = imports.memory.clock()
    for item in rows:
        state = item.job.state if item.job else "not queued"
        echo(
            f"{item.run.id}  {state:<8} {plural(len(item.memory_ids), 'memory', 'memories')}  {item.run.agent}, "
            f"imported {age_text(item.imported_at, now)}  {item.run.transcript_path}"
        )


def _import(
    app: AppContext,
    imports: Any,
    *,
    yes: bool,
    dry_run: bool,
    max_runs: int | None,
    max_tokens: int | None,
    order: str,
    as_json: bool,
) -> None:
    from orcmem.app import session_import as importer

    found = importer.find_sessions(app.location(), os.environ)
    candidates = importer.assess(imports, found)
    chosen = importer.plan(
        candidates, order=order, max_runs=max_runs, max_tokens=max_tokens, run_ms=imports.typical_run_ms()
    )
    if dry_run or not chosen.chosen:  # with --json, the plan alone; after distilling, the plan and the result
        if as_json:
            echo_json(_plan_dict(found, chosen))
        else:
            _say_plan(found, chosen)
        return
    if not as_json:
        _say_plan(found, chosen)
    reason = imports.learning.extraction_allowed()
    if reason is not None:
        raise click.ClickException(f"nothing can be distilled while {reason} (orcmem memory on; orcmem init)")
    if not yes:
        if not sys.stdin.isatty():
            raise click.ClickException("the import makes paid model calls: run it in a terminal, or pass --yes")
        if not click.confirm("Distil them now?", default=True):
            raise click.exceptions.Exit(1)
    report = _distil(app, imports, chosen)
    if as_json:
        echo_json(
            {
                **_plan_dict(found, chosen),
                "distilled": report.distilled,
                "new_memories": report.memories,
                "confirmed": report.confirmed,
                "failed": report.failed,
                "skipped": report.skipped,
                "errors": report.errors,
            }
        )
    else:
        _say_report(report)


def _plan_dict(found: list[Any], chosen: Any) -> dict[str, Any]:
    return {
        "sessions": len(found),
        "runs": len(chosen.chosen),
        "tokens": chosen.tokens,
        "seconds": round(chosen.seconds, 1),
        "seconds_per_run": round(chosen.run_seconds, 1),
        "timed_here": chosen.timed_here,
        "already_learned": chosen.learned,
        "learned_live": chosen.live,
        "nothing_to_learn": chosen.empty,
        "over_budget": chosen.over_budget,
        "files": [str(candidate.session.path) for candidate in chosen.chosen],
    }


def _say_plan(found: list[Any], chosen: Any) -> None:
    agents = sorted({str(session.agent) for session in found})
    echo(
        f"Found {plural(len(found), 'past session')} of this project" + (f" ({', '.join(agents)})." if agents else ".")
    )
    left = [
        (chosen.learned, "already imported"),
        (chosen.live, "learned live by the hooks"),
        (chosen.empty, "with nothing to learn (no finished turn)"),
        (chosen.over_budget, "left for a later import by the budget"),
    ]
    for count, why in left:
        if count:
            echo(f"  {plural(count, 'session')} {why}")
    if not chosen.chosen:
        echo("Nothing to distil.")
        return
    basis = "the median of this machine's last runs" if chosen.timed_here else "a guess: no run timed here yet"
    echo(
        f"To distil: {plural(len(chosen.chosen), 'run')}, about {chosen.tokens:,} prompt tokens, about "
        f"{duration(chosen.seconds)} ({duration(chosen.run_seconds)} a run, {basis})."
    )


def _distil(app: AppContext, imports: Any, chosen: Any) -> Any:
    """Distil the chosen runs behind a progress bar; on Ctrl-C, say how to resume and exit 130."""
    from orcmem.app import session_import as importer
    from orcmem.app.distilling import generator_factory
    from orcmem.worker.control import is_alive

    project = app.project(create=True)
    assert project is not None
    done = 0
    # The bar is drawn on a terminal only: in a pipe or a log it would be one stray label.
    shown = (
        contextlib.nullcontext(None)
        if not sys.stderr.isatty()
        else click.progressbar(length=len(chosen.chosen), label="Distilling", file=sys.stderr)
    )
    with shown as bar:

        def advance(_candidate: Any, _outcome: Any) -> None:
            nonlocal done
            done += 1
            if bar is not None:
                bar.update(1)

        try:
            report = importer.distil_plan(
                imports, project, chosen.chosen, generator_factory(imports.memory), is_alive=is_alive, on_run=advance
            )
        except KeyboardInterrupt:
            echo(
                f"\norcmem: stopped after {plural(done, 'run')} of {len(chosen.chosen)}; what was distilled is kept. "
                "Run `orcmem import sessions` again to resume.",
                err=True,
            )
            sys.exit(130)
    return report


def _say_report(report: Any) -> None:
    echo(
        f"Distilled {plural(report.distilled, 'run')} into {plural(report.memories, 'new memory', 'new memories')}"
        + (f" ({report.confirmed} more confirmed)" if report.confirmed else "")
        + (f"; {report.failed} failed" if report.failed else "")
        + (f"; {report.skipped} skipped" if report.skipped else "")
        + ". `orcmem import sessions --list` shows them; `--undo` erases them."
    )
    for error in report.errors:
        echo(f"  failed: {error}", err=True)
    if report.failed:
        echo("  Run `orcmem import sessions` again to retry the failed runs.", err=True)
