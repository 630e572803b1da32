"""Request handlers: parse the request, call the service once in a worker thread, render or redirect."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from orcmem.app.distilling import describe_extraction
from orcmem.app.runtime import make_embedder
from orcmem.extract.resolve import agent_name
from orcmem.host import keystore
from orcmem.models.constants import EXPORT_FILES, EXTRACTION_PROVIDERS, MODEL_HARNESS, SEARCH_MAX_LIMIT
from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import KeyStoreError, OrcmemError, ValidationError
from orcmem.models.types import (
    Memory,
    MemoryFilter,
    MemoryLink,
    MemoryType,
    Project,
    Provenance,
    Source,
    Status,
    Verdict,
)
from orcmem.models.vocabulary import values
from orcmem.rules.budget import describe_budget
from orcmem.rules.contradictions import KEEP_BOTH
from orcmem.service.memory_service import MemoryService
from orcmem.service.overview import RunsOverview
from orcmem.text.wording import plural
from orcmem.web import views
from orcmem.web.chart import growth_chart
from orcmem.web.security import TOKEN_FIELD, TOKEN_HEADER, tokens_match
from orcmem.web.state import WebState

log = logging.getLogger("orcmem.web")
T = TypeVar("T")

PARTIAL_HEADER = "x-orcmem-partial"
MISSING_TOKEN = "Refused: this change did not carry the key of this page. Reload the page and try again."
REVIEW_ACTIONS = ("accept", "reject", "accept-run")  # the Inbox's buttons (docs/learning.md, The review inbox)
CONFLICT_ACTIONS = ("keep", "keep-both")  # settle an open conflict with the memory in the form's `other`
AUDIT_ACTIONS = ("merge", "redact")  # the Overview's Audit panel (docs/audit.md); retract and delete are the cards'
MEMORY_ACTIONS = (
    "edit",
    *values(Verdict),
    "delete",
    "export",
    *REVIEW_ACTIONS,
    *CONFLICT_ACTIONS,
    *AUDIT_ACTIONS,
)  # a verdict is one of the buttons


def _state(request: Request) -> WebState:
    return request.app.state.web  # type: ignore[no-any-return]


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


# --- notices that survive a redirect ---------------------------------------------------------------------------


def _set_flash(response: Response, state: WebState, kind: str, text: str) -> None:
    payload = base64.urlsafe_b64encode(json.dumps({"kind": kind, "text": text}).encode()).decode()
    response.set_cookie(state.flash_cookie, payload, max_age=120, httponly=True, samesite="strict")


def _pop_flash(request: Request, state: WebState) -> dict[str, str] | None:
    raw = request.cookies.get(state.flash_cookie)
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw.encode()))
        return {"kind": str(data["kind"]), "text": str(data["text"])}
    except (ValueError, KeyError, TypeError):
        return None


# --- rendering ---------------------------------------------------------------------------------------------------


def _render(request: Request, name: str, context: JsonObject, status: int = 200) -> Response:
    state = _state(request)
    flash = _pop_flash(request, state)
    choice = context.get("choice")
    full = {
        "inbox_count": _inbox_count(state.service, choice.project if isinstance(choice, ProjectChoice) else None),
        "token": state.token,
        "now": state.service.clock(),
        "person": state.service.settings.own_ids(),
        "offset": state.utc_offset_ms(),
        "flash": flash,
        "page_name": name.removesuffix(".html"),
        **context,
    }
    response = state.templates.TemplateResponse(request, name, full, status_code=status)
    response.headers["cache-control"] = "no-store"
    response.headers["vary"] = "X-Orcmem-Partial"
    if flash is not None:
        response.delete_cookie(state.flash_cookie, httponly=True, samesite="strict")
    return response


def _inbox_count(service: MemoryService, project: Project | None) -> int:
    """How many learned memories and teammates' conflicts wait for review in the project, for the nav (0 when it
    cannot be read)."""
    if project is None:
        return 0
    try:
        # One indexed count, and the open conflicts teammates stated (a partial index on open links).
        return service.review.count(project) + service.review.team_conflict_count(project)
    except OrcmemError:
        return 0


async def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a synchronous service call in a worker thread."""
    return await run_in_threadpool(fn, *args, **kwargs)


