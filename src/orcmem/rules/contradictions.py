"""Contradictions: which relation a new memory's writer may store against an older one, and how it is told.

The writer (the distilling model, an agent through MCP, or the person) says whether a new memory `replaces`,
`refines` or `conflicts` with an older one under another topic key. The ownership rule holds here too: only the
person overrules what the person wrote, so a model's or agent's "replaces" of a person's memory is stored as a
conflict, both sides visible until the person settles it.
"""

from __future__ import annotations

import datetime as dt

from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryLink, Relation, Source
from orcmem.rules.permissions import may_change

CANDIDATES_MAX = 5  # at most this many older memories are shown to the writer for one new memory
NOTE_TITLE_MAX = 80


def allowed_relation(relation: Relation, old_source: Source, actor: Source, *, same_person: bool = True) -> Relation:
    """The relation stored when `actor` says `relation` of an older memory `old_source` wrote: a replacement the
    actor may not make (a person's memory, or another person's across a team) becomes a conflict."""
    if relation is Relation.REPLACES and not (may_change(old_source, actor) and same_person):
        return Relation.CONFLICTS
    return relation


def team_relation(relation: str, made_by: str, old_source: str, old_author: str | None, person: str) -> Relation:
    """The relation a teammate's link holds on this profile: `person`'s replacement of a memory they may not
    overrule (another person's, as `allowed_relation` says) is a conflict there for its author to settle."""
    same_person = old_author is None or old_author == person
    return allowed_relation(Relation(relation), Source(old_source), Source(made_by), same_person=same_person)


def day(ms: int) -> str:
    """A time as its UTC date, the way history is shown (2026-11-02)."""
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d")


def history_line(link: MemoryLink, memory_id: str) -> str:
    """One step of a memory's history as `orcmem show` prints it, seen from `memory_id`."""
    when, who = day(link.at), stated_by(link)
    if link.from_id == memory_id:
        verb = {Relation.REPLACES: "replaced", Relation.REFINES: "refines", Relation.CONFLICTS: "conflicts with"}
        line = f'{verb[link.relation]} {link.to_id} "{_short(link.to_title)}" on {when} (by {who})'
    else:
        verb = {Relation.REPLACES: "replaced by", Relation.REFINES: "refined by", Relation.CONFLICTS: "contradicted by"}
        line = f'{verb[link.relation]} {link.from_id} "{_short(link.from_title)}" on {when} (by {who})'
    if link.open:
        return line + f" - open: {resolve_hint(link)}"
    if link.settled_at is not None:
        return line + f", settled {day(link.settled_at)} by {link.settled_by}"
    return line


def stated_by(link: MemoryLink) -> str:
    """Who stated a link: `user`, `extraction`, `agent` here; a teammate's through the team pool by their id too."""
    if link.person is None:
        return link.by
    return link.person if link.by == "user" else f"{link.by} for {link.person}"


KEEP_BOTH = "both"


def resolve_hint(link: MemoryLink) -> str:
    """The one command that settles an open conflict."""
    return f"orcmem conflicts resolve {link.from_id} --keep {link.from_id}|{link.to_id}|{KEEP_BOTH}"


def _short(title: str) -> str:
    flat = " ".join(title.split())
    return flat if len(flat) <= NOTE_TITLE_MAX else flat[: NOTE_TITLE_MAX - 1] + "…"


def pick_relation(
    replaces: str | None, refines: str | None, conflicts_with: str | None
) -> tuple[Relation | None, str | None]:
    """The one relation a write names (memory_record's arguments, the CLI's options), with the older memory's id;
    (None, None) when it names none.

    Raises:
        ValidationError: it names more than one.
    """
    given = [
        (relation, memory_id)
        for relation, memory_id in (
            (Relation.REPLACES, replaces),
            (Relation.REFINES, refines),
            (Relation.CONFLICTS, conflicts_with),
        )
        if memory_id
    ]
    if len(given) > 1:
        raise ValidationError("Name one older memory: replaces, refines or conflicts_with, not several.")
    return given[0] if given else (None, None)
