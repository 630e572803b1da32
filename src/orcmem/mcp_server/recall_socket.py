"""The warm server's recall socket: the session's `orcmem mcp` answers the prompt hook by meaning and by words.

One server per profile holds the socket at a time: the one holding an exclusive lock on `run/recall.lock` (the
lock goes with its process, however that ends). The others try again every CLAIM_RETRY_S, so when the holder's
session ends the next running server takes over. A request is a mode line and a JSON object `{prompt, cwd,
session_id}` (the agent's own hook payload has these keys); the answer is the hook's output after `ok`, or the JSON
object `{text, path, ms, shown, repeated, collapsed, cut}` (warm.ask_for_hook and warm.ask read them). A request
`{"search": {...}}` is `orcmem search` asking (mcp_server/warm_search.py): in the `search` mode its answer is
`ok`, the words-only notice line and what the command prints (warm.ask_search reads it without json). Clients
are served by one selector thread, never blocking on one: each has CLIENT_TIMEOUT_S for its whole request, then as
long to take its whole answer, and at most MAX_CLIENTS are open at once, so no client can starve the others.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from orcmem.agent_context.recall import own_prompt
from orcmem.agent_context.session_recall import choose_for_session, log_recall
from orcmem.hooks.handlers import hook_context, is_mcp_tool, prompt_event, shared_shape, tool_event
from orcmem.host.warm import (
    ANSWER_MAX_BYTES,
    HOOK_MODE,
    JSON_MODE,
    LOCK_NAME,
    OK,
    PASS,
    SEARCH_MODE,
    SOCKET_NAME,
    TOOL_MODE,
    WARM_PATH,
    WARM_TIMEOUT_S,
    WARM_WORDS_PATH,
    private_folder,
    run_dir,
    short_run_root,
)
from orcmem.host.workspace import Location, locate
from orcmem.mcp_server.warm_search import search_answer, search_request
from orcmem.models.constants import CHARS_PER_TOKEN, RECALL_CANDIDATES
from orcmem.models.data_shapes import JsonObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from orcmem.service.agent_tools import AgentTools

CLAIM_RETRY_S = 5.0  # how often a server without the socket checks whether its holder has gone
CLIENT_TIMEOUT_S = 2.0  # a client's whole request, then its whole answer, each within this, or it is dropped
MAX_CLIENTS = 64  # connections served at once (each a file handle); past it, the oldest is dropped
ACCEPT_WAKE_S = 0.5  # how often the serving loop looks whether it was closed
TOOL_CALL = "tool_call"  # a tool hook's payload, as the request of TOOL_MODE is passed to the answer
PASS_KEY = "pass"  # a reply's key: not a call memory answers, the hook runs its own path
REMEMBER = "remember"  # a reply's key (never sent) for what marks the memories as given to the session
ROOTS_CACHED = 256  # folders whose project root is remembered (a hook sends its session's folder every prompt)


def recall_answer(home: Path, provide: Callable[[], AgentTools]) -> Callable[[JsonObject], JsonObject]:
    """The function that answers one request with the session's service: recall for a prompt, or (`{"embed":
    true}`, from a command that wrote memories) embed every memory lacking a vector, in the background."""
    locations: dict[str, Location] = {}

    def location_of(cwd: str) -> Location:
        if cwd not in locations:
            if len(locations) >= ROOTS_CACHED:
                locations.clear()
            locations[cwd] = locate(cwd)
        return locations[cwd]

    def root_of(cwd: str) -> str:
        return location_of(cwd).canonical_root

    def answer(request: JsonObject) -> JsonObject:
        call = request.get(TOOL_CALL)
        if isinstance(call, dict):
            return tool_answer(call)
        if request.get("embed") is True:
            service = provide().memory
            service.vectors_changed()
            return {"text": "", "path": WARM_PATH, "embedding": service.pump is not None}
        if "search" in request:  # `orcmem search`: what the command prints, or nothing it could mistake for it
            asked = search_request(request)
            if asked is None:
                return {"text": "", "path": WARM_PATH, "error": "not a search this server answers"}
            return search_answer(provide().memory, asked, location_of)
        started = time.perf_counter()
        prompt, cwd, session = request.get("prompt"), request.get("cwd"), request.get("session_id")
        prompt = own_prompt(prompt) if isinstance(prompt, str) else None
        if not isinstance(prompt, str) or not prompt.strip():
            return {"text": "", "path": WARM_PATH}
        if not isinstance(cwd, str) or not os.path.isabs(cwd):  # never the server's own folder by default
            return {"text": "", "path": WARM_PATH}
        session_id = session if isinstance(session, str) else None
        service = provide().memory
        if not service.is_enabled():
            log_recall(str(home), WARM_PATH, (time.perf_counter() - started) * 1000, session_id, None)
            return {"text": "", "path": WARM_PATH, "off": True}
        path = WARM_PATH if service.model_ready() else WARM_WORDS_PATH
        rows = service.context.recall_rows(root_of(cwd), prompt, meaning=True, limit=RECALL_CANDIDATES)
        budget = service.context.session_budget() * CHARS_PER_TOKEN  # when the session's start set none
        selection, remember = choose_for_session(str(home), session_id, rows, service.clock(), budget)
        ms = (time.perf_counter() - started) * 1000
        log_recall(str(home), path, ms, session_id, selection)
        return {
            REMEMBER: remember,
            "text": selection.text,
            "path": path,
            "ms": round(ms, 3),
            "shown": len(selection.shown),
            "repeated": selection.repeated,
            "collapsed": selection.collapsed,
            "cut": selection.cut,
        }

    def tool_answer(call: JsonObject) -> JsonObject:
        """The memories a tool call concerns (`pass`: not a call for memory, such as orcmem's own tools)."""
        started = time.perf_counter()
        name, cwd, given = call.get("tool_name"), call.get("cwd"), call.get("tool_input")
        event = tool_event(call.get("hook_event_name"))
        if not isinstance(name, str) or is_mcp_tool(name):
            return {"text": "", "path": WARM_PATH, PASS_KEY: True}
        if not isinstance(cwd, str) or not os.path.isabs(cwd) or not isinstance(given, dict):
            return {"text": "", "path": WARM_PATH, "event": event}
        where = location_of(cwd)
        service = provide().memory
        rows = service.context.tool_call_rows(where.canonical_root, where.worktree_root, name, given, cwd)
        if not rows:
            return {"text": "", "path": WARM_PATH, "event": event}
        session = call.get("session_id")
        session_id = session if isinstance(session, str) else None
        budget = service.context.session_budget() * CHARS_PER_TOKEN  # a tool call's memories count as recall's do
        selection, remember = choose_for_session(str(home), session_id, rows, service.clock(), budget)
        ms = (time.perf_counter() - started) * 1000
        log_recall(str(home), f"tool, {WARM_PATH}", ms, session_id, selection)
        return {REMEMBER: remember, "text": selection.text, "path": WARM_PATH, "event": event}

    return answer


class RecallSocket:
    """Serves recall on the profile's socket while this process holds it; tries to take it over otherwise."""

    def __init__(self, home: Path, answer: Callable[[JsonObject], JsonObject]) -> None:
        """Nothing happens until `start`."""
        self.folder = run_dir(str(home))
        self.path = os.path.join(self.folder, SOCKET_NAME)
        self.answer = answer
        self.holding = threading.Event()  # set while this process serves the socket
        self._stop = threading.Event()
        self._lock_fd: int | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Claim the socket now or later, and serve it, in a background thread."""
        self._thread = threading.Thread(target=self._run, name="orcmem-recall-socket", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                claimed = self._claim()
            except OSError as exc:
                print(f"orcmem mcp: the recall socket is unavailable: {exc}", file=sys.stderr)
                claimed = False
            if claimed:
                try:
                    self._serve()
                finally:
                    self._release()  # whatever ended serving: another server (or this one, again) takes over
                continue
            self._stop.wait(CLAIM_RETRY_S)

    def _make_folder(self) -> None:
        if self.folder.startswith(short_run_root() + os.sep):
            os.makedirs(short_run_root(), mode=0o700, exist_ok=True)
        os.makedirs(self.folder, mode=0o700, exist_ok=True)
        if not private_folder(self.folder):
            raise OSError(f"{self.folder} is not a private folder of this user (0700): recall stays on words")

    def _claim(self) -> bool:
        """Take the lock and bind the socket; False while another server holds it."""
        self._make_folder()
        fd = os.open(os.path.join(self.folder, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._lock_fd = fd
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # left by a holder that was killed
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)  # the socket is created 0600, never briefly open to others
        try:
            listener.bind(self.path)
        finally:
            os.umask(old_umask)
        listener.listen(MAX_CLIENTS)
        self._listener = listener
        self.holding.set()
        return True

    def _serve(self) -> None:
        """Accept and serve clients until closed. One thread and a selector: every client is read and written
        without blocking, each phase under a deadline, so idle or trickling clients never hold up the others."""
        assert self._listener is not None
        listener = self._listener
        listener.setblocking(False)
        clients: dict[socket.socket, _Client] = {}
        with selectors.DefaultSelector() as selector:
            selector.register(listener, selectors.EVENT_READ)
            try:
                while not self._stop.is_set():
                    now = time.monotonic()
                    wait = min([ACCEPT_WAKE_S, *(client.deadline - now for client in clients.values())])
                    for key, _events in selector.select(max(wait, 0.0)):
                        if key.fileobj is listener:
                            if not self._accept(listener, selector, clients):
                                return
                        elif not self._step(key.data, selector):
                            _drop(key.data, selector, clients)
                    now = time.monotonic()
                    for client in [c for c in clients.values() if c.deadline <= now]:
                        _drop(client, selector, clients)  # idle, trickling, or not reading its answer
            finally:
                for client in list(clients.values()):
                    _drop(client, selector, clients)

    def _accept(
        self, listener: socket.socket, selector: selectors.BaseSelector, clients: dict[socket.socket, _Client]
    ) -> bool:
        """Take one waiting client (dropping the oldest when MAX_CLIENTS are open); False when accepting failed."""
        try:
            connection, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return True
        except OSError as exc:  # out of file handles, say: let go, and claim again after a pause
            print(f"orcmem mcp: the recall socket stopped accepting: {exc}", file=sys.stderr)
            self._stop.wait(CLAIM_RETRY_S)
            return False
        try:
            if not _same_user(connection):
                connection.close()
                return True
        except OSError:
            connection.close()
            return True
        connection.setblocking(False)
        if len(clients) >= MAX_CLIENTS:  # a flood of connections costs its oldest, never the server's handles
            _drop(min(clients.values(), key=lambda c: c.accepted), selector, clients)
        client = _Client(connection, time.monotonic())
        clients[connection] = client
        selector.register(connection, selectors.EVENT_READ, client)
        if not self._step(client, selector):  # the hook sends at once: its request is usually there already
            _drop(client, selector, clients)
        return True

    def _step(self, client: _Client, selector: selectors.BaseSelector) -> bool:
        """Read what the client sent, or write what is left of its answer; False when it is done or gone."""
        try:
            if client.answer is None:
                chunk = client.connection.recv(65536)
                while chunk and client.size + len(chunk) <= ANSWER_MAX_BYTES:  # until it waits (BlockingIOError)
                    client.chunks.append(chunk)
                    client.size += len(chunk)
                    chunk = client.connection.recv(65536)
                if not chunk and not client.chunks:
                    return False  # connected and left without asking: nothing to answer
                client.answer = self._answer(client, None if chunk else b"".join(client.chunks))
            with contextlib.suppress(BlockingIOError):  # its buffer is full: the rest once it reads some
                client.sent += client.connection.send(client.answer[client.sent :])
            if client.sent < len(client.answer):
                if not client.writing:  # wait until it can be written to, no longer until it sends
                    selector.modify(client.connection, selectors.EVENT_WRITE, client)
                    client.writing = True
                return True
            # The session keeps what it was given only if the client took the answer in time; a client that gave
            # up answered itself from words, and must not find these memories marked as given.
            if callable(client.remember) and time.monotonic() - client.accepted < WARM_TIMEOUT_S:
                client.remember()
            return False
        except (BlockingIOError, InterruptedError):
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False  # the hook stopped waiting (its 1 s passed on a busy machine) and answered from words
        except Exception as exc:  # what no parser takes, or a socket error: this client only
            print(f"orcmem mcp: a recall request failed: {type(exc).__name__}", file=sys.stderr)
            return False

    def _answer(self, client: _Client, data: bytes | None) -> bytes:
        """The answer to the whole request (None: too large); it then has its own deadline to be taken."""
        mode, request = _parse_request(data)
        try:
            if request is None:
                raise ValueError("the request is not one JSON object")
            reply = self.answer({TOOL_CALL: request} if mode == TOOL_MODE else request)
        except Exception as exc:  # the hook falls back to words; the server keeps serving
            message = f"{type(exc).__name__}: {exc}"
            print(f"orcmem mcp: recall failed: {message}", file=sys.stderr)
            reply = {"text": "", "path": WARM_PATH, "error": message}
        client.remember = reply.pop(REMEMBER, None)
        client.deadline = time.monotonic() + CLIENT_TIMEOUT_S
        return _encode(mode, reply, request)

    def _release(self) -> None:
        """Close the socket, remove it, and give up the lock (only the holder has them)."""
        self.holding.clear()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the lock
            self._lock_fd = None

    def close(self) -> None:
        """Stop serving and let another server take the socket over."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        if self._thread is None or not self._thread.is_alive():
            self._release()


def _same_user(connection: socket.socket) -> bool:
    """Whether the peer runs as this user (Linux tells; elsewhere the 0700 folder is the guard)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return bool(uid == os.getuid())


def _parse_request(data: bytes | None) -> tuple[bytes, JsonObject | None]:
    """(mode, request) of what the client sent before it shut its side; the request is None when it was too large
    (`data` None) or is not a JSON object."""
    if data is None:
        return HOOK_MODE, None
    mode, _, body = data.partition(b"\n")
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return mode + b"\n", None
    return mode + b"\n", shared_shape(request) if isinstance(request, dict) else None


class _Client:
    """One connection: what it sent so far, its answer once there is one, and when it is dropped."""

    def __init__(self, connection: socket.socket, accepted: float) -> None:
        """A client just accepted: it has CLIENT_TIMEOUT_S to send its whole request."""
        self.connection = connection
        self.accepted = accepted
        self.deadline = accepted + CLIENT_TIMEOUT_S
        self.chunks: list[bytes] = []
        self.size = 0
        self.answer: bytes | None = None
        self.sent = 0
        self.writing = False  # selected for writing (an answer larger than the socket's buffer)
        self.remember: Callable[[], None] | None = None


def _drop(client: _Client, selector: selectors.BaseSelector, clients: dict[socket.socket, _Client]) -> None:
    """Forget a client and close its connection."""
    clients.pop(client.connection, None)
    with contextlib.suppress(KeyError, ValueError, OSError):
        selector.unregister(client.connection)
    client.connection.close()


def _encode(mode: bytes, reply: JsonObject, request: JsonObject | None = None) -> bytes:
    """The answer as the mode asks: the hook's own output after `ok` (or the error), the JSON object, or for
    `orcmem search` `ok`, its notice line and what it prints; the hook's output names the event it answers."""
    if mode == JSON_MODE:
        return json.dumps(reply, ensure_ascii=False).encode("utf-8", "replace")
    if "error" in reply:
        return str(reply["error"]).encode("utf-8", "replace")[:500]
    if mode == SEARCH_MODE:
        if not isinstance(reply.get("output"), str):
            return b"not a search answer"
        notice, output = str(reply.get("notice") or "").replace("\n", " "), str(reply["output"])
        return OK + b"\n" + notice.encode("utf-8", "replace") + b"\n" + output.encode("utf-8", "replace")
    if reply.get(PASS_KEY):
        return PASS
    if mode == TOOL_MODE:
        return OK + b"\n" + hook_context(str(reply.get("event", "PreToolUse")), str(reply["text"])).encode("utf-8")
    event = prompt_event(request or {})
    return OK + b"\n" + hook_context(event, str(reply["text"])).encode("utf-8")
