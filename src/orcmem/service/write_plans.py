"""Plans of an agent's memory writes: every argument and ownership rule checked before anyone is asked."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from orcmem.models.constants import BODY_MAX_CHARS, TITLE_MAX_CHARS
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.errors import OrcmemError, ValidationError
from orcmem.models.types import Memory, MemoryType, NewMemory, Scope, Source, Verdict
from orcmem.models.vocabulary import ManageAction, ManageScope, Mode, values
from orcmem.rules import memory as rules
from orcmem.rules.permissions import Decision, require_may_change
from orcmem.service.approvals import Approvals, PlannedWrite
from orcmem.service.memory_service import USER_TOPIC_MESSAGE
from orcmem.text.redact import redact

# What an agent records on its own; preferences, facts and workflows the person states go through memory_manage.
AGENT_RECORD_TYPES: tuple[str, ...] = tuple(
    kind.value
    for kind in (
        MemoryType.DECISION,
        MemoryType.LESSON,
        MemoryType.COMMAND,
        MemoryType.ENV_QUIRK,
        MemoryType.CONVENTION,
        MemoryType.SPEC,
    )
)
MANAGE_ACTIONS: tuple[str, ...] = values(ManageAction)
MANAGE_KINDS: tuple[str, ...] = tuple(
    kind.value for kind in (MemoryType.PREFERENCE, MemoryType.FACT, MemoryType.WORKFLOW, MemoryType.DECISION)
)
MANAGE_SCOPES: tuple[str, ...] = values(ManageScope)
FEEDBACK_VERDICTS: tuple[str, ...] = values(Verdict)

_SCOPE_NAMES = {Scope.PROJECT: "workspace", Scope.GLOBAL: "global"}
_NAMED_SCOPES = {"workspace": Scope.PROJECT, "global": Scope.GLOBAL}


def scope_name(scope: Scope) -> str:
    """`workspace` for a project memory, `global` for one every project sees."""
    return _SCOPE_NAMES[scope]


def _choice(field: str, value: object, allowed: tuple[str, ...]) -> str:
    text = str(value).strip().lower() if value is not None else ""
    if text not in allowed:
        shown = "nothing" if value is None else repr(value)
        raise ValidationError(f"Unknown {field} {shown}; choose one of: {', '.join(allowed)}.")
    return text


def _required_text(field: str, value: str | None, check: Callable[[str], str], action: str) -> str:
    if value is None:
        raise ValidationError(f"{action} needs a {field}.")
    return check(value)


class WritePlans:
    """Turns a write tool's arguments into a checked plan, and says what the person must be asked about it
    (`AgentTools.plans`)."""

    def __init__(self, approvals: Approvals) -> None:
        """Plans for the session and project of `approvals`, whose policy says when to ask."""
        self.approvals = approvals
        self.memory = approvals.memory
        self.project = approvals.project

    # --- asking before a call runs -----------------------------------------------------------------------------
    def question(self, tool: str, arguments: Mapping[str, JsonValue]) -> str | None:
        """The question the user must answer before `tool` may run with `arguments`, or None if none is needed.

        A host that must ask before the call runs (MCP elicitation) calls this first, then calls the tool with an
        `ask` that returns the user's answer. Invalid arguments give None: the call itself reports the error.
        """
        if self.approvals.mode is not Mode.REVIEW or self.approvals.headless or not self.approvals.is_enabled():
            return None
        try:
            write = self._plan(tool, arguments)
        except (OrcmemError, KeyError):
            return None
        if write is None or self.approvals.verdict(write, can_ask=True).decision is not Decision.ASK:
            return None
        return self.approvals.question(write)

    def _plan(self, tool: str, arguments: Mapping[str, JsonValue]) -> PlannedWrite | None:
        args = dict(arguments)
        if tool == "memory_record":
            related = args.get("replaces") or args.get("refines") or args.get("conflicts_with")
            return self.plan_record(args["type"], args["title"], args["body"], args.get("topic_key"), related)[0]
        if tool == "memory_feedback":
            return self.plan_feedback(args["id"], args["verdict"])[0]
        if tool == "memory_manage":
            plan = self.plan_manage(
                args["action"],
                args.get("kind"),
                args.get("scope", "workspace"),
                args.get("id"),
                args.get("title"),
                args.get("body"),
                args.get("topic_key"),
            )
            return plan.write if plan.action != "update" or plan.predicted_changes else None
        return None

    # --- plans: validate everything (ownership included) before anyone is asked ----------------------------------
    def plan_record(
        self, type: str, title: str, body: str, topic_key: str | None, related_id: str | None = None
    ) -> tuple[PlannedWrite, NewMemory]:
        """Check a memory_record call's arguments, ownership and the older memory it names; what will be written."""
        self.approvals.require_enabled()
        memory_type = self._agent_type(type)
        clean_title = rules.check_title(title)
        clean_body = rules.check_body(body)
        key = rules.check_topic_key(topic_key)
        self._check_topic_owner(self.project.id, key)
        older = self.memory.history.target(self.project, related_id) if related_id else None
        about = f"\n(about the older memory: {redact(older.title)})" if older is not None else ""
        write = PlannedWrite(
            tool="memory_record",
            reason=f"Save to project memory: {redact(clean_title)}",
            detail=f"[{memory_type}] {redact(clean_title)}\n{redact(clean_body)}{about}",
            review_text=f"{clean_title}\n{clean_body}",
            duplicate_of=(clean_title, clean_body),
        )
        new = NewMemory(type=memory_type, title=clean_title, body=clean_body, source=Source.AGENT, topic_key=key)
        return write, new

    def plan_feedback(self, id: str, verdict: str) -> tuple[PlannedWrite, Memory, str]:
        """Check a memory_feedback call's arguments and ownership; what will be written."""
        self.approvals.require_enabled()
        checked = rules.check_verdict(verdict)
        memory = self.memory.get_reviewed(self.project, id)
        if checked is not Verdict.HELPFUL:
            require_may_change(memory.source, Source.AGENT, "Only the user can retract a memory they wrote.")
        write = PlannedWrite(
            tool="memory_feedback",
            reason=f'Mark the memory "{memory.title}" as {checked}',
            memory_id=memory.id,
        )
        return write, memory, str(checked)

    def plan_manage(
        self,
        action: str,
        kind: str | None,
        scope: str,
        id: str | None,
        title: str | None,
        body: str | None,
        topic_key: str | None,
    ) -> _ManagePlan:
        """Check a memory_manage call's arguments and ownership; what will be written."""
        self.approvals.require_enabled()
        act = _choice("action", action, MANAGE_ACTIONS)
        named_scope = _choice("scope", scope, MANAGE_SCOPES)
        if act == "create":
            return self._plan_create(kind, named_scope, id, title, body, topic_key)
        if id is None or not str(id).strip():
            raise ValidationError(
                f"{act} needs the id of the memory: mem_ followed by 32 lowercase hex characters "
                "(memory_search shows it)."
            )
        memory = self.memory.get_reviewed(self.project, rules.check_memory_id(str(id)))
        actual = scope_name(memory.scope)
        if actual != named_scope:
            raise ValidationError(
                f"Memory {memory.id} is a {actual} memory, not a {named_scope} one; pass scope {actual} to {act} it."
            )
        verb = "change" if act == "update" else "delete"
        require_may_change(
            memory.source,
            Source.AGENT,
            f"Memory {memory.id} was written by the user; only the user can {verb} it. "
            "Tell the user what you would change instead.",
        )
        if act == "forget":
            write = PlannedWrite(
                tool="memory_manage",
                reason=f'Forget the {actual} memory "{memory.title}"',
                memory_id=memory.id,
                global_scope=memory.scope is Scope.GLOBAL,
            )
            return _ManagePlan("forget", actual, write, memory=memory)
        return self._plan_update(memory, actual, kind, title, body, topic_key)

    def _plan_create(
        self,
        kind: str | None,
        named_scope: str,
        id: str | None,
        title: str | None,
        body: str | None,
        topic_key: str | None,
    ) -> _ManagePlan:
        if id is not None and str(id).strip():
            raise ValidationError(f"create makes a new memory and takes no id; use update to change memory {id}.")
        if kind is None:
            raise ValidationError(f"create needs a kind: one of {', '.join(MANAGE_KINDS)}.")
        memory_kind = _choice("kind", kind, MANAGE_KINDS)
        clean_title = _required_text("title", title, rules.check_title, "create")
        clean_body = _required_text("body", body, rules.check_body, "create")
        key = rules.check_topic_key(topic_key)
        scope = _NAMED_SCOPES[named_scope]
        self._check_topic_owner(self.project.id if scope is Scope.PROJECT else None, key)
        write = PlannedWrite(
            tool="memory_manage",
            reason=f"Save to {named_scope} memory: {redact(clean_title)}",
            detail=f"[{memory_kind}] {redact(clean_title)}\n{redact(clean_body)}",
            review_text=f"{clean_title}\n{clean_body}",
            duplicate_of=(clean_title, clean_body),
            global_scope=scope is Scope.GLOBAL,
        )
        new = NewMemory(
            type=memory_kind, title=clean_title, body=clean_body, source=Source.AGENT, topic_key=key, scope=scope
        )
        return _ManagePlan("create", named_scope, write, new=new)

    def _plan_update(
        self,
        memory: Memory,
        named_scope: str,
        kind: str | None,
        title: str | None,
        body: str | None,
        topic_key: str | None,
    ) -> _ManagePlan:
        new_kind = _choice("kind", kind, MANAGE_KINDS) if kind is not None else None
        new_title = rules.check_title(title) if title is not None else None
        new_body = rules.check_body(body) if body is not None else None
        if topic_key is not None and rules.check_topic_key(topic_key) != memory.topic_key:
            raise ValidationError(
                "A memory's topic key cannot be changed; forget this memory and create one under the new key."
            )
        if new_kind is None and new_title is None and new_body is None:
            raise ValidationError("update needs something to change: a new title, body or kind.")
        predicted = [
            name
            for name, new, old in (
                ("title", None if new_title is None else redact(new_title)[:TITLE_MAX_CHARS], memory.title),
                ("body", None if new_body is None else redact(new_body)[:BODY_MAX_CHARS], memory.body),
                ("kind", new_kind, str(memory.type)),
            )
            if new is not None and new != old
        ]
        shown_title = redact(new_title) if new_title is not None else memory.title
        shown_body = redact(new_body) if new_body is not None else memory.body
        write = PlannedWrite(
            tool="memory_manage",
            reason=f'Update the {named_scope} memory "{memory.title}" ({", ".join(predicted) or "nothing"})',
            detail=f"[{new_kind or memory.type}] {shown_title}\n{shown_body}",
            memory_id=memory.id,
            review_text=f"{new_title or ''}\n{new_body or ''}".strip(),
            duplicate_of=(new_title or memory.title, new_body or memory.body),
            exclude_id=memory.id,
            global_scope=memory.scope is Scope.GLOBAL,
        )
        return _ManagePlan(
            "update",
            named_scope,
            write,
            memory=memory,
            edit={"title": new_title, "body": new_body, "type": new_kind},
            predicted_changes=predicted,
        )

    def _agent_type(self, value: str) -> str:
        text = str(value).strip().lower()
        if text in AGENT_RECORD_TYPES:
            return text
        if text in (MemoryType.PREFERENCE, MemoryType.OWNERSHIP):
            raise ValidationError(
                f"Agents cannot record {text} memories with memory_record; choose one of: "
                f"{', '.join(AGENT_RECORD_TYPES)} (a preference the user states goes through memory_manage)."
            )
        raise ValidationError(f"Unknown type {value!r}; choose one of: {', '.join(AGENT_RECORD_TYPES)}.")

    def _check_topic_owner(self, project_id: str | None, topic_key: str | None) -> None:
        if topic_key is None:
            return
        existing = self.memory.store.memories.find_active_topic(project_id, topic_key)
        if existing is not None:
            require_may_change(existing.source, Source.AGENT, USER_TOPIC_MESSAGE)