@dataclass(frozen=True, slots=True)
class ProjectChoice:
    """Every project, the one shown, and a note when the asked one was not found."""

    projects: list[tuple[Project, int]]
    project: Project | None
    notice: str | None = None


def _choose_project(service: MemoryService, wanted: str | None) -> ProjectChoice:
    projects = service.projects()  # most recently used first
    default = projects[0][0] if projects else None
    if not wanted:
        return ProjectChoice(projects, default)
    for project, _ in projects:
        if project.id == wanted:
            return ProjectChoice(projects, project)
    note = "That project is not known here" + (", so the most recently used one is shown." if default else ".")
    return ProjectChoice(projects, default, note)


# --- the Memory page ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    """The Memory page's address: project, search text, filters and page."""

    project: str = ""
    q: str = ""
    type: str = ""
    source: str = ""
    provenance: str = ""
    status: str = ""
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> MemoryQuery:
        """Read the query string; a malformed page number is page 1."""
        try:
            page = max(1, int(params.get("page", "1")))
        except ValueError:
            page = 1
        return cls(
            project=params.get("project", "").strip(),
            q=params.get("q", "").strip(),
            type=params.get("type", "").strip(),
            source=params.get("source", "").strip(),
            provenance=params.get("provenance", "").strip(),
            status=params.get("status", "").strip(),
            page=page,
        )

    @property
    def filtered(self) -> bool:
        """Whether any search text or filter is set."""
        return bool(self.q or self.type or self.source or self.provenance or self.status)

    def url(self, **changes: Any) -> str:
        """This page's address with some parameters changed (page 1 is left out)."""
        values = replace(self, **changes)
        return views.with_query(
            "/",
            project=values.project,
            q=values.q,
            type=values.type,
            source=values.source,
            provenance=values.provenance,
            status=values.status,
            page=values.page if values.page > 1 else None,
        )


@dataclass
class MemoryPage:
    """Everything the Memory page shows."""

    choice: ProjectChoice
    query: MemoryQuery
    enabled: bool
    semantic: bool = False
    items: list[Memory] = field(default_factory=list)
    pages: views.Pages = field(default_factory=lambda: views.Pages(1, 0))
    error: str | None = None
    inbox: list[Memory] = field(default_factory=list)  # the learned memories that wait for review, oldest first
    runs: dict[str, str] = field(default_factory=dict)  # each waiting memory's run, in words
    reasons: dict[str, str] = field(default_factory=dict)  # why each waits, under the policy as it is now
    expire_days: int = 0
    search_notice: str | None = None  # the search matched words only although meaning was wanted, and why
    history: dict[str, list[MemoryLink]] = field(default_factory=dict)  # each shown memory's links, by its id
    team_conflicts: list[MemoryLink] = field(default_factory=list)  # open conflicts teammates stated (docs/team.md)


def _check_choice(value: str, allowed: tuple[str, ...], what: str) -> None:
    if value and value not in allowed:
        raise ValidationError(f"There is no {what} called {value!r}.")


# The oldest waiting memories (and the newest conflicts teammates stated) the page shows at once; `orcmem review`
# goes through any number.
INBOX_SHOWN = 50


