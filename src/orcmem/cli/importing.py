"""`orcmem import` (sessions, instructions, claude-memory, codex-memory, claude-mem, jsonl, list, undo) and
`orcmem backup`: what the user already has into memory, and the whole store out and back in (docs/importing.md).
`import sessions` distils this project's past sessions (its own list and undo: `--list`, `--undo`).

Each import says what it found, asks (unless --yes), writes one batch, and says how to undo it. A further source is
one more command added to `import_group` that builds its items and calls `run_import`."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orcmem.app.formatting import age_text
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.host.agent_homes import (
    CLAUDE_MEM_DB,
    claude_config_dir,
    claude_memory_dir,
    codex_home,
    codex_memories_dir,
    project_roots,
)
from orcmem.importing.agent_memories import claude_memory_items, codex_memory_items
from orcmem.importing.backup import read_backup
from orcmem.importing.claude_mem import claude_mem_items, observations_in_export, projects_of
from orcmem.importing.files import read_note
from orcmem.importing.instructions import instruction_items
from orcmem.importing.items import ImportItem
from orcmem.models.constants import INSTRUCTION_FILES
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import MemoryOffError, ValidationError
from orcmem.models.types import Scope
from orcmem.models.vocabulary import ImportKind
from orcmem.service.core import MEMORY_OFF_MESSAGE
from orcmem.service.importing import Importing
from orcmem.service.learning import JobOutcome, Learning
from orcmem.store.claude_mem import read_observations
from orcmem.text.wording import duration, plural
from orcmem.worker.control import is_alive

if TYPE_CHECKING:  # annotations only: the session importer loads in the command that uses it
    from orcmem.app.session_import import Candidate, ImportPlan, ImportReport, SessionFile
    from orcmem.service.session_import import SessionImports

yes_option = click.option("--yes", "-y", is_flag=True, help="Import without asking (for scripts).")
dry_run_option = click.option("--dry-run", is_flag=True, help="Say what would be imported; write nothing.")
DRY_RUN_SHOWN = 50  # memories a dry run lists one by one
# The instruction files a project may hold beside INSTRUCTION_FILES at its root.
PROJECT_INSTRUCTION_EXTRAS = (".claude/CLAUDE.md", "CLAUDE.local.md")


def run_import(
    app: AppContext,
    kind: ImportKind,
    source: str,
    items: Sequence[ImportItem],
    *,
    yes: bool,
    dry_run: bool,
) -> None:
    """Say what was found in `source`, ask, and import the new items as one batch (the steps every import shares)."""
    service = app.service()
    _require_memory_on(app, dry_run)
    importing = Importing(service)
    project = app.project(create=not dry_run)
    plan = importing.plan(project, items)
    echo(
        f"Found {plural(plan.found, 'memory', 'memories')} in {source}: {len(plan.new):,} new, "
        f"{plan.already:,} already in orcmem."
    )
    if dry_run:
        for item in plan.new[:DRY_RUN_SHOWN]:
            where = " (global)" if item.scope is Scope.GLOBAL else ""
            echo(f"  {item.type.value:<11} {item.title}{where}  [{item.origin}]")
        if len(plan.new) > DRY_RUN_SHOWN:
            echo(f"  ... and {len(plan.new) - DRY_RUN_SHOWN:,} more")
        echo("Dry run: nothing was written.")
        return
    if not plan.new:
        echo("Nothing to import.")
        return
    if not yes:
        click.confirm(f"Import {plural(len(plan.new), 'memory', 'memories')}?", default=True, abort=True)
    batch, waiting = importing.apply(project, kind, source, plan)
    echo(
        f"Imported {plural(batch.added, 'memory', 'memories')} as import {batch.id}; "
        f"`orcmem import undo {batch.id}` takes them out again."
    )
    if waiting:
        echo(f"{plural(waiting, 'memory', 'memories')} of them wait for your review (`orcmem review`).")


def _require_memory_on(app: AppContext, dry_run: bool) -> None:
    """Say at once that memory is off, before reading and counting anything to write."""
    if not dry_run and not app.service().is_enabled():
        raise MemoryOffError(MEMORY_OFF_MESSAGE)


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())


@click.group(name="import")
def import_group() -> None:
    """Bring in what you already have: past sessions, instruction files, the agents' own memories, claude-mem, a
    backup.

    Each import says what it found and asks first; a second import of the same thing adds nothing; `orcmem import
    undo` takes the last one out again.
    """


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
    from orcmem.service.session_import import SessionImports

    imports = SessionImports(Learning(app.service()))
    if list_only or undo:
        _list_or_undo(app, imports, undo=undo, as_json=as_json)
        return
    _import(
        app, imports, yes=yes, dry_run=dry_run, max_runs=max_runs, max_tokens=max_tokens, order=order, as_json=as_json
    )


def _list_or_undo(app: AppContext, imports: SessionImports, *, undo: bool, as_json: bool) -> None:
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
    imports: SessionImports,
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


def _plan_dict(found: list[SessionFile], chosen: ImportPlan) -> JsonObject:
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


def _say_plan(found: list[SessionFile], chosen: ImportPlan) -> None:
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


def _distil(app: AppContext, imports: SessionImports, chosen: ImportPlan) -> ImportReport:
    """Distil the chosen runs behind a progress bar; on Ctrl-C, say how to resume and exit 130."""
    from orcmem.app import session_import as importer
    from orcmem.app.distilling import generator_factory

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

        def advance(_candidate: Candidate, _outcome: JobOutcome | None) -> None:
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


def _say_report(report: ImportReport) -> None:
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


@import_group.command(name="instructions")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--user",
    "user_files",
    is_flag=True,
    help="Also your own files for every project (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, "
    "~/.gemini/GEMINI.md), as global memories.",
)
@yes_option
@dry_run_option
@pass_app
def import_instructions(app: AppContext, files: tuple[Path, ...], user_files: bool, yes: bool, dry_run: bool) -> None:
    """Bullets and short paragraphs of CLAUDE.md, AGENTS.md, GEMINI.md (the project's, or FILES) as your memories."""
    root = Path(app.location().worktree_root)
    chosen: list[tuple[Path, Scope]] = [(path, Scope.PROJECT) for path in files]
    if not files:
        names = (*INSTRUCTION_FILES, *PROJECT_INSTRUCTION_EXTRAS)
        chosen = [(root / name, Scope.PROJECT) for name in names if (root / name).is_file()]
    if user_files:
        env, home = os.environ, _home()
        for path in (
            claude_config_dir(env, home) / "CLAUDE.md",
            codex_home(env, home) / "AGENTS.md",
            home / ".gemini" / "GEMINI.md",
        ):
            if path.is_file():
                chosen.append((path, Scope.GLOBAL))
    if not chosen:
        raise click.ClickException(
            f"No {', '.join(INSTRUCTION_FILES)} in {root}; name the files to import, or add --user for your own."
        )
    items: list[ImportItem] = []
    for path, scope in chosen:
        items += instruction_items(read_note(path), _label(path, root), scope=scope)
    run_import(
        app, ImportKind.INSTRUCTIONS, ", ".join(_label(p, root) for p, _ in chosen), items, yes=yes, dry_run=dry_run
    )


def _label(path: Path, root: Path) -> str:
    """A file as the person knows it: relative to the project when inside it, else with ~ for the home folder."""
    resolved = path.resolve()
    if resolved.is_relative_to(root.resolve()):
        return resolved.relative_to(root.resolve()).as_posix()
    home = _home().resolve()
    return "~/" + resolved.relative_to(home).as_posix() if resolved.is_relative_to(home) else str(resolved)


@import_group.command(name="claude-memory")
@click.option(
    "--from",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="The auto memory folder to read (default: this project's, in $CLAUDE_CONFIG_DIR or ~/.claude).",
)
@yes_option
@dry_run_option
@pass_app
def import_claude_memory(app: AppContext, folder: Path | None, yes: bool, dry_run: bool) -> None:
    """Claude Code's auto memory of this project (MEMORY.md and its topic files)."""
    location = app.location()
    config = claude_config_dir(os.environ, _home())
    found = folder or claude_memory_dir(config, project_roots(location.canonical_root, location.worktree_root))
    if found is None or not found.is_dir():
        raise click.ClickException(
            f"Claude Code keeps no auto memory for {location.worktree_root} in {config / 'projects'}; "
            "name the folder with --from."
        )
    run_import(app, ImportKind.CLAUDE_MEMORY, str(found), claude_memory_items(found), yes=yes, dry_run=dry_run)


@import_group.command(name="codex-memory")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Also what Codex remembers from other folders and its general tips, as global memories.",
)
@click.option(
    "--from",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="The memories folder to read (default: memories in $CODEX_HOME or ~/.codex).",
)
@yes_option
@dry_run_option
@pass_app
def import_codex_memory(app: AppContext, everything: bool, folder: Path | None, yes: bool, dry_run: bool) -> None:
    """Codex's memories of this project (the MEMORY.md blocks of runs in this project's folders)."""
    location = app.location()
    found = folder or codex_memories_dir(codex_home(os.environ, _home()))
    if not found.is_dir():
        raise click.ClickException(f"Codex keeps no memories in {found} (they are off unless turned on).")
    roots = project_roots(location.canonical_root, location.worktree_root)
    items = codex_memory_items(found, roots, everything=everything)
    run_import(app, ImportKind.CODEX_MEMORY, str(found), items, yes=yes, dry_run=dry_run)


