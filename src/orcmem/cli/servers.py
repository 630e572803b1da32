"""The servers: the Memory page (`orcmem ui`, `forget-run`) and `orcmem mcp`."""

from __future__ import annotations

import sys

import click

from orcmem.cli.context import AppContext, echo, pass_app
from orcmem.host.profile import home_dir
from orcmem.mcp_server.root import main as mcp_main
from orcmem.service.learning import Learning


# --- the Memory page -------------------------------------------------------------------------------------------------
@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Port on 127.0.0.1 (default: a free one).")
@click.option("--no-open", is_flag=True, help="Print the address without opening the browser.")
@pass_app
def ui(app: AppContext, port: int, no_open: bool) -> None:
    """Serve the Memory page on 127.0.0.1: see, search, correct and delete memories (Ctrl+C stops it)."""
    from orcmem.web.server import serve

    status = serve(home_dir(), port=port, open_browser=not no_open, echo=click.echo, location=app.location())
    if status:
        raise click.exceptions.Exit(status)  # stopped by Ctrl-C (130) or SIGTERM (143)


@click.command(name="forget-run")
@click.argument("run_id")
@pass_app
def forget_run(app: AppContext, run_id: str) -> None:
    """Delete a run's ledger (its transcript events, job and summary); the memories it taught stay."""
    run = Learning(app.service()).delete_run(run_id)
    echo(f"deleted run {run.id} and its events")


# --- the MCP server --------------------------------------------------------------------------------------------------
@click.command(
    name="mcp",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@pass_app
def mcp_command(app: AppContext, args: tuple[str, ...]) -> None:
    """Serve orcmem's memory tools over MCP for the project of the current folder (`orcmem mcp --help`)."""

    # One parser for `orcmem mcp`: the server's own, which `orcmem mcp ...` reaches without click.
    sys.exit(mcp_main(["--project", str(app.project_path), *args]))