def _load_memories(service: MemoryService, query: MemoryQuery) -> MemoryPage:
    choice = _choose_project(service, query.project)
    enabled = service.is_enabled()
    page = MemoryPage(choice, query, enabled, semantic=enabled and service.semantic_ready)
    project = choice.project
    if project is None:
        return page
    query = replace(query, project=project.id)
    page.query = query
    try:
        page.inbox = service.review.pending(project, INBOX_SHOWN)
        page.team_conflicts = service.review.team_conflicts(project, INBOX_SHOWN)
        page.runs = {
            m.source_run_id: label
            for m in page.inbox
            if m.source_run_id and (label := service.review.run_label(m.source_run_id))
        }
        page.expire_days = service.review.expire_days()
        page.history = {m.id: service.history.links(m.id) for m in page.inbox}  # a conflict shows its other side
        page.reasons = {
            m.id: reason
            for m in page.inbox
            if (
                reason := service.review.waits(
                    project, source=m.source, memory_type=m.type, confidence=m.confidence, provenance=m.provenance
                )
            )
        }
        _check_choice(query.type, tuple(str(t) for t in MemoryType), "memory type")
        _check_choice(query.source, tuple(str(s) for s in Source), "source")
        _check_choice(query.provenance, tuple(str(p) for p in Provenance), "provenance")
        _check_choice(query.status, tuple(str(s) for s in Status), "status")
        if query.q:
            outcome = service.search.run(project, query.q, SEARCH_MAX_LIMIT, semantic=enabled)
            hits, page.search_notice = outcome.hits, outcome.notice
            found = [
                hit.memory
                for hit in hits
                if (not query.type or hit.memory.type == query.type)
                and (not query.source or hit.memory.source == query.source)
                and (not query.provenance or hit.memory.provenance == query.provenance)
                and (not query.status or hit.memory.status == query.status)
            ]
            page.pages = views.Pages.clamp(query.page, len(found))
            page.items = found[page.pages.start : page.pages.start + views.PAGE_SIZE]
        else:
            flt = MemoryFilter(
                types=(query.type,) if query.type else (),
                sources=(query.source,) if query.source else (),
                provenances=(query.provenance,) if query.provenance else (),
                statuses=(query.status,) if query.status else (),
                limit=views.PAGE_SIZE,
            )
            page.pages = views.Pages.clamp(query.page, service.count(project, flt))
            page.items = service.list(project, replace(flt, offset=page.pages.start))
        page.history.update({memory.id: service.history.links(memory.id) for memory in page.items})
    except OrcmemError as exc:
        page.error = str(exc)
    return page


async def memories_page(request: Request) -> Response:
    """GET /: the memories of one project, searchable, filterable, 25 to a page."""
    state = _state(request)
    query = MemoryQuery.from_params(request.query_params)
    try:
        data = await _call(_load_memories, state.service, query)
    except OrcmemError as exc:  # the database itself failed: say so, keep the page usable
        data = MemoryPage(ProjectChoice([], None), query, enabled=False, error=str(exc))
    context = {
        "m": data,
        "choice": data.choice,
        "next_url": data.query.url(),
        "count_line": views.count_line(data.pages, bool(query.q)),
    }
    if request.headers.get(PARTIAL_HEADER) == "results":
        return _render(request, "_results.html", context)
    return _render(request, "memories.html", context)


# --- memory actions ----------------------------------------------------------------------------------------------


def _require_token(request: Request, form: FormData) -> None:
    given = request.headers.get(TOKEN_HEADER) or form.get(TOKEN_FIELD)
    if not tokens_match(given if isinstance(given, str) else None, _state(request).token):
        raise HTTPException(403, MISSING_TOKEN)


def _form_text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class ActionResult:
    """What an action did: a notice, the memory as it is now (None when deleted)."""

    message: str
    memory: Memory | None


def _quote(title: str) -> str:
    return f"\u201c{title}\u201d"


