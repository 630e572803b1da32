"""`orcmem team ...`: connect a profile to a team's PostgreSQL database, share projects, sync (docs/team.md)."""

from __future__ import annotations

from pathlib import Path

import click

from orcmem.cli.context import AppContext, echo, echo_json, json_option, pass_app
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import TeamError, ValidationError
from orcmem.service.team import TeamLink
from orcmem.text.textsafe import printable
from orcmem.text.wording import plural


@click.group()
def team() -> None:
    """Share projects' memories with a team through a PostgreSQL database (with pgvector)."""


@team.command()
@click.argument("url")
@click.option("--team", "team_name", required=True, help="The team's name (lowercase letters, digits, - and _).")
@click.option("--create", is_flag=True, help="Create the team if it does not exist (needs a role that may).")
@click.option("--as", "person", help="Your person id on the team (default: git's user.email).")
@pass_app
def connect(app: AppContext, url: str, team_name: str, create: bool, person: str | None) -> None:
    """Connect this profile to a team: URL is postgresql://user[:password]@host[:port]/dbname[?sslmode=...].

    A password in the URL goes to the OS secret store, never into orcmem's database; TLS settings in the URL
    (sslmode, sslrootcert...) are passed to PostgreSQL as given. orcmem creates and migrates its schema there.
    """
    from orcmem.store.team_pool.server import TeamServer
    from orcmem.store.team_pool.server import connect as open_connection
    from orcmem.team.credentials import load_password, split_password, store_password

    bare, password = split_password(url)
    server = TeamServer(open_connection(bare, password or load_password(bare)), team_name.strip().lower())
    try:
        created = server.prepare(create_team=create)
        writes = server.can_write()
    finally:
        server.close()
    if password:
        store_password(bare, password)
    service = app.service()
    if person:
        service.settings.set_person(person)
    service.team.set_link(TeamLink(bare, server.team))
    echo(f"connected to team {server.team}" + (" (created)" if created else "") + ("" if writes else ", read-only"))
    echo(f"you are {service.settings.person()}; share a project with `orcmem team share` inside it")


@team.command()
@click.option("--new-id", is_flag=True, help="Write a new id into .orcmem-project (for a repository without a remote).")
@click.option(
    "--confirm",
    "confirmed",
    metavar="KEY",
    help="Confirm that this repository is the project KEY names, when .orcmem-project names a pool the team holds.",
)
@pass_app
def share(app: AppContext, new_id: bool, confirmed: str | None) -> None:
    """Share the current project's memories with the team, and receive the team's.

    A key read from a committed .orcmem-project that names a pool the team already holds is used only once you
    confirm it (--confirm KEY): any repository can commit a file naming another project's pool.
    """
    from orcmem.team.identity import ID_FILE, remote_key, write_new_id, written_id

    service = app.service()
    if service.team.link() is None:  # before anything is written into the repository
        raise ValidationError("Connect to a team first: orcmem team connect <postgresql URL> --team <name>.")
    root = Path(app.location().worktree_root)
    key: str | None
    if new_id:
        key, claimed = write_new_id(root), False  # a new random id: no pool holds it yet
    else:
        written, remote = written_id(root), remote_key(root)
        key = written or remote
        claimed = written is not None and written != remote  # the clone's own origin agrees: nothing to confirm
    if key is None:
        raise TeamError(
            "This project has no origin remote to name it the same way on every machine. Add one, or run "
            f"`orcmem team share --new-id` and commit the {ID_FILE} file it writes."
        )
    if confirmed is not None and confirmed.strip().lower() != key:
        raise ValidationError(f"This project's key is {key}, not {confirmed}.")
    project = service.project(app.location(), create=True)
    assert project is not None
    already = any(p.project_id == project.id and p.team_key == key for p in service.team.shared())
    if claimed and confirmed is None and not already:
        _require_confirmation(app, key)
    service.team.share(project, key, confirmed=confirmed is not None)
    echo(f"shared {project.name} as {key}; {plural(service.team.pending(), 'memory', 'memories')} to send")
    _sync_and_report(app, quiet_failure=True)


