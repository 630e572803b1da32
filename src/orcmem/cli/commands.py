"""The `orcmem` command: its group, its global option and errors as one line; each section of commands lives in
its own module of this package and is added here."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from orcmem import __version__
from orcmem.cli.agents import brief, recall, task
from orcmem.cli.audit import audit
from orcmem.cli.context import AppContext, echo
from orcmem.cli.importing import backup, import_group
from orcmem.cli.learning import extract, hook, ingest, jobs, summaries, usage, worker
from orcmem.cli.memories import (
    add,
    conflicts,
    edit,
    export,
    feedback,
    forget,
    list_memories,
    relate,
    search,
    show,
)
from orcmem.cli.model import check, doctor, model, reindex
from orcmem.cli.review import review, review_policy
from orcmem.cli.servers import forget_run, mcp_command, ui
from orcmem.cli.settings import grants, memory, projects
from orcmem.cli.setup import init, setup
from orcmem.cli.team import team
from orcmem.models.errors import OrcmemError


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


for command in (
    add,
    list_memories,
    show,
    search,
    edit,
    feedback,
    forget,
    export,
    review,
    memory,
    projects,
    grants,
    model,
    reindex,
    check,
    doctor,
    brief,
    recall,
    task,
    ui,
    forget_run,
    mcp_command,
    setup,
    init,
    hook,
    worker,
    ingest,
    extract,
    jobs,
    usage,
    summaries,
    team,
    import_group,
    backup,
    relate,
    conflicts,
    audit,
):
    cli.add_command(command)
memory.add_command(review_policy)


def main() -> None:
    """Run the command line (`orcmem.entry` sends hooks elsewhere before click is imported)."""
    cli.main(prog_name="orcmem")
