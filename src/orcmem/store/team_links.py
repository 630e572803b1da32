"""The team pool's links on this profile's side (docs/team.md, History): which links wait to be pushed, and the
team's links applied here, each once both its memories are."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from orcmem.models.constants import SETTING_PERSON
from orcmem.store.connection import Repository
from orcmem.store.team import SharedProject, same_pool

# This profile's new or changed links between two memories of one shared project that the team holds.
_READY = (
    "FROM memory_links l JOIN memories f ON f.pk = l.from_pk JOIN memories t ON t.pk = l.to_pk "
    "WHERE l.team_state = 0 AND t.project_id = f.project_id AND f.project_id IN (SELECT project_id FROM team_projects) "
    "AND f.status != 'pending' AND t.status != 'pending' AND f.team_revision > 0 AND t.team_revision > 0"
)

_SAME_POOL = same_pool("w.project_id")  # the waiting link's project and its other clones

# Which relation a teammate's link holds here (relation, who stated it, the older memory's source and author, the
# teammate): `rules.contradictions.team_relation`, passed down by the service.
Ownership = Callable[[str, str, str, str | None, str], object]


@dataclass(frozen=True, slots=True)
class LinkOut:
    """A link of this profile's person to push: the pair by the ids the pool knows, and what it says."""

    pk: int
    project_id: str
    from_id: str
    to_id: str
    relation: str
    made_by: str  # who stated it for the person: user, agent, extraction
    open: bool
    settled: bool


@dataclass(frozen=True, slots=True)
class LinkIn:
    """A link as the pool holds it: one person's statement about a pair, dated and numbered by the server."""

    seq: int
    from_id: str
    to_id: str
    author: str
    relation: str
    made_by: str
    open: bool
    settled: bool
    at: int