def _require_confirmation(app: AppContext, key: str) -> None:
    """Refuse a key from .orcmem-project that names a pool the team already holds, until the person confirms it."""
    from orcmem.team.identity import ID_FILE
    from orcmem.team.sync import open_team

    confirm = f"`orcmem team share --confirm {key}`"
    try:
        server = open_team(app.service())
        try:
            held, authors = server.pool_holders(key)
        finally:
            server.close()
    except TeamError as exc:
        raise TeamError(
            f"{ID_FILE} names the pool {key}, and whether the team already holds it cannot be checked ({exc}). "
            f"Share again when the team database is reachable, or, if this repository is that project, run {confirm}."
        ) from None
    if held:
        who = ", ".join(printable(author, keep_newlines=False) for author in authors)
        raise TeamError(
            f"{ID_FILE} names the pool {key}, which the team already holds "
            f"({plural(held, 'memory', 'memories')}{f', from {who}' if who else ''}). A committed file can name any "
            f"project's pool: if this repository is that project, run {confirm}."
        )


@team.command()
@pass_app
def unshare(app: AppContext) -> None:
    """Stop sharing the current project (its memories stay here and on the team)."""
    project = app.project()
    if project is None or not app.service().team.unshare(project):
        raise ValidationError("This project is not shared.")
    echo(f"stopped sharing {project.name}")


@team.command(name="sync")
@pass_app
def sync_command(app: AppContext) -> None:
    """Send this profile's changes to the team and receive the team's, now."""
    _sync_and_report(app, quiet_failure=False)


def _sync_and_report(app: AppContext, *, quiet_failure: bool) -> None:
    from orcmem.team.sync import sync_now

    try:
        report = sync_now(app.service(), wait=True)
    except TeamError as exc:
        if not quiet_failure:
            raise
        echo(f"not synced yet ({exc}); changes wait in the outbox")
        return
    assert report is not None
    links = report.links_pushed + report.links_pulled
    echo(
        f"sent {report.pushed}, received {report.pulled}"
        + (f"; links sent {report.links_pushed}, received {report.links_pulled}" if links else "")
        + (", read-only" if report.read_only else "")
    )
    for line in report.refused:
        echo(f"refused: {line}")
    if report.pending:
        echo(f"{plural(report.pending, 'change')} still waiting")


@team.command()
@json_option
@pass_app
def status(app: AppContext, as_json: bool) -> None:
    """The team this profile is connected to, its shared projects, and what waits to be sent."""
    service = app.service()
    link = service.team.link()
    shared = service.team.shared()
    data: JsonObject = {
        "connected": link is not None,
        "team": link.team if link else None,
        "url": link.url if link else None,
        "person": service.settings.person(),
        "shared": [{"project": p.root_path, "key": p.team_key, "pulled_through": p.pulled_through} for p in shared],
        "pending": service.team.pending(),
    }
    if link is not None:
        data["reachable"], data["problem"] = _reachable(app)
    if as_json:
        echo_json(data)
        return
    if link is None:
        echo("not connected to a team (orcmem team connect <postgresql URL> --team <name>)")
        return
    echo(f"team {link.team} at {link.url}, you are {data['person']}")
    echo("reachable" if data["reachable"] else f"unreachable: {data['problem']}")
    for project in shared:
        echo(f"shared: {project.root_path} as {project.team_key}")
    echo(f"{plural(data['pending'], 'change')} waiting to be sent")


def _reachable(app: AppContext) -> tuple[bool, str | None]:
    from orcmem.team.sync import open_team

    try:
        open_team(app.service()).close()
    except TeamError as exc:
        return False, str(exc)
    return True, None


@team.command()
@pass_app
def disconnect(app: AppContext) -> None:
    """Leave the team: stop syncing and sharing (local memories stay; the stored password is removed)."""
    from orcmem.team.credentials import forget_password

    service = app.service()
    link = service.team.link()
    if link is None:
        raise ValidationError("This profile is not connected to a team.")
    stopped = service.team.clear_link()
    forget_password(link.url)
    echo(f"disconnected from team {link.team}; {plural(stopped, 'project')} no longer shared")


@team.command()
@click.argument("role")
@click.option("--read-only", is_flag=True, help="Read the team's memories only (for CI agents).")
@click.option("--person", help="Bind the role to one person id: it can then write only as that person.")
@pass_app
def grant(app: AppContext, role: str, read_only: bool, person: str | None) -> None:
    """Let an existing database ROLE use this team (run by the team's admin; docs/team.md, Roles)."""
    from orcmem.team.sync import open_team

    server = open_team(app.service())
    try:
        server.grant(role, write=not read_only, person=person)
    finally:
        server.close()
    bound = f", as {person} only" if person else ""
    echo(f"{role} may now {'read' if read_only else 'read and write'} team {server.team}{bound}")
