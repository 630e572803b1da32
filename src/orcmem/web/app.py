"""The Memory page application: one MemoryService, server-rendered pages, forms that POST changes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from orcmem.app.runtime import open_service
from orcmem.rules.audit import LABELS as AUDIT_LABELS
from orcmem.rules.contradictions import history_line, stated_by
from orcmem.rules.freshness import possibly_stale
from orcmem.service.memory_service import MemoryService
from orcmem.text.wording import plural
from orcmem.web import routes, views
from orcmem.web.chart import share_bar
from orcmem.web.security import Guard
from orcmem.web.state import WebState

HERE = Path(__file__).parent
TEMPLATES_DIR = HERE / "templates"
STATIC_DIR = HERE / "static"


def _static_version() -> str:
    """A short hash of the static files, so a new release is never served from a stale browser cache."""
    digest = hashlib.sha256()
    for path in sorted(STATIC_DIR.iterdir()):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def _templates() -> Jinja2Templates:
    """Jinja2 with autoescaping on for every template, whatever its name."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        TYPE_LABELS=views.TYPE_LABELS,
        SOURCE_LABELS=views.SOURCE_LABELS,
        PROVENANCE_LABELS=views.PROVENANCE_LABELS,
        STATUS_LABELS=views.STATUS_LABELS,
        JOB_STATE_LABELS=views.JOB_STATE_LABELS,
        AUDIT_LABELS=AUDIT_LABELS,
        PROVIDER_OPTIONS=views.PROVIDER_OPTIONS,
        static_version=_static_version(),
        share_bar=share_bar,
        plural=plural,
        possibly_stale=possibly_stale,
        history_line=history_line,
        stated_by=stated_by,
    )
    env.filters.update(ago=views.relative_time, iso=views.iso_time, fulltime=views.full_time)
    return Jinja2Templates(env=env)


def cookie_name_for(port: int | None) -> str:
    """The launch cookie's name; cookies ignore ports, so two servers on one machine need two names."""
    return f"orcmem_{port}" if port else "orcmem"


def create_app(
    home: Path | None = None,
    *,
    service: MemoryService | None = None,
    token: str | None = None,
    port: int | None = None,
    environ: Mapping[str, str] | None = None,
    protect_reads: bool = True,
) -> Starlette:
    """The Memory page as an ASGI app.

    Args:
        home: the profile folder; the app opens (and at shutdown closes) its own service there unless `service`
            is given. Needed to load the search model when memory is turned on from the page.
        service: an open service to use instead (the caller closes it).
        token: the per-launch secret; a fresh random one when None. Every change must carry it, and reads need
            the cookie the printed address (`/?token=...`) sets.
        port: the port the server listens on; Host and Origin must then name it. None accepts any port on
            127.0.0.1 or localhost (tests).
        environ: where the Anthropic API key may also come from (ANTHROPIC_API_KEY) and which agent binaries to
            use; the process environment when None.
        protect_reads: require the launch cookie for pages too, not only for changes.

    Raises:
        StoreError: the profile database cannot be opened.
    """
    if service is None:
        if home is None:
            raise ValueError("create_app needs a profile folder (home) or an open service")
        service = open_service(home, allow_download=False)
        owns = True
    else:
        owns = False
    launch_token = token or secrets.token_urlsafe(32)
    cookie_name = cookie_name_for(port)
    state = WebState(
        service=service,
        token=launch_token,
        cookie_name=cookie_name,
        templates=_templates(),
        environ=dict(os.environ if environ is None else environ),
        home=home,
        owns_service=owns,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        state.close()

    app = Starlette(
        routes=[
            Route("/", routes.memories_page, methods=["GET"], name="memories"),
            Route("/overview", routes.overview_page, methods=["GET"], name="overview"),
            Route("/runs", routes.runs_page, methods=["GET"], name="runs"),
            Route("/settings", routes.settings_page, methods=["GET"], name="settings"),
            Route("/memories/{memory_id}/{action}", routes.memory_action, methods=["POST"], name="memory_action"),
            Route("/settings/memory", routes.set_memory, methods=["POST"], name="set_memory"),
            Route("/settings/provider", routes.set_provider, methods=["POST"], name="set_provider"),
            Route("/settings/api-key", routes.set_api_key, methods=["POST"], name="set_api_key"),
            Route("/settings/grants/revoke", routes.revoke_grant, methods=["POST"], name="revoke_grant"),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        ],
        middleware=[
            Middleware(Guard, token=launch_token, cookie_name=cookie_name, port=port, protect_reads=protect_reads)
        ],
        exception_handlers=routes.EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
    app.state.web = state
    return app