def _apply(service: MemoryService, action: str, memory_id: str, project_id: str, form: FormData) -> ActionResult:
    choice = _choose_project(service, project_id)
    if project_id and choice.notice:
        raise ValidationError("That project is not known here; reload the page.")
    project = choice.project
    if action == "edit":
        memory = service.edit(project, memory_id, title=_form_text(form, "title"), body=_form_text(form, "body"))
        return ActionResult(f"Saved {_quote(memory.title)}.", memory)
    if action == "helpful":
        memory = service.feedback(project, memory_id, "helpful")
        return ActionResult(f"Marked {_quote(memory.title)} as helpful.", memory)
    if action == "wrong":
        memory = service.feedback(project, memory_id, "wrong")
        return ActionResult(f"Retracted {_quote(memory.title)}: agents will no longer see it.", memory)
    if action == "stale":
        memory = service.feedback(project, memory_id, "stale")
        return ActionResult(f"Marked {_quote(memory.title)} as stale: agents will no longer see it.", memory)
    if action == "delete":
        memory = service.forget(project, memory_id)
        return ActionResult(f"Deleted {_quote(memory.title)}.", None)
    if action in ("keep", "keep-both"):
        other = _form_text(form, "other")
        service.history.resolve(project, other, KEEP_BOTH if action == "keep-both" else memory_id)
        memory = service.get(project, memory_id)
        settled = "both kept" if action == "keep-both" else f"{_quote(memory.title)} kept, the other is history"
        return ActionResult(f"Conflict settled: {settled}.", memory)
    if action == "export":
        file_name = _form_text(form, "file")
        if file_name not in EXPORT_FILES:
            raise ValidationError(f"Memories can be added to {' or '.join(EXPORT_FILES)} only.")
        if project is None:
            raise ValidationError("Choose a project first: the file goes into the project's folder.")
        memory = service.get(project, memory_id)
        target, changed = service.export(project, memory_id, file_name, Path(project.root_path))
        if changed:
            return ActionResult(f"Added {_quote(memory.title)} to {target}.", memory)
        return ActionResult(f"{_quote(memory.title)} is already in {target}.", memory)
    if action in REVIEW_ACTIONS:
        return _review(service, project, action, memory_id, form)
    if action == "merge":
        kept = service.store_audit.merge(project, _form_text(form, "into"), memory_id)
        return ActionResult(f"Merged it into {_quote(kept.title)}.", None)
    if action == "redact":
        memory, changed = service.store_audit.redact(project, memory_id)
        return ActionResult(f"Redacted {_quote(memory.title)} again." if changed else "Nothing to redact.", memory)
    raise HTTPException(404, "No such action.")


def _review(
    service: MemoryService, project: Project | None, action: str, memory_id: str, form: FormData
) -> ActionResult:
    """The Inbox's answers: accept (with the title and details as the form holds them), reject, accept the run."""
    if action == "accept":
        title, body = _form_text(form, "title").strip(), _form_text(form, "body").strip()
        memory = service.review.accept(project, memory_id, title=title or None, body=body or None)
        return ActionResult(f"Accepted {_quote(memory.title)}: agents see it from now on.", memory)
    if action == "reject":
        memory = service.review.reject(project, memory_id)
        return ActionResult(f"Rejected {_quote(memory.title)}: it is erased.", None)
    waiting = service.get(project, memory_id)
    if project is None or not waiting.source_run_id:
        raise ValidationError("This memory names no run; accept it on its own.")
    accepted = service.review.accept_run(project, waiting.source_run_id)
    return ActionResult(f"Accepted {plural(len(accepted), 'memory', 'memories')} of this run.", None)


def _card_html(request: Request, memory: Memory, project_id: str, next_url: str) -> str:
    state = _state(request)
    template = state.templates.get_template("_card.html")
    return template.render(
        memory=memory,
        project_id=project_id,
        next_url=next_url,
        token=state.token,
        history=state.service.history.links(memory.id),
        now=state.service.clock(),
        person=state.service.settings.own_ids(),
        offset=state.utc_offset_ms(),
    )


async def memory_action(request: Request) -> Response:
    """POST /memories/{id}/{action}: edit, helpful, wrong (retract), stale, delete or export; needs the token."""
    state = _state(request)
    form = await request.form()
    _require_token(request, form)
    action = request.path_params["action"]
    if action not in MEMORY_ACTIONS:
        raise HTTPException(404, "No such action.")
    memory_id = request.path_params["memory_id"]
    project_id = _form_text(form, "project")
    next_url = views.safe_next(form.get("next"))
    try:
        result = await _call(_apply, state.service, action, memory_id, project_id, form)
    except OrcmemError as exc:
        message = f"Could not update this memory. {exc}"
        if _wants_json(request):
            return JSONResponse({"ok": False, "error": message}, status_code=400)
        response = RedirectResponse(next_url, status_code=303)
        _set_flash(response, state, "error", message)
        return response
    if _wants_json(request):
        html = _card_html(request, result.memory, project_id, next_url) if result.memory else None
        return JSONResponse(
            {
                "ok": True,
                "message": result.message,
                "removed": result.memory is None,
                "memory": result.memory.to_dict() if result.memory else None,
                "html": html,
            }
        )
    anchor = "#inbox" if action in REVIEW_ACTIONS else "#audit" if action in AUDIT_ACTIONS else ""
    anchor = anchor or (f"#{result.memory.id}" if result.memory else "")
    response = RedirectResponse(next_url + anchor, status_code=303)
    _set_flash(response, state, "ok", result.message)
    return response