@import_group.command(name="claude-mem")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--from-project",
    "from_project",
    metavar="NAME",
    help="claude-mem's project to import (default: this folder's name).",
)
@click.option("--all-projects", is_flag=True, help="Every claude-mem project's observations, into this project.")
@yes_option
@dry_run_option
@pass_app
def import_claude_mem(
    app: AppContext, path: Path | None, from_project: str | None, all_projects: bool, yes: bool, dry_run: bool
) -> None:
    """claude-mem's observations (its database, default ~/.claude-mem/claude-mem.db, or a JSON export)."""
    source = path or _home() / CLAUDE_MEM_DB
    if not source.is_file():
        raise click.ClickException(f"No claude-mem database at {source}; give the database or export file.")
    if source.suffix.lower() == ".json":
        try:
            observations = observations_in_export(json.loads(read_note(source)))
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{source} is not JSON ({exc.msg}).") from None
    else:
        observations = read_observations(source)
    wanted = from_project or app.location().name
    if not all_projects:
        counts = projects_of(observations)
        if wanted not in counts and counts:
            names = ", ".join(f"{name or '(none)'} ({count})" for name, count in sorted(counts.items()))
            raise click.ClickException(
                f"claude-mem holds no observations of project {wanted!r}; it holds {names}. "
                "Choose one with --from-project NAME, or take every one with --all-projects."
            )
        observations = [row for row in observations if str(row.get("project") or "") == wanted]
    label = f"{source}" + ("" if all_projects else f" (project {wanted})")
    run_import(app, ImportKind.CLAUDE_MEM, label, claude_mem_items(observations), yes=yes, dry_run=dry_run)


