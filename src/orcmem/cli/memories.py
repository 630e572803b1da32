"""`orcmem add`, `list`, `show`, `search`, `edit`, `feedback`, `forget`, `export`, `relate`, `conflicts`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from orcmem.app.formatting import PROVENANCE_LABELS, age_text, memory_line, search_output, wanted
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    EXPORT_FILES,
    LIST_MAX_LIMIT,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryFilter, MemoryType, NewMemory, Provenance, Relation, Scope, Source, Status
from orcmem.rules.contradictions import KEEP_BOTH, history_line, pick_relation, resolve_hint
from orcmem.service.importing import Importing
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService

if TYPE_CHECKING:
    from orcmem.service.memory_service import MemoryService
    from orcmem.store.imports import ImportBatch

BODY_READ_MAX_BYTES = 64 * 1024  # far more than a body holds, so an over-long body is reported, not cut
MODEL_LOAD_WAIT_S = 10.0
PROVENANCE_OPTION = click.option(
    "--provenance",
    "provenances",
    multiple=True,
    type=click.Choice([p.value for p in Provenance]),
    help="Only memories whose words came from there. Repeatable.",
)


@click.command()
@click.option("--type", "type_", required=True, type=click.Choice([t.value for t in MemoryType]), help="Kind.")
@click.option("--title", required=True, help="Short imperative title, 1-120 characters.")
@click.option("--body", help="The memory itself, 1-800 characters; `-` reads it from standard input.")
@click.option("--body-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the body from this file.")
@click.option("--topic", help="Topic key (up to 80 characters): a later write with it replaces this memory.")
@click.option("--scope", type=click.Choice([s.value for s in Scope]), default="project", show_default=True)
@click.option("--confidence", type=float, help="0.1 to 1 (default 0.6).")
@click.option("--file", "files", multiple=True, metavar="PATH", help="A path or glob it concerns; repeatable.")
@click.option("--replaces", metavar="ID", help="It replaces this older memory, which is kept as history.")
@click.option("--refines", metavar="ID", help="It refines this older memory; both stay.")
@click.option("--conflicts-with", metavar="ID", help="It contradicts this older memory; both stay until settled.")
@pass_app
def add(
    app: AppContext,
    type_: str,
    title: str,
    body: str | None,
    body_file: Path | None,
    topic: str | None,
    scope: str,
    confidence: float | None,
    files: tuple[str, ...],
    replaces: str | None,
    refines: str | None,
    conflicts_with: str | None,
) -> None:
    """Save a memory of your own and print its id; older memories it may contradict are listed after it."""
    relation, related_id = relation_option(replaces, refines, conflicts_with)
    text = _body_text(body, body_file)
    if text is None:
        raise click.UsageError("give the body with --body TEXT, --body - (standard input) or --body-file PATH")
    new = NewMemory(
        type=type_,
        title=title,
        body=text,
        source=Source.USER,
        topic_key=topic,
        scope=Scope(scope),
        confidence=confidence,
        files=files,
    )
    result = app.service().record_at(
        app.location(), new, relation=relation, related_id=related_id, candidates=relation is None
    )
    echo(result.memory.id)
    if result.merged:
        echo(f"merged into the memory with topic {result.memory.topic_key!r}", err=True)
    if result.relation is not None:
        echo(f"{result.relation} {result.related_id}", err=True)
    if result.candidates:
        echo("it may contradict (`orcmem relate ID --replaces|--refines|--conflicts-with OLD` to say so):", err=True)
        for memory in result.candidates:
            echo(f"  {memory.id} {memory.title}", err=True)


def relation_option(
    replaces: str | None, refines: str | None, conflicts_with: str | None
) -> tuple[Relation | None, str | None]:
    """The one relation --replaces, --refines or --conflicts-with gave, with its memory id; (None, None) without."""
    try:
        return pick_relation(replaces, refines, conflicts_with)
    except ValidationError:
        raise click.UsageError("give one of --replaces, --refines and --conflicts-with") from None


def _body_text(body: str | None, body_file: Path | None) -> str | None:
    """The body from --body, standard input (`--body -`) or --body-file; None when none was given."""
    if body is not None and body_file is not None:
        raise click.UsageError("give the body one way: --body or --body-file")
    if body_file is not None:
        try:
            with body_file.open("rb") as handle:
                raw = handle.read(BODY_READ_MAX_BYTES + 1)
        except OSError as exc:
            message = f"cannot read {body_file}: {exc.strerror or exc}"
            raise click.BadParameter(message, param_hint="--body-file") from None
    elif body == "-":
        raw = sys.stdin.buffer.read(BODY_READ_MAX_BYTES + 1)
    else:
        return body
    if len(raw) > BODY_READ_MAX_BYTES:
        raise click.UsageError(
            f"the body is over {BODY_READ_MAX_BYTES:,} bytes; a memory holds {BODY_MAX_CHARS} characters"
        )
    return raw.decode("utf-8", errors="surrogateescape")  # bytes that are no UTF-8 are refused by the body's check


@click.command(name="list")
@click.option("--type", "types", multiple=True, type=click.Choice([t.value for t in MemoryType]), help="Repeatable.")
@click.option("--source", "sources", multiple=True, type=click.Choice([s.value for s in Source]), help="Repeatable.")
@PROVENANCE_OPTION
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in Status]),
    help="Repeatable (default: all but pending).",
)
@click.option("--pending", is_flag=True, help="Only the learned memories waiting for review (orcmem review).")
@click.option("--scope", "scopes", multiple=True, type=click.Choice([s.value for s in Scope]), help="Repeatable.")
@click.option("--limit", type=click.IntRange(1, LIST_MAX_LIMIT), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True)
@json_option
@pass_app
def list_memories(
    app: AppContext,
    types: tuple[str, ...],
    sources: tuple[str, ...],
    provenances: tuple[str, ...],
    statuses: tuple[str, ...],
    pending: bool,
    scopes: tuple[str, ...],
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List this project's memories and the global ones, newest first (those waiting for review with --pending)."""
    service = app.service()
    project = app.project()
    flt = MemoryFilter(
        types=types,
        sources=sources,
        provenances=provenances,
        statuses=(str(Status.PENDING),) if pending else statuses,
        scopes=scopes,
        limit=limit,
        offset=offset,
    )
    memories = service.list(project, flt)
    if as_json:
        echo_json([m.to_dict() for m in memories])
        return
    total = service.count(project, flt)
    if not memories:
        echo("No memories match." if total else "No memories saved for this project yet.")
        return
    now = service.clock()
    for memory in memories:
        echo(memory_line(memory, now, _own(service)))
    echo(f"{offset + 1}-{offset + len(memories)} of {total}")