# --- overview and runs ------------------------------------------------------------------------------------------


async def overview_page(request: Request) -> Response:
    """GET /overview: counts by type, source and status, and how the memories grew."""
    state = _state(request)

    def load() -> JsonObject:
        choice = _choose_project(state.service, request.query_params.get("project", ""))
        overview = audit = None
        if choice.project is not None:
            overview = state.service.overview(choice.project, utc_offset_ms=state.utc_offset_ms())
            audit = state.service.store_audit.run(choice.project)
        return {"choice": choice, "overview": overview, "audit": audit}

    data = await _call(load)
    overview = data["overview"]
    chart = growth_chart(overview.growth, overview.period) if overview else ""
    return _render(request, "overview.html", {**data, "chart": chart})


async def runs_page(request: Request) -> Response:
    """GET /runs: the project's run summaries and extraction jobs, newest first."""
    state = _state(request)

    def load() -> JsonObject:
        choice = _choose_project(state.service, request.query_params.get("project", ""))
        runs = state.service.runs_overview(choice.project) if choice.project else None
        return {"choice": choice, "runs": runs, **_learning_cost(state.service, choice.project, runs)}

    return _render(request, "runs.html", {**(await _call(load)), "agent_name": agent_name})


def _learning_cost(service: MemoryService, project: Project | None, runs: RunsOverview | None) -> dict[str, Any]:
    """What the Runs page shows of the cost of learning: each job's cost, the period totals, the budget, a hold."""
    cost = service.cost
    periods = [
        (label, cost.total(period, project.id if project else None), cost.total(period))
        for period, label in views.COST_PERIODS
    ]
    hold = cost.hold()
    return {
        "costs": cost.for_runs([job.run_id for job, _run in runs.jobs]) if runs else {},
        "cost_periods": periods,
        "budget": describe_budget(cost.budget()),
        "spent_today": cost.spent_today(),
        "hold": hold.reason if hold else None,
    }


# --- settings ---------------------------------------------------------------------------------------------------


def _load_settings(state: WebState) -> JsonObject:
    service = state.service
    settings = service.settings.current()
    key = keystore.load_api_key(state.environ)
    return {
        "settings": settings,
        "sentence": describe_extraction(service, state.environ),
        "key": key,
        "vectors": service.settings.vector_status(),
        "semantic_ready": service.semantic_ready,
        "model_harness": MODEL_HARNESS,
        "model_defaults": views.MODEL_DEFAULT_LABELS,
        "grants": service.grants(),
    }


async def settings_page(request: Request) -> Response:
    """GET /settings: memory on or off, who summarizes runs, the Anthropic API key."""
    return _render(request, "settings.html", await _call(_load_settings, _state(request)))


def _settings_answer(request: Request, ok: bool, message: str, extra: JsonObject | None = None) -> Response:
    state = _state(request)
    if _wants_json(request):
        return JSONResponse({"ok": ok, ("message" if ok else "error"): message, **(extra or {})}, 200 if ok else 400)
    response = RedirectResponse("/settings", status_code=303)
    _set_flash(response, state, "ok" if ok else "error", message)
    return response


def _turn_memory(state: WebState, enabled: bool) -> bool:
    service = state.service
    settings = service.settings.set_enabled(enabled)
    if settings.enabled and service.embedder is None and state.home is not None:
        # Memory was off when the page started, so no search model was attached: attach it now if it is installed.
        embedder = make_embedder(state.home, service, allow_download=False)
        if embedder is not None:
            service.use_embedder(embedder)
    return settings.enabled