class TeamLinkRepository(Repository):
    """Every SQL statement about links and the team pool on this profile."""

    def outgoing(self, limit: int) -> list[LinkOut]:
        """This profile's new or changed links between two memories of one shared project that the team holds; a link
        to a memory not shared (waiting for review, never pushed) waits here until it is."""
        rows = self.db.query(
            "SELECT l.pk, f.project_id, f.id, t.id, l.relation, l.by, l.open, l.settled_at IS NOT NULL "
            f"{_READY} ORDER BY l.pk LIMIT ?",
            (limit,),
        )
        return [LinkOut(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6]), bool(r[7])) for r in rows]

    def ready(self) -> int:
        """How many of this profile's links the next sync pushes."""
        row = self.db.query_one(f"SELECT count(*) {_READY}")
        return int(row[0]) if row else 0

    def drop(self) -> None:
        """Never push this profile's links (a read-only role cannot): the team is taken to hold them as they are."""
        self.db.query(
            "UPDATE memory_links SET team_state = 1 WHERE team_state = 0 AND from_pk IN "
            "(SELECT pk FROM memories WHERE project_id IN (SELECT project_id FROM team_projects))"
        )

    def pushed(self, links: Sequence[LinkOut]) -> None:
        """The team holds these links (or refused them for good): each is marked so, unless it changed meanwhile."""
        with self.db.transaction():
            for link in links:
                self.db.query(
                    "UPDATE memory_links SET team_state = 1 WHERE pk = ? AND team_state = 0 AND relation = ? "
                    "AND open = ? AND (settled_at IS NOT NULL) = ?",
                    (link.pk, link.relation, int(link.open), int(link.settled)),
                )

    def apply(self, project: SharedProject, links: Sequence[LinkIn], ownership: Ownership) -> int:
        """Take the team's links for a project (in the pool's order) and move its cursor past them, then apply every
        link whose memories are both here; how many applied. One transaction."""
        with self.db.transaction():
            for link in links:
                self.db.query(
                    "INSERT INTO team_links_waiting (project_id, from_id, to_id, person, relation, by, open, settled, "
                    "at, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (from_id, to_id, person) DO UPDATE SET "
                    "relation = excluded.relation, by = excluded.by, open = excluded.open, settled = excluded.settled, "
                    "at = excluded.at, seq = excluded.seq WHERE excluded.seq > team_links_waiting.seq",
                    (
                        project.project_id,
                        link.from_id,
                        link.to_id,
                        link.author,
                        link.relation,
                        link.made_by,
                        int(link.open),
                        int(link.settled),
                        link.at,
                        link.seq,
                    ),
                )
            if links:
                self.db.query(
                    "UPDATE team_projects SET links_pulled_through = ? WHERE project_id = ?",
                    (links[-1].seq, project.project_id),
                )
            return self.apply_waiting(ownership)

    def apply_waiting(self, ownership: Ownership, arrived: Sequence[str] = ()) -> int:
        """Apply the team's links whose two memories are here (the others wait for them), in the pool's order, a
        teammate's as `ownership` lets them stand; what they say was replaced, and what memories just `arrived` from
        the team the team's links say was, is superseded here. How many applied. The outbox triggers pass over it:
        the team holds all this already."""
        me = self.db.query_one("SELECT value FROM settings WHERE key = ?", (SETTING_PERSON,))
        applied = 0
        touched: list[int] = []
        if arrived:
            marks = ", ".join("?" * len(arrived))
            touched = [
                int(r[0]) for r in self.db.query(f"SELECT pk FROM memories WHERE id IN ({marks})", list(arrived))
            ]
        with self.db.transaction():
            self.db.query("UPDATE team_applying SET applying = 1")
            try:
                rows = self.db.query(
                    "SELECT w.from_id, w.to_id, w.person, w.relation, w.by, w.open, w.settled, w.at, f.pk, t.pk, "
                    "l.team_state, t.source, t.author FROM team_links_waiting w "
                    # Only memories shared under the link's key: an id here in another project, or of a memory
                    # waiting for review (never sent), is not the pool's.
                    f"JOIN memories f ON f.id = w.from_id AND f.project_id IN ({_SAME_POOL}) AND f.status != 'pending' "
                    f"JOIN memories t ON t.id = w.to_id AND t.project_id IN ({_SAME_POOL}) AND t.status != 'pending' "
                    "LEFT JOIN memory_links l ON l.from_pk = f.pk AND l.to_pk = t.pk ORDER BY w.seq"
                )
                for row in rows:
                    from_id, to_id, person, relation, by, is_open, settled, at, from_pk, to_pk, state = row[:11]
                    self.db.query(
                        "DELETE FROM team_links_waiting WHERE from_id = ? AND to_id = ? AND person = ?",
                        (from_id, to_id, person),
                    )
                    mine = me is not None and person == me[0]
                    if state == 0 or (mine and state is not None):
                        continue  # changed here and not pushed yet, or our own word back: ours stands
                    if not mine and (allowed := str(ownership(relation, by, row[11], row[12], person))) != relation:
                        relation, is_open, settled = allowed, 1, 0  # theirs to settle, not ours to overrule
                    self.db.query(
                        "INSERT INTO memory_links (from_pk, to_pk, relation, at, by, open, settled_at, settled_by, "
                        "person, team_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1) ON CONFLICT (from_pk, to_pk) DO "
                        "UPDATE SET relation = excluded.relation, at = excluded.at, by = excluded.by, "
                        "open = excluded.open, settled_at = excluded.settled_at, settled_by = excluded.settled_by, "
                        "person = excluded.person, team_state = 1",
                        (
                            from_pk,
                            to_pk,
                            relation,
                            at,
                            by,
                            is_open,
                            at if settled else None,
                            "user" if settled else None,
                            None if mine else person,
                        ),
                    )
                    applied += 1
                    touched.append(to_pk)
                # A replacement (the team's, or ours) keeps the older memory superseded here, whatever status its
                # latest change from the team carried: it may arrive after the link, or the pool may hold it active
                # (only its author changes a person's memory there, while a link is anyone's own word).
                marks = ", ".join("?" * len(touched))
                self.db.query(
                    "UPDATE memories SET status = 'superseded' WHERE status = 'active' AND pk IN (SELECT l.to_pk "
                    "FROM memory_links l JOIN memories f ON f.pk = l.from_pk WHERE l.relation = 'replaces' "
                    f"AND l.open = 0 AND f.status != 'pending' AND l.to_pk IN ({marks}))",
                    touched,
                )
            finally:
                self.db.query("UPDATE team_applying SET applying = 0")
        return applied
