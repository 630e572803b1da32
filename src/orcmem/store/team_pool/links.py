"""The links between memories on the team pool's PostgreSQL (docs/team.md, History): every statement about them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from orcmem.models.errors import TeamError
from orcmem.store.team_links import LinkIn, LinkOut
from orcmem.store.team_pool.schema import SCHEMA
from orcmem.store.team_pool.server import PULL_BATCH, TeamServer, channel, first_line


@dataclass(frozen=True, slots=True)
class LinkPushed:
    """What became of one pushed link: stored, or refused and why."""

    link: LinkOut
    refused: str | None = None


def push_links(server: TeamServer, project_key: str, links: Sequence[LinkOut], person: str) -> list[LinkPushed]:
    """State `person`'s links in one transaction under the team's lock, each on its own savepoint: a link the server
    refuses (another's author, a memory it does not hold in the project) leaves the rest. The server dates and
    numbers each.

    Raises:
        TeamError: the database fails.
    """
    import psycopg

    conn, results = server.conn, []
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"orcmem.team.{server.team}",))
            for link in links:
                try:
                    with conn.transaction():
                        conn.execute(
                            f"INSERT INTO {SCHEMA}.links (team_id, project_key, from_id, to_id, author, relation, "
                            "made_by, open, settled, at, seq) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 0, 0) "
                            "ON CONFLICT (team_id, from_id, to_id, author) DO UPDATE SET relation = excluded.relation, "
                            "made_by = excluded.made_by, open = excluded.open, settled = excluded.settled",
                            (
                                server.team,
                                project_key,
                                link.from_id,
                                link.to_id,
                                person,
                                link.relation,
                                link.made_by,
                                link.open,
                                link.settled,
                            ),
                        )
                    results.append(LinkPushed(link))
                except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ForeignKeyViolation) as exc:
                    results.append(LinkPushed(link, first_line(exc)))
            conn.execute("SELECT pg_notify(%s, %s)", (channel(server.team), project_key))
    except psycopg.Error as exc:
        raise TeamError(f"Pushing links to the team failed: {first_line(exc)}") from None
    return results


def pull_links(server: TeamServer, project_key: str, after: int, limit: int = PULL_BATCH) -> list[LinkIn]:
    """The project's links stated or restated after the change number `after`, in order.

    Raises:
        TeamError: the database cannot be read.
    """
    rows = server.read(
        f"SELECT seq, from_id, to_id, author, relation, made_by, open, settled, at FROM {SCHEMA}.links "
        "WHERE team_id = %s AND project_key = %s AND seq > %s ORDER BY seq LIMIT %s",
        (server.team, project_key, after, limit),
        failing="Pulling links from the team",
    )
    return [LinkIn(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), bool(r[7]), int(r[8])) for r in rows]
