"""The profile's side of the team pool: its link to the team database, shared projects, the outbox, applying the
team's changes. The network side is `orcmem.team`; nothing here talks to the server."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orcmem.models.constants import SETTING_TEAM_NAME, SETTING_TEAM_URL
from orcmem.models.errors import ValidationError
from orcmem.models.types import Project
from orcmem.rules.contradictions import team_relation
from orcmem.service.audit import note_written
from orcmem.service.core import ServiceCore
from orcmem.service.settings import Settings
from orcmem.store.team import Incoming, Outgoing, SharedProject
from orcmem.store.team_links import LinkIn, LinkOut
from orcmem.text.instructions import looks_like_instructions
from orcmem.text.redact import redact


@dataclass(frozen=True, slots=True)
class TeamLink:
    """Where the team's database is (its URL without a password) and which team this profile belongs to."""

    url: str
    team: str


class Team:
    """Team pool state kept in the profile (`service.team`)."""

    def __init__(self, core: ServiceCore, settings: Settings) -> None:
        """The team's side of the profile over the service's store, clock and audit log."""
        self.core = core
        self.settings = settings
        self.store = core.store

    def link(self) -> TeamLink | None:
        """The team this profile is connected to, or None."""
        url, team = self.store.settings.get(SETTING_TEAM_URL), self.store.settings.get(SETTING_TEAM_NAME)
        return TeamLink(url, team) if url and team else None

    def set_link(self, link: TeamLink) -> None:
        """Connect this profile to a team (the URL must hold no password)."""
        with self.store.db.transaction():
            if self.link() not in (None, link):
                self.store.team.restart()  # another team or database: the cursors and revisions mean nothing there
            self.store.settings.set(SETTING_TEAM_URL, link.url)
            self.store.settings.set(SETTING_TEAM_NAME, link.team)
            self.core.audit("user", "team.connect", metadata={"team": link.team})

    def clear_link(self) -> int:
        """Disconnect: forget the link and stop sharing every project (local memories stay); how many stopped."""
        with self.store.db.transaction():
            stopped = self.store.team.unshare(None)
            self.store.settings.delete(SETTING_TEAM_URL)
            self.store.settings.delete(SETTING_TEAM_NAME)
            self.core.audit("user", "team.disconnect", metadata={"projects": stopped})
        return stopped

    def share(self, project: Project, team_key: str, *, confirmed: bool = False) -> None:
        """Share a project's memories with the team under its team-wide key (`confirmed`: the person confirmed a key
        its `.orcmem-project` names, kept in the audit log)."""
        if self.link() is None:
            raise ValidationError("Connect to a team first: orcmem team connect <postgresql URL> --team <name>.")
        with self.store.db.transaction():
            self.store.team.share(project.id, team_key, self.core.clock())
            metadata: dict[str, object] = {"key": team_key, "confirmed": True} if confirmed else {"key": team_key}
            self.core.audit("user", "team.share", None, project.id, metadata=metadata)

    def unshare(self, project: Project) -> bool:
        """Stop sharing one project (its memories stay here and on the team); whether it was shared."""
        with self.store.db.transaction():
            stopped = self.store.team.unshare(project.id) > 0
            if stopped:
                self.core.audit("user", "team.unshare", None, project.id)
        return stopped

    def shared(self) -> builtins.list[SharedProject]:
        """The projects shared with the team."""
        return self.store.team.shared()

    def pending(self) -> int:
        """How many local changes wait to be pushed: memories, and links between memories the team holds."""
        return self.store.team.pending() + self.store.team_links.ready()

    def outgoing(self, limit: int) -> builtins.list[Outgoing]:
        """The oldest queued changes, as the memories are now, with their vectors."""
        return self.store.team.outgoing(limit, self.settings.embedding_model())

    def pushed(self, done: Sequence[tuple[str, int, int | None]]) -> None:
        """Changes reached the team: (memory id, when it was queued, the server's revision or None)."""
        self.store.team.pushed(done)

    def apply(self, project: SharedProject, changes: Sequence[Incoming], *, advance: bool = True) -> tuple[int, int]:
        """Apply the team's changes to a shared project: the change number pulled through, and how many changed
        something here."""
        model = self.settings.embedding_model() if self.store.vectors.available else None
        changes = [_flagged(_redacted(change)) for change in changes]
        with self.store.db.transaction():
            applied = self.store.team.apply(project, changes, model, self.core.clock(), advance=advance)
            changed = [change.id for change in changes if not change.forgotten]
            self._note_written(changed if applied[1] else [])
        if applied[1]:
            self.store.citations.forget(changed)  # new text or files: fingerprinted again at the next check
            self.core.vectors_changed(changed)
            if any(change.forgotten for change in changes):
                self.store.db.erase_old_pages()  # a forgotten memory's text leaves the WAL too
            self.store.team_links.apply_waiting(
                team_relation, changed
            )  # links that waited for these memories apply now
        return applied

    def _note_written(self, memory_ids: Sequence[str]) -> None:
        """Keep what the store audit works out of each pulled memory's text as stored (a held change stored
        nothing: passed over)."""
        for memory_id in memory_ids:
            stored = self.store.memories.get(memory_id)
            if stored is not None:
                note_written(self.store.audit_scan, stored.id, stored.title, stored.body, redacted=False)

    def outgoing_links(self, limit: int) -> builtins.list[LinkOut]:
        """This profile's links the team does not hold yet, between memories it does (docs/team.md, History)."""
        return self.store.team_links.outgoing(limit)

    def links_pushed(self, links: Sequence[LinkOut]) -> None:
        """The team holds these links now (or refused them for good)."""
        self.store.team_links.pushed(links)

    def apply_links(self, project: SharedProject, links: Sequence[LinkIn]) -> int:
        """Apply the team's links to a shared project (one waits for its memories); how many applied."""
        return self.store.team_links.apply(project, links, team_relation)

    def drop_outbox(self) -> int:
        """Drop the queued changes (a read-only role never sends them); how many."""
        self.store.team_links.drop()
        return self.store.team.clear_outbox()


def _flagged(change: Incoming) -> Incoming:
    """A team change with its instruction flag computed here, as for a local write: the pool's flag is what the
    pushing profile said, or what a member's raw SQL set (false, to have an injection read as plain advice)."""
    if change.forgotten or "title" not in change.fields or "body" not in change.fields:
        return change
    flagged = looks_like_instructions(f"{change.fields['title']}\n{change.fields['body']}")
    if change.fields.get("flagged") == flagged:
        return change
    return replace(change, fields={**change.fields, "flagged": flagged})


def _redacted(change: Incoming) -> Incoming:
    """A team change redacted as every write here is: what reaches the pool was redacted by the profile that pushed
    it, or by none (an older orcmem, narrower rules, straight SQL)."""
    if change.forgotten:
        return change
    fields = dict(change.fields)
    for column in ("title", "body", "topic_key"):
        if fields.get(column) is not None:
            fields[column] = redact(str(fields[column]))
    files = [redact(str(path)) for path in change.files]
    if fields == change.fields and files == change.files:
        return change
    # The vector was made from the secret: this profile embeds the redacted text instead.
    return replace(change, fields=fields, files=files, embedding=None)