@dataclass(slots=True)
class _ManagePlan:
    """A validated memory_manage call and how to carry it out once allowed."""

    action: str
    scope: str
    write: PlannedWrite | None
    memory: Memory | None = None
    new: NewMemory | None = None
    edit: dict[str, str | None] | None = None
    predicted_changes: list[str] | None = None

    def run(self, plans: WritePlans) -> JsonObject:
        """Carry out the change and say what changed, and in which scope."""
        service, project = plans.memory, plans.project
        if self.action == "create":
            assert self.new is not None
            result = service.record(project, self.new)
            stored = result.memory
            if result.merged:
                return {
                    "action": "merged",
                    "id": stored.id,
                    "scope": self.scope,
                    "kind": str(stored.type),
                    "changed": ["title", "body"],
                    "note": "an existing memory with the same topic key now holds this title and body",
                }
            return {"action": "created", "id": stored.id, "scope": self.scope, "kind": str(stored.type)}
        assert self.memory is not None
        if self.action == "forget":
            gone = service.forget(project, self.memory.id, actor=Source.AGENT)
            return {"action": "forgotten", "id": gone.id, "scope": self.scope, "title": gone.title}
        assert self.edit is not None
        before = self.memory
        after = service.edit(project, before.id, actor=Source.AGENT, **self.edit)
        changed = [
            name
            for name, old, new in (
                ("title", before.title, after.title),
                ("body", before.body, after.body),
                ("kind", before.type, after.type),
            )
            if old != new
        ]
        return {
            "action": "updated" if changed else "unchanged",
            "id": after.id,
            "scope": self.scope,
            "kind": str(after.type),
            "changed": changed,
        }