@click.command()
@click.argument("memory_id")
@json_option
@pass_app
def show(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Show one memory in full."""
    service = app.service()
    memory = service.get(app.project(), memory_id)
    origin = _imported_from(service, memory.source_run_id)
    batch = _import_batch(service, memory.id)
    undo = "orcmem import sessions --undo"
    if batch is not None:
        origin, undo = batch.source_path, f"orcmem import undo {batch.id}"
    if as_json:
        extra = {"imported_from": origin} if origin else {}
        history = [link.to_dict() for link in service.history.links(memory.id)]
        echo_json(
            {
                **memory.to_dict(),
                **extra,
                **({"import_batch": batch.id} if batch is not None else {}),
                "history": history,
            }
        )
        return
    now = service.clock()
    echo(memory_line(memory, now, _own(service)))
    echo("")
    echo(memory.body)
    echo("")
    details = [
        f"scope: {memory.scope}"
        + (f" (saved from {memory.origin_root})" if memory.scope is Scope.GLOBAL and memory.origin_root else ""),
        f"status: {memory.status}",
        f"provenance: {memory.provenance} ({PROVENANCE_LABELS[memory.provenance]})",
        f"created {age_text(memory.created_at, now)}, confirmed {age_text(memory.last_confirmed_at, now)}",
        f"evidence: {memory.evidence_count}",
    ]
    if memory.stale_reason:
        details.append(f"possibly stale: {memory.stale_reason} (orcmem check)")
    if memory.author:
        details.append(
            f"author: {memory.author}" + (f" (written by {memory.author_agent})" if memory.author_agent else "")
        )
    if memory.topic_key:
        details.append(f"topic: {memory.topic_key}")
    if memory.files:
        details.append("files: " + ", ".join(memory.files))
    if origin:
        details.append(f"imported from: {origin} ({undo} erases it)")
    for detail in details:
        echo(detail)
    links = service.history.links(memory.id)
    if links:
        echo("history:")
        for link in links:
            echo("  " + history_line(link, memory.id))


def _imported_from(service: MemoryService, run_id: str | None) -> str | None:
    """The past session file a memory was distilled from by `orcmem import sessions`, or None."""
    from orcmem.service.session_import import SessionImports

    return SessionImports(Learning(service)).origin(run_id) if run_id else None


def _import_batch(service: MemoryService, memory_id: str) -> ImportBatch | None:
    """The `orcmem import` batch that added a memory, or None."""
    return Importing(service).batch_of(memory_id)


@click.command()
@click.argument("text")
@click.option("--limit", type=click.IntRange(1, SEARCH_MAX_LIMIT), default=SEARCH_DEFAULT_LIMIT, show_default=True)
@click.option("--explain", is_flag=True, help="Show each part of each score.")
@click.option("--team", "on_team", is_flag=True, help="Search the team's database for this shared project instead.")
@PROVENANCE_OPTION
@json_option
@pass_app
def search(
    app: AppContext, text: str, limit: int, explain: bool, on_team: bool, provenances: tuple[str, ...], as_json: bool
) -> None:
    """Search this project's active memories (and global ones) for TEXT."""
    service = app.service()
    if service.embedder is not None:
        # A one-shot command pays the model's load once; the query itself still gets 500 ms.
        service.embedder.wait_ready(MODEL_LOAD_WAIT_S)
    notice = None
    if on_team:
        from orcmem.team.search import search_team

        project = app.project()
        if project is None:
            raise click.ClickException("This folder is not a project orcmem knows; nothing is shared from it.")
        hits = [hit for hit in search_team(service, project, text, limit) if wanted(hit.memory, provenances)]
    else:
        outcome = service.search.run(app.project(), text, limit=limit, provenances=provenances)
        hits, notice = outcome.hits, outcome.notice
    output = search_output(hits, service.clock(), _own(service), explain=explain, on_team=on_team, as_json=as_json)
    click.echo(output)
    if notice:
        echo(f"orcmem: {notice}", err=True)


@click.command()
@click.argument("memory_id")
@click.option("--title", help="New title.")
@click.option("--body", help="New body; `-` reads it from standard input.")
@click.option("--body-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the new body from this file.")
@click.option("--type", "type_", type=click.Choice([t.value for t in MemoryType]), help="New type.")
@pass_app
def edit(
    app: AppContext,
    memory_id: str,
    title: str | None,
    body: str | None,
    body_file: Path | None,
    type_: str | None,
) -> None:
    """Change a memory's title, body or type."""
    text = _body_text(body, body_file)
    memory = app.service().edit(app.project(), memory_id, title=title, body=text, type=type_)
    echo(f"updated {memory.id}")


@click.command()
@click.argument("memory_id")
@click.argument("verdict", type=click.Choice(["helpful", "wrong", "stale"]))
@pass_app
def feedback(app: AppContext, memory_id: str, verdict: str) -> None:
    """Judge a memory: helpful (more confidence), wrong (retracted) or stale."""
    memory = app.service().feedback(app.project(), memory_id, verdict)
    echo(f"{memory.id}: {memory.status}, confidence {memory.confidence:.2f}")


@click.command()
@click.argument("memory_id")
@pass_app
def forget(app: AppContext, memory_id: str) -> None:
    """Delete a memory for good: its text, search entry, files and vector."""
    memory = app.service().forget(app.project(), memory_id)
    echo(f"deleted {memory.id}: {memory.title}")


@click.command()
@click.argument("memory_id")
@click.option("--to", "file_name", required=True, type=click.Choice(list(EXPORT_FILES)), help="Target file.")
@pass_app
def export(app: AppContext, memory_id: str, file_name: str) -> None:
    """Add a memory to the project's CLAUDE.md or AGENTS.md."""
    root = Path(app.location().worktree_root)
    target, changed = app.service().export(app.project(), memory_id, file_name, root)
    echo(f"added to {target}" if changed else f"already in {target}")


def _own(service: MemoryService) -> frozenset[str]:
    """Every id this profile's person wrote as ("from you" on each of their memories), found once if none is yet."""
    return service.settings.own_ids() or frozenset({service.settings.person()})


@click.command()
@click.argument("memory_id")
@click.option("--replaces", metavar="OLD", help="It replaces OLD, which is kept as history.")
@click.option("--refines", metavar="OLD", help="It refines OLD; both stay.")
@click.option("--conflicts-with", metavar="OLD", help="It contradicts OLD; both stay until settled.")
@pass_app
def relate(
    app: AppContext, memory_id: str, replaces: str | None, refines: str | None, conflicts_with: str | None
) -> None:
    """Say what a memory is to an older one: it replaces, refines or conflicts with it."""
    relation, related_id = relation_option(replaces, refines, conflicts_with)
    if relation is None or related_id is None:
        raise click.UsageError("give one of --replaces, --refines and --conflicts-with")
    stored = app.service().relate(app.project(), memory_id, relation, related_id, actor=Source.USER)
    echo(f"{memory_id} {stored} {related_id}" if stored else f"{memory_id} is {related_id}: nothing to relate")


@click.group(invoke_without_command=True)
@json_option
@pass_app
@click.pass_context
def conflicts(ctx: click.Context, app: AppContext, as_json: bool) -> None:
    """List the conflicts between memories nobody settled yet, with the command that settles each."""
    if ctx.invoked_subcommand is not None:
        return
    service = app.service()
    found = service.history.open_conflicts(app.project())
    if as_json:
        echo_json([link.to_dict() for link in found])
        return
    if not found:
        echo("No open conflicts.")
        return
    for link in found:
        echo(f'{link.from_id} "{link.from_title}" conflicts with {link.to_id} "{link.to_title}" (by {link.by})')
        echo(f"  {resolve_hint(link)}")


@conflicts.command(name="resolve")
@click.argument("memory_id")
@click.option("--keep", required=True, metavar="ID|both", help="The memory to keep (the other is superseded), or both.")
@pass_app
def resolve_conflict(app: AppContext, memory_id: str, keep: str) -> None:
    """Settle an open conflict MEMORY_ID is on: keep one side (the other becomes history) or both."""
    link = app.service().history.resolve(app.project(), memory_id, keep)
    kept = "both kept" if keep.strip() == KEEP_BOTH else f"kept {keep.strip()}"
    echo(f"settled: {link.from_id} and {link.to_id}, {kept}")