@import_group.command(name="jsonl")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@yes_option
@dry_run_option
@pass_app
def import_jsonl(app: AppContext, file: Path, yes: bool, dry_run: bool) -> None:
    """An `orcmem backup` file: every memory as it was (ids, times, authors...); those already here are skipped."""
    try:
        with file.open(encoding="utf-8") as handle:
            backup = read_backup(handle)
    except OSError as exc:
        raise click.ClickException(f"Cannot read {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ValidationError(f"{file} is not UTF-8 text: no orcmem backup.") from None
    _require_memory_on(app, dry_run)
    importing = Importing(app.service())
    plan = importing.plan_restore(backup)
    echo(
        f"Found {plural(plan.found, 'memory', 'memories')} in {file}: {len(plan.new):,} new, "
        f"{plan.already:,} already in orcmem."
    )
    if dry_run:
        echo("Dry run: nothing was written.")
        return
    if not plan.new:
        echo("Nothing to import.")
        return
    if not yes:
        click.confirm(f"Restore {plural(len(plan.new), 'memory', 'memories')}?", default=True, abort=True)
    batch = importing.restore(plan, str(file), app.project())
    echo(
        f"Restored {plural(batch.added, 'memory', 'memories')} as import {batch.id}; "
        f"`orcmem import undo {batch.id}` takes them out again. Their vectors are made in the background."
    )


@import_group.command(name="list")
@json_option
@pass_app
def import_list(app: AppContext, as_json: bool) -> None:
    """Every import, newest first: what it read, when, what it added."""
    service = app.service()
    batches = Importing(service).batches()
    if as_json:
        echo_json([batch.to_dict() for batch in batches])
        return
    if not batches:
        echo("Nothing imported yet.")
        return
    for batch in batches:
        when = dt.datetime.fromtimestamp(batch.at / 1000).strftime("%Y-%m-%d %H:%M")
        state = "undone" if batch.undone_at is not None else f"{batch.remaining:,} kept"
        echo(
            f"{batch.id:>4}  {when}  {batch.kind:<13} added {batch.added:,} of {batch.found:,} ({state})  "
            f"{batch.source_path}"
        )


@import_group.command(name="undo")
@click.argument("batch_id", metavar="[BATCH]", required=False, type=click.IntRange(1))
@yes_option
@pass_app
def import_undo(app: AppContext, batch_id: int | None, yes: bool) -> None:
    """Erase the memories an import added (default: the last one not undone)."""
    importing = Importing(app.service())
    batch = importing.batch(batch_id)
    if batch.undone_at is not None:
        raise click.ClickException(f"Import {batch.id} was undone already.")
    if not yes:
        click.confirm(
            f"Erase the {plural(batch.remaining, 'memory', 'memories')} import {batch.id} added from "
            f"{batch.source_path}?",
            default=True,
            abort=True,
        )
    undone, erased = importing.undo(batch.id)
    echo(f"Undid import {undone.id}: erased {plural(erased, 'memory', 'memories')}.")


@click.command()
@click.option(
    "--out",
    "out",
    metavar="FILE",
    help="Where to write (default: orcmem-backup-DATE.jsonl here; `-` for standard output).",
)
@pass_app
def backup(app: AppContext, out: str | None) -> None:
    """Write every memory of this profile (every project, every status) to a JSONL file; `orcmem import jsonl`
    restores it."""
    importing = Importing(app.service())
    if out == "-":
        for line in importing.backup_lines():
            sys.stdout.write(line + "\n")
        return
    target = Path(out or f"orcmem-backup-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl").expanduser()
    count = 0
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise click.ClickException(f"Cannot write in {target.parent}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:  # mkstemp's mode is 0600: memories can be private
            for line in importing.backup_lines():
                handle.write(line + "\n")
                count += line.startswith('{"memory"')
        os.replace(temp_name, target)  # a backup is whole or not there
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    echo(f"Wrote {plural(count, 'memory', 'memories')} to {target}.")
