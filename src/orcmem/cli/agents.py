"""What agents see: `orcmem brief`, `recall` and the tasks (`orcmem task`)."""

from __future__ import annotations

import os
import time

import click

from orcmem.app.formatting import as_dict
from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.host.profile import home_dir
from orcmem.host.warm import WARM_PATH
from orcmem.host.warm import ask as ask_warm
from orcmem.models.env_names import BARE_ENV_VAR
from orcmem.models.vocabulary import TaskStatus, values
from orcmem.service.tasks import Tasks


@click.command()
@pass_app
def brief(app: AppContext) -> None:
    """Print the project brief a new agent session starts with (empty while memory is off)."""
    text = app.service().context.brief(app.project())
    echo(text if text else "No brief: memory is off, or this project has no active memory yet.")


@click.command()
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


@click.group()
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
        echo_json([as_dict(t) for t in tasks])
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
