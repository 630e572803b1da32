"""The guard in front of the Memory page: loopback Host and Origin only, a per-launch key for reads and changes.

A page on another site can make the browser send requests to 127.0.0.1, and DNS rebinding can make one arrive
with a foreign Host header. So every request must name 127.0.0.1 or localhost (on our port) as its Host, any
Origin must be ours, reads need the launch cookie (other local users cannot browse your memories), and every change
must carry the launch token, which only a page this server rendered knows.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orcmem.host.loopback import LOOPBACK_NAMES, OwnOrigin

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
TOKEN_FIELD = "token"  # the hidden form field
TOKEN_HEADER = "x-orcmem-token"  # the header the page's script sends instead
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # "no-referrer" would make form posts send `Origin: null`
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
OPEN_PATHS = ("/static/",)  # stylesheet and script: nothing private

REFUSED_HOST = "Refused: this server only answers requests addressed to 127.0.0.1 or localhost."
REFUSED_ORIGIN = "Refused: the request came from another site."
NEEDS_KEY_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>orcmem: open the printed address</title><link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/app.css"></head>
<body><main class="page narrow"><h1>Open the address orcmem printed</h1>
<p>Your memories are private, so this page only opens from the address <code>orcmem ui</code> printed when it
started: it carries a key made for this launch. Copy that address into the browser, or stop
<code>orcmem ui</code> and run it again.</p></main></body></html>
"""


def tokens_match(given: str | None, token: str) -> bool:
    """Constant-time comparison of a presented token with the launch token."""
    return bool(given) and hmac.compare_digest(str(given).encode(), token.encode())


MAX_BODY_BYTES = 64 * 1024  # the largest form (a memory's 120-character title and 800-character body) is far smaller
TOO_LARGE = (
    f"Refused: a request to the Memory page carries at most {MAX_BODY_BYTES // 1024} KiB, with its length stated."
)


def _body_fits(headers: Headers) -> bool:
    """Whether a change request states its length and stays within MAX_BODY_BYTES (checked before any is read)."""
    lengths = headers.getlist("content-length")
    if len(lengths) != 1 or not lengths[0].strip().isdigit():
        return False
    return int(lengths[0]) <= MAX_BODY_BYTES


class Guard:
    """ASGI middleware: refuse foreign Host and Origin, require the launch cookie for reads, add security headers.

    The token check on changes happens in the endpoints, which read it from the form or the header.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        cookie_name: str,
        port: int | None,
        protect_reads: bool = True,
        hosts: Iterable[str] = LOOPBACK_NAMES,
    ) -> None:
        """Wrap `app`; `port` None accepts any port on a loopback name (tests), else only that port."""
        self.app = app
        self.token = token
        self.cookie_name = cookie_name
        self.protect_reads = protect_reads
        self.own = OwnOrigin(port, hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then pass it on with the security headers added to the response."""
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = Headers(scope=scope)
        # Exactly one Host, and at most one Origin: with two, this check and the app could each read another one.
        if not self.own.hosts_allowed(headers.getlist("host")):
            await _plain(send, 403, REFUSED_HOST)
            return
        if not self.own.origins_allowed(headers.getlist("origin")):
            await _plain(send, 403, REFUSED_ORIGIN)
            return
        method = scope["method"]
        if method not in SAFE_METHODS and not _body_fits(headers):
            await _plain(send, 413, TOO_LARGE)
            return
        fetch_site = headers.get("sec-fetch-site")
        if method not in SAFE_METHODS and fetch_site not in (None, "same-origin", "none"):
            await _plain(send, 403, REFUSED_ORIGIN)
            return
        path = scope["path"]
        if self.protect_reads and not path.startswith(OPEN_PATHS):
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
            if method == "GET" and TOKEN_FIELD in query and tokens_match(query[TOKEN_FIELD], self.token):
                # The printed address carries the token once: trade it for a cookie and drop it from the address.
                del query[TOKEN_FIELD]
                location = path + (f"?{urlencode(query)}" if query else "")
                await self._redirect_with_cookie(send, location)
                return
            if not tokens_match(_cookie(headers, self.cookie_name), self.token):
                await _send(send, 401, NEEDS_KEY_PAGE.encode(), b"text/html; charset=utf-8")
                return
        await self.app(scope, receive, _with_headers(send))

    async def _redirect_with_cookie(self, send: Send, location: str) -> None:
        cookie = SimpleCookie()
        cookie[self.cookie_name] = self.token
        morsel = cookie[self.cookie_name]
        morsel["path"] = "/"
        morsel["httponly"] = True
        morsel["samesite"] = "Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", morsel.OutputString().encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    (b"content-length", b"0"),
                    *SECURITY_HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _cookie(headers: Headers, name: str) -> str | None:
    jar = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is the same as none
        return None
    morsel = jar.get(name)
    return morsel.value if morsel else None


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            existing = {name.lower() for name, _ in message.get("headers", [])}
            message = {
                **message,
                "headers": [
                    *message.get("headers", []),
                    *(pair for pair in SECURITY_HEADERS if pair[0] not in existing),
                ],
            }
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    await _send(send, status, (text + "\n").encode(), b"text/plain; charset=utf-8")


async def _send(send: Send, status: int, body: bytes, content_type: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
