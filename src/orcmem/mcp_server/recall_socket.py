"""The warm server's recall socket: the session's `orcmem mcp` answers the prompt hook by meaning and by words.

One server per profile holds the socket at a time: the one holding an exclusive lock on `run/recall.lock` (the
lock goes with its process, however that ends). The others try again every CLAIM_RETRY_S, so when the holder's
session ends the next running server takes over. A request is a mode line and a JSON object `{prompt, cwd,
session_id}` (the agent's own hook payload has these keys); the answer is the hook's output after `ok`, or the JSON
object `{text, path, ms, shown, repeated, collapsed, cut}` (warm.ask_for_hook and warm.ask read them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orcmem.hooks import hook_context
from orcmem.models.constants import RECALL_CANDIDATES
from orcmem.session_recall import choose_for_session, log_recall
from orcmem.warm import (
    ANSWER_MAX_BYTES,
    HOOK_MODE,
    JSON_MODE,
    LOCK_NAME,
    OK,
    SOCKET_NAME,
    WARM_PATH,
    WARM_TIMEOUT_S,
    WARM_WORDS_PATH,
    private_folder,
    run_dir,
    short_run_root,
)
from orcmem.workspace import locate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from orcmem.service.agent_tools import AgentTools

CLAIM_RETRY_S = 5.0  # how often a server without the socket checks whether its holder has gone
CLIENT_TIMEOUT_S = 2.0  # a client that sends nothing (or reads nothing) for this long is dropped
REMEMBER = "remember"  # a reply's key (never sent) for what marks the memories as given to the session
ROOTS_CACHED = 256  # folders whose project root is remembered (a hook sends its session's folder every prompt)


def recall_answer(home: Path, provide: Callable[[], AgentTools]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The function that answers one request with the session's service: recall for a prompt, or (`{"embed":
    true}`, from a command that wrote memories) embed every memory lacking a vector, in the background."""
    roots: dict[str, str] = {}

    def root_of(cwd: str) -> str:
        if cwd not in roots:
            if len(roots) >= ROOTS_CACHED:
                roots.clear()
            roots[cwd] = locate(cwd).canonical_root
        return roots[cwd]

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("embed") is True:
            service = provide().memory
            service.vectors_changed()
            return {"text": "", "path": WARM_PATH, "embedding": service.pump is not None}
        started = time.perf_counter()
        prompt, cwd, session = request.get("prompt"), request.get("cwd"), request.get("session_id")
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
        rows = service.recall_rows(root_of(cwd), prompt, meaning=True, limit=RECALL_CANDIDATES)
        selection, remember = choose_for_session(str(home), session_id, rows, service.clock())
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

    return answer


class RecallSocket:
    """Serves recall on the profile's socket while this process holds it; tries to take it over otherwise."""

    def __init__(self, home: Path, answer: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
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
        listener.listen(16)
        listener.settimeout(0.5)  # to notice `close`
        self._listener = listener
        self.holding.set()
        return True

    def _serve(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError as exc:  # out of file handles, say: let go, and claim again after a pause
                print(f"orcmem mcp: the recall socket stopped accepting: {exc}", file=sys.stderr)
                self._stop.wait(CLAIM_RETRY_S)
                return
            with connection:
                self._handle(connection, time.monotonic())

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

    def _handle(self, connection: socket.socket, accepted: float) -> None:
        """Answer one client; nothing it sends or does stops the server."""
        connection.settimeout(CLIENT_TIMEOUT_S)
        try:
            if not _same_user(connection):
                return
            mode, request = _read_request(connection)
            try:
                if request is None:
                    raise ValueError("the request is not one JSON object")
                reply = self.answer(request)
            except Exception as exc:  # the hook falls back to words; the server keeps serving
                message = f"{type(exc).__name__}: {exc}"
                print(f"orcmem mcp: recall failed: {message}", file=sys.stderr)
                reply = {"text": "", "path": WARM_PATH, "error": message}
            remember = reply.pop(REMEMBER, None)
            connection.sendall(_encode(mode, reply))
            # The session keeps what it was given only if the client took the answer in time; a client that gave
            # up answered itself from words, and must not find these memories marked as given.
            if callable(remember) and time.monotonic() - accepted < WARM_TIMEOUT_S:
                remember()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the hook stopped waiting (its 1 s passed on a busy machine) and answered from words: not an error
        except Exception as exc:  # the client timed out sending, or sent what no parser takes
            print(f"orcmem mcp: a recall request failed: {type(exc).__name__}", file=sys.stderr)

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


def _read_request(connection: socket.socket) -> tuple[bytes, dict[str, Any] | None]:
    """(mode, request): what the client sent before it shut its side; the request is None when it is too large
    or not a JSON object."""
    chunks: list[bytes] = []
    size = 0
    while chunk := connection.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > ANSWER_MAX_BYTES:
            return HOOK_MODE, None
    mode, _, body = b"".join(chunks).partition(b"\n")
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return mode + b"\n", None
    return mode + b"\n", request if isinstance(request, dict) else None


def _encode(mode: bytes, reply: dict[str, Any]) -> bytes:
    """The answer as the mode asks: the hook's own output after `ok` (or the error), or the JSON object."""
    if mode == JSON_MODE:
        return json.dumps(reply, ensure_ascii=False).encode("utf-8", "replace")
    if "error" in reply:
        return str(reply["error"]).encode("utf-8", "replace")[:500]
    return OK + b"\n" + hook_context("UserPromptSubmit", str(reply["text"])).encode("utf-8")