async def set_memory(request: Request) -> Response:
    """POST /settings/memory: turn memory on or off for every project; the answer is the stored state."""
    state = _state(request)
    form = await request.form()
    _require_token(request, form)
    wanted = _form_text(form, "enabled")
    if wanted not in ("true", "false"):
        return _settings_answer(request, False, "Could not change memory: send enabled=true or enabled=false.")
    try:
        enabled = await _call(_turn_memory, state, wanted == "true")
    except OrcmemError as exc:
        return _settings_answer(
            request, False, f"Could not change memory. Your previous setting is still active. {exc}"
        )
    message = "Memory is on." if enabled else "Memory is off. Saved memories stay; agents no longer save or see them."
    return _settings_answer(request, True, message, {"enabled": enabled})


async def set_provider(request: Request) -> Response:
    """POST /settings/provider: choose who summarizes finished runs, and with which model."""
    state = _state(request)
    form = await request.form()
    _require_token(request, form)
    provider = _form_text(form, "provider")
    model = _form_text(form, "model").strip()
    if provider not in EXTRACTION_PROVIDERS:
        return _settings_answer(request, False, f"Could not change the provider: {provider!r} is not one of them.")

    def apply() -> JsonObject:
        # Only providers that run a model have a model setting; an empty field restores the default.
        chosen = model if provider in MODEL_HARNESS else None
        settings = state.service.settings.set_provider(provider, chosen)
        return {
            "provider": settings.provider,
            "models": settings.models,
            "sentence": describe_extraction(state.service, state.environ),
        }

    try:
        result = await _call(apply)
    except OrcmemError as exc:
        return _settings_answer(request, False, f"Could not change the provider. {exc}")
    return _settings_answer(request, True, f"Saved. {result['sentence']}", result)


async def set_api_key(request: Request) -> Response:
    """POST /settings/api-key: save the Anthropic API key to the OS keyring, or remove it; never echoed or logged."""
    form = await request.form()
    _require_token(request, form)
    remove = _form_text(form, "action") == "remove"
    key = "" if remove else _form_text(form, "api_key").strip()
    if not remove and not key:
        return _settings_answer(request, False, "Enter a key to save, or use Remove API key.")
    try:
        await _call(keystore.save_api_key, key)
    except KeyStoreError as exc:
        return _settings_answer(request, False, str(exc))  # the storage error text: never contains the key
    return _settings_answer(
        request, True, "Removed the API key." if remove else "Saved the API key in your OS keychain."
    )


async def revoke_grant(request: Request) -> Response:
    """POST /settings/grants/revoke: delete one "allow for this session / workspace" answer."""
    form = await request.form()
    _require_token(request, form)
    try:
        grant = await _call(_state(request).service.revoke_grant, int(_form_text(form, "grant")))
    except (OrcmemError, ValueError) as exc:
        return _settings_answer(request, False, f"Could not revoke the grant. {exc}")
    return _settings_answer(request, True, f"Revoked the {grant.scope} grant; the next write it covered asks first.")


# --- errors -------------------------------------------------------------------------------------------------------


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = getattr(exc, "detail", "") or "Something went wrong."
    if status == 404 and detail == "Not Found":
        detail = "There is no page at this address."
    if _wants_json(request):
        return JSONResponse({"ok": False, "error": detail}, status_code=status)
    if request.method != "GET":
        return Response(detail + "\n", status_code=status, media_type="text/plain")
    return _render(request, "error.html", {"status": status, "detail": detail}, status=status)


async def _server_error(request: Request, exc: Exception) -> Response:
    log.exception("the Memory page failed on %s %s", request.method, request.url.path)
    return HTMLResponse(
        "<!doctype html><title>orcmem: error</title><p>Something went wrong on this page. "
        "The terminal running <code>orcmem ui</code> shows what. <a href='/'>Back to memories</a></p>",
        status_code=500,
    )


EXCEPTION_HANDLERS: dict[Any, Any] = {HTTPException: _http_error, 500: _server_error}
